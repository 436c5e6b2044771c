"""Fairness benchmarks (issue 6): commitment of a 12 000 000-unit Cash block (salts + tree),
one ticket proof, and the full verification of the block's disclosure."""

from __future__ import annotations

import json
import resource
import statistics
import time
import uuid

from grattage.blocks.commitment import build_tree, unit_audit_path
from grattage.blocks.merkle import CHUNK_LEAVES
from grattage.blocks.proofs import (
    make_commitment,
    make_disclosure,
    make_ticket_proof,
    verify_disclosure,
    verify_ticket_proof,
)
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import design_unit, new_block_key
from grattage.blocks.shuffle import secure_generator, shuffled_tiers
from grattage.games import find_game


def main() -> None:
    game = find_game("cash")
    tiers = bytes(shuffled_tiers(game.table, secure_generator()))
    block_id, key = uuid.uuid4().bytes, new_block_key()
    start = time.perf_counter()
    tree = build_tree(block_id, key, tiers)
    commit_seconds = time.perf_counter() - start
    peak_mb = (
        max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        )
        / 1024
    )
    commitment = make_commitment(block_id, game, tree.root, len(tiers), "2026-11-30T00:00:00Z")
    chunk_roots = tree.chunk_roots

    proof_times, check_times = [], []
    for position in range(5, len(tiers), len(tiers) // 50):
        begin = time.perf_counter()
        chunk = position // CHUNK_LEAVES
        chunk_tiers = tiers[chunk * CHUNK_LEAVES : (chunk + 1) * CHUNK_LEAVES]
        path = unit_audit_path(block_id, key, position, chunk_tiers, chunk_roots)
        tier = tiers[position]
        prize = game.table.prize_of_tier(tier)
        salt = unit_salt(key, position)
        ticket = design_unit(game, salt, prize, None)
        proof = make_ticket_proof(commitment, position, tier, prize, salt, None, path, ticket)
        proof_times.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        verify_ticket_proof(json.loads(json.dumps(proof)))
        check_times.append(time.perf_counter() - begin)

    disclosure = make_disclosure(commitment, key, tiers)
    start = time.perf_counter()
    verify_disclosure(disclosure)
    verify_seconds = time.perf_counter() - start

    print("Provably fair blocks, 12 000 000-unit Cash block")
    print(f"  commitment (salts + tree)   {commit_seconds:7.2f} s   (target ≤ 20 s)")
    print(f"  peak memory                 {peak_mb:7.1f} MB  (target ≤ 1 GB)")
    print(
        f"  one proof                   {statistics.median(proof_times) * 1000:7.2f} ms median, "
        f"{max(proof_times) * 1000:.2f} ms max (target ≤ 5 ms); offline check "
        f"{statistics.median(check_times) * 1000:.2f} ms"
    )
    print(f"  full disclosure verified    {verify_seconds:7.2f} s   (target ≤ 30 s)")


if __name__ == "__main__":
    main()
