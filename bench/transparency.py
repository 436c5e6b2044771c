"""Transparency-log benchmarks (issue 14): what a sale's receipt costs the seller, how fast a
monitor catches up with a log of many sales, and what an inclusion proof costs.

``GRATTAGE_BENCH_LOG_ENTRIES`` sets the log's size (default 1 000 000, the issue's figure).
"""

from __future__ import annotations

import os
import statistics
import time

from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.proofs_v2 import make_receipt
from grattage.blocks.signing import Signer, canonical_json
from grattage.blocks.tlog import Frontier, entry_leaf_hash, inclusion_path, verify_inclusion

TIME = "2026-12-01T12:00:00.000000Z"
BLOCK_ID = bytes(range(16))


def _commitment(signer: Signer, size: int) -> dict[str, object]:
    return signer.sign_document(
        "commitment",
        {
            "format": "grattage-commitment/2",
            "block_id": BLOCK_ID.hex(),
            "game": "cash",
            "rules_version": "cash/2009-03-16/design-v2",
            "price_cents": 500,
            "size": size,
            "table": {"block_size": size, "tiers": [{"prize_cents": 1000, "count": 1}]},
            "table_sha256": "00" * 32,
            "leaf": "grattage-unit/2",
            "root": "11" * 32,
            "created_at": TIME,
            "key_id": signer.key_id,
        },
    )


def main() -> None:
    count = int(os.environ.get("GRATTAGE_BENCH_LOG_ENTRIES", "1000000"))
    signer = Signer(bytes(range(32)))
    entries: list[dict[str, object]] = [
        {
            "v": 1,
            "kind": "block.commitment",
            "time": TIME,
            "commitment": _commitment(signer, count),
        },
        {
            "v": 1,
            "kind": "block.opened",
            "time": TIME,
            "block_id": BLOCK_ID.hex(),
            "commitment_index": 0,
        },
    ]
    begin = time.process_time()
    for sale in range(count):
        receipt = make_receipt(
            signer,
            ticket_id=sale + 1,
            player="ab" * 16,
            block_id=BLOCK_ID,
            sequence=sale,
            position=sale,
            stake_cents=500,
            time=TIME,
            commitment_index=0,
        )
        entry = {"v": 1, "kind": "sale.receipt", "time": TIME, "receipt": receipt}
        canonical_json(entry)  # what the sale writes to the queue
        entries.append(entry)
    receipt_us = (time.process_time() - begin) / count * 1e6

    nodes: dict[tuple[int, int], bytes] = {}
    frontier = Frontier()
    begin = time.process_time()
    for entry in entries:
        for level, index, digest in frontier.append(entry_leaf_hash(canonical_json(entry))):
            nodes[(level, index)] = digest
    sequencer_us = (time.process_time() - begin) / len(entries) * 1e6
    head = signer.sign_tree_head(frontier.size, 1, frontier.root())

    auditor = LogAuditor(signer.public_key)
    begin, begin_cpu = time.perf_counter(), time.process_time()
    for index, entry in enumerate(entries):
        auditor.feed(index, entry)
    auditor.accept_head(head)
    catch_up = time.perf_counter() - begin
    catch_up_cpu = time.process_time() - begin_cpu

    proof_times = []
    for index in range(5, len(entries), max(1, len(entries) // 200)):
        begin = time.perf_counter()
        path = inclusion_path(lambda lv, ix: nodes[(lv, ix)], index, head.tree_size)
        leaf = entry_leaf_hash(canonical_json(entries[index]))
        assert verify_inclusion(leaf, index, head.tree_size, path, head.root_hash)
        proof_times.append(time.perf_counter() - begin)

    print(f"Transparency log, {len(entries):,} entries ({count:,} sales of one block)")
    print(f"  a sale's signed receipt and entry  {receipt_us:7.1f} µs CPU")
    print(f"  sequencer, per entry (leaf, nodes) {sequencer_us:7.1f} µs CPU")
    print(
        f"  monitor catch-up (every signature)  {catch_up:7.1f} s, {catch_up_cpu:.1f} s CPU "
        f"({len(entries) / catch_up_cpu:,.0f} entries per CPU second)"
    )
    print(
        f"  inclusion proof + check            {statistics.median(proof_times) * 1000:7.3f} ms "
        "median (in memory; the server reads its O(log n) nodes from the database)"
    )


if __name__ == "__main__":
    main()
