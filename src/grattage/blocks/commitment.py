"""A block's commitment: salts for every unit, the Merkle tree over them, its root.

Building it for a 12 000 000-unit block means 12 000 000 salts, 12 000 000 leaf hashes and as
many node hashes: the work is split by chunks of :data:`~grattage.blocks.merkle.CHUNK_LEAVES`
units over worker processes (one per core), each returning its chunks' roots. Memory stays small:
only the chunk roots (32 bytes per 1 024 units) are kept; proofs recompute one chunk.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from grattage.blocks.hashchain import HashChain
from grattage.blocks.merkle import CHUNK_LEAVES, HASH_BYTES, NodeTree, audit_path, root_of
from grattage.blocks.progress import Progress, silent
from grattage.blocks.salts import SALT_PERSON

CHUNKS_PER_TASK = 128
TIER_BYTES = [bytes((tier,)) for tier in range(256)]

TierPrizes = tuple[int, ...] | None
"""The prize in cents of each tier index (the losing tier 0 first) for leaves of version 2,
which bind the prize; None for the leaves of version 1 (the tier index only)."""


def _tier_bytes(tier_prizes: TierPrizes) -> list[bytes]:
    """What follows the position in a leaf, per tier: ``tier (u8)`` in version 1,
    ``tier (u8) || prize_cents (u64 BE)`` in version 2."""
    if tier_prizes is None:
        return TIER_BYTES
    return [
        bytes((tier,)) + (tier_prizes[tier] if tier < len(tier_prizes) else 0).to_bytes(8, "big")
        for tier in range(256)
    ]


@dataclass(frozen=True)
class BlockTree:
    root: bytes
    chunk_roots: bytes
    """The roots of every chunk of units, concatenated (32 bytes each), in order."""
    size: int

    def chunk_root_list(self) -> list[bytes]:
        data = self.chunk_roots
        return [data[i : i + HASH_BYTES] for i in range(0, len(data), HASH_BYTES)]


def chunk_leaves(
    block_id: bytes,
    key: bytes,
    first_position: int,
    tiers: bytes,
    tier_prizes: TierPrizes = None,
) -> list[bytes]:
    """The leaf hashes of consecutive units starting at ``first_position``."""
    new_salt = hashlib.blake2b(key=key, digest_size=32, person=SALT_PERSON).copy
    new_leaf = hashlib.sha256(b"\x00" + block_id).copy
    tier_bytes = _tier_bytes(tier_prizes)
    leaves: list[bytes] = []
    append = leaves.append
    position = first_position
    for tier in tiers:  # the hot loop of a commitment: no helper calls, bound methods
        position_bytes = position.to_bytes(8, "big")
        salt = new_salt()
        salt.update(position_bytes)
        leaf = new_leaf()
        leaf.update(position_bytes + tier_bytes[tier] + salt.digest())
        append(leaf.digest())
        position += 1
    return leaves


Task = tuple[bytes, bytes, int, bytes, TierPrizes]


def _chunk_roots_task(args: Task) -> bytes:
    block_id, key, first_position, tiers, tier_prizes = args
    roots = []
    for start in range(0, len(tiers), CHUNK_LEAVES):
        leaves = chunk_leaves(
            block_id, key, first_position + start, tiers[start : start + CHUNK_LEAVES], tier_prizes
        )
        roots.append(root_of(leaves))
    return b"".join(roots)


def _tasks(block_id: bytes, key: bytes, tiers: bytes, tier_prizes: TierPrizes) -> Iterator[Task]:
    step = CHUNK_LEAVES * CHUNKS_PER_TASK
    for start in range(0, len(tiers), step):
        yield block_id, key, start, tiers[start : start + step], tier_prizes


def build_tree(
    block_id: bytes,
    key: bytes,
    tiers: bytes,
    progress: Progress = silent,
    workers: int | None = None,
    tier_prizes: TierPrizes = None,
) -> BlockTree:
    """Commit to every unit of a block (``tiers``: one byte per unit, in sale order); with
    ``tier_prizes``, each leaf binds its unit's prize too (leaf version 2)."""
    return _build(block_id, key, tiers, progress, workers, tier_prizes)[0]


