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

from grattage.blocks.merkle import CHUNK_LEAVES, HASH_BYTES, NodeTree, audit_path, root_of
from grattage.blocks.progress import Progress, silent
from grattage.blocks.salts import SALT_PERSON

CHUNKS_PER_TASK = 128
TIER_BYTES = [bytes((tier,)) for tier in range(256)]


@dataclass(frozen=True)
class BlockTree:
    root: bytes
    chunk_roots: bytes
    """The roots of every chunk of units, concatenated (32 bytes each), in order."""
    size: int

    def chunk_root_list(self) -> list[bytes]:
        data = self.chunk_roots
        return [data[i : i + HASH_BYTES] for i in range(0, len(data), HASH_BYTES)]


def chunk_leaves(block_id: bytes, key: bytes, first_position: int, tiers: bytes) -> list[bytes]:
    """The leaf hashes of consecutive units starting at ``first_position``."""
    new_salt = hashlib.blake2b(key=key, digest_size=32, person=SALT_PERSON).copy
    new_leaf = hashlib.sha256(b"\x00" + block_id).copy
    leaves: list[bytes] = []
    append = leaves.append
    position = first_position
    for tier in tiers:  # the hot loop of a commitment: no helper calls, bound methods
        position_bytes = position.to_bytes(8, "big")
        salt = new_salt()
        salt.update(position_bytes)
        leaf = new_leaf()
        leaf.update(position_bytes + TIER_BYTES[tier] + salt.digest())
        append(leaf.digest())
        position += 1
    return leaves


def _chunk_roots_task(args: tuple[bytes, bytes, int, bytes]) -> bytes:
    block_id, key, first_position, tiers = args
    roots = []
    for start in range(0, len(tiers), CHUNK_LEAVES):
        leaves = chunk_leaves(
            block_id, key, first_position + start, tiers[start : start + CHUNK_LEAVES]
        )
        roots.append(root_of(leaves))
    return b"".join(roots)


def _tasks(block_id: bytes, key: bytes, tiers: bytes) -> Iterator[tuple[bytes, bytes, int, bytes]]:
    step = CHUNK_LEAVES * CHUNKS_PER_TASK
    for start in range(0, len(tiers), step):
        yield block_id, key, start, tiers[start : start + step]


def build_tree(
    block_id: bytes,
    key: bytes,
    tiers: bytes,
    progress: Progress = silent,
    workers: int | None = None,
) -> BlockTree:
    """Commit to every unit of a block (``tiers``: one byte per unit, in sale order)."""
    size = len(tiers)
    workers = workers or os.cpu_count() or 1
    step = CHUNK_LEAVES * CHUNKS_PER_TASK
    parts: list[bytes] = []
    progress("committing", 0, size)
    if workers == 1 or size <= step:
        for task in _tasks(block_id, key, tiers):
            parts.append(_chunk_roots_task(task))
            progress("committing", min(task[2] + step, size), size)
    else:
        context = multiprocessing.get_context("spawn")
        with context.Pool(workers) as pool:
            for index, part in enumerate(
                pool.imap(_chunk_roots_task, _tasks(block_id, key, tiers))
            ):
                parts.append(part)
                progress("committing", min((index + 1) * step, size), size)
    chunk_roots = b"".join(parts)
    tree = BlockTree(root=b"", chunk_roots=chunk_roots, size=size)
    return BlockTree(root=root_of(tree.chunk_root_list()), chunk_roots=chunk_roots, size=size)


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
) -> list[bytes]:
    """The RFC 6962 audit path of one unit: within its chunk, then from the chunk to the root.

    ``chunk_tiers`` are the tiers of the unit's whole chunk (its 1 024 units, fewer for the last);
    ``chunk_roots`` is :attr:`BlockTree.chunk_roots`.
    """
    chunk, offset = divmod(position, CHUNK_LEAVES)
    leaves = chunk_leaves(block_id, key, chunk * CHUNK_LEAVES, chunk_tiers)
    return audit_path(offset, leaves) + chunk_level_tree(chunk_roots).path(chunk)