def build_tree_and_chain(
    block_id: bytes,
    key: bytes,
    tiers: bytes,
    chain_seed: bytes | None,
    progress: Progress = silent,
    workers: int | None = None,
    tier_prizes: TierPrizes = None,
) -> tuple[BlockTree, HashChain | None]:
    """The tree of :func:`build_tree` and, from ``chain_seed``, the block's chain of
    ``len(tiers)`` links (its operator chain, docs/draw.md; None for a block that is not
    drawn: the tree alone) at once.

    The chain is sequential by nature (each link is the hash of the next): it is walked by one
    of the worker processes, its first task, while the others hash the tree (not in this
    process, whose threads feed the workers and would wait for the interpreter's lock), so a
    block's creation costs about the sum of the two divided by the cores — not the tree
    followed by the chain — and no process more than the tree's. Same tree and same chain as
    made apart, byte for byte.
    """
    if chain_seed is None:
        return _build(block_id, key, tiers, progress, workers, tier_prizes)[0], None
    length = len(tiers)
    tree, checkpoints = _build(block_id, key, tiers, progress, workers, tier_prizes, chain_seed)
    if checkpoints is None:  # one process: the tree, then the chain
        return tree, HashChain.create(length, chain_seed)[0]
    return tree, HashChain(chain_seed, length, checkpoints)


def _chain_checkpoints(length: int, seed: bytes) -> dict[int, bytes]:
    """A worker's task: walk a block's chain, send back its checkpoints."""
    return HashChain.create(length, seed)[0].checkpoints()


def _build(
    block_id: bytes,
    key: bytes,
    tiers: bytes,
    progress: Progress,
    workers: int | None,
    tier_prizes: TierPrizes,
    chain_seed: bytes | None = None,
) -> tuple[BlockTree, dict[int, bytes] | None]:
    """The tree and, given ``chain_seed`` and worker processes to use, the checkpoints of the
    chain one of them walked meanwhile (None when there were none: the caller walks it)."""
    size = len(tiers)
    checkpoints = None
    workers = workers or os.cpu_count() or 1
    step = CHUNK_LEAVES * CHUNKS_PER_TASK
    parts: list[bytes] = []
    progress("committing", 0, size)
    if workers == 1 or size <= step:
        for task in _tasks(block_id, key, tiers, tier_prizes):
            parts.append(_chunk_roots_task(task))
            progress("committing", min(task[2] + step, size), size)
    else:
        context = multiprocessing.get_context("spawn")
        with context.Pool(workers) as pool:  # on leaving, even by an error: workers stopped
            walk = None
            if chain_seed is not None:  # queued first: a worker takes it before any chunk
                walk = pool.apply_async(_chain_checkpoints, (size, chain_seed))
            results = pool.imap(_chunk_roots_task, _tasks(block_id, key, tiers, tier_prizes))
            for index, part in enumerate(results):
                parts.append(part)
                progress("committing", min((index + 1) * step, size), size)
            if walk is not None:
                checkpoints = walk.get()
    chunk_roots = b"".join(parts)
    tree = BlockTree(root=b"", chunk_roots=chunk_roots, size=size)
    root = root_of(tree.chunk_root_list())
    return BlockTree(root=root, chunk_roots=chunk_roots, size=size), checkpoints


@lru_cache(maxsize=8)
def chunk_level_tree(chunk_roots: bytes) -> NodeTree:
    """The chunk-level tree of a block, kept for the next proofs of the same block."""
    tree = NodeTree(
        [chunk_roots[i : i + HASH_BYTES] for i in range(0, len(chunk_roots), HASH_BYTES)]
    )
    tree.root()
    return tree


def unit_audit_path(
    block_id: bytes,
    key: bytes,
    position: int,
    chunk_tiers: bytes,
    chunk_roots: bytes,
    tier_prizes: TierPrizes = None,
) -> list[bytes]:
    """The RFC 6962 audit path of one unit: within its chunk, then from the chunk to the root.

    ``chunk_tiers`` are the tiers of the unit's whole chunk (its 1 024 units, fewer for the last);
    ``chunk_roots`` is :attr:`BlockTree.chunk_roots`.
    """
    chunk, offset = divmod(position, CHUNK_LEAVES)
    leaves = chunk_leaves(block_id, key, chunk * CHUNK_LEAVES, chunk_tiers, tier_prizes)
    return audit_path(offset, leaves) + chunk_level_tree(chunk_roots).path(chunk)
