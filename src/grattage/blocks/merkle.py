"""RFC 6962 (Certificate Transparency) Merkle trees over a block's units — standard library only.

* leaf hash ``SHA-256(0x00 || block_id (16 bytes) || position (u64 BE) || tier (u8) || salt (32))``
* node hash ``SHA-256(0x01 || left || right)``
* the tree over ``n`` leaves splits at the largest power of two smaller than ``n`` (RFC 6962
  §2.1), so any aligned run of ``2**k`` leaves is a node: a block is committed chunk by chunk
  (:data:`CHUNK_LEAVES` units) and the chunk roots are kept to answer proofs quickly.

Anyone can re-implement these few lines; ``grattage.blocks.proofs`` uses them to check a
ticket's proof offline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
CHUNK_LEAVES = 1024
HASH_BYTES = 32

_sha256 = hashlib.sha256


def leaf_hash(block_id: bytes, position: int, tier: int, salt: bytes) -> bytes:
    return _sha256(
        LEAF_PREFIX + block_id + position.to_bytes(8, "big") + bytes((tier,)) + salt
    ).digest()


def unit_leaf_v2(block_id: bytes, position: int, tier: int, prize_cents: int, salt: bytes) -> bytes:
    """Leaf version 2: ``SHA-256(0x00 || block_id || position (u64 BE) || tier (u8) ||
    prize_cents (u64 BE) || salt)`` — the root then fixes every unit's amount, not only its tier."""
    return _sha256(
        LEAF_PREFIX
        + block_id
        + position.to_bytes(8, "big")
        + bytes((tier,))
        + prize_cents.to_bytes(8, "big")
        + salt
    ).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return _sha256(NODE_PREFIX + left + right).digest()


def largest_power_of_two_below(n: int) -> int:
    """The split point ``k`` of RFC 6962: the largest power of two strictly less than ``n``."""
    return 1 << ((n - 1).bit_length() - 1)


def root_of(hashes: Sequence[bytes]) -> bytes:
    """MTH over already-hashed leaves (or over aligned subtree roots)."""
    if not hashes:
        return _sha256(b"").digest()
    if len(hashes) & (len(hashes) - 1) == 0:
        return _perfect_root(list(hashes))
    k = largest_power_of_two_below(len(hashes))
    return node_hash(root_of(hashes[:k]), root_of(hashes[k:]))


def _perfect_root(level: list[bytes]) -> bytes:
    sha256, prefix = _sha256, NODE_PREFIX
    while len(level) > 1:
        level = [sha256(prefix + level[i] + level[i + 1]).digest() for i in range(0, len(level), 2)]
    return level[0]


def audit_path(index: int, hashes: Sequence[bytes]) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]): the siblings from the leaf ``index`` up to the root."""
    if len(hashes) <= 1:
        return []
    k = largest_power_of_two_below(len(hashes))
    if index < k:
        return [*audit_path(index, hashes[:k]), root_of(hashes[k:])]
    return [*audit_path(index - k, hashes[k:]), root_of(hashes[:k])]


def root_from_path(index: int, size: int, leaf: bytes, path: Sequence[bytes]) -> bytes | None:
    """The root that ``leaf`` at ``index`` with ``path`` leads to (RFC 9162 §2.1.3.2), or None
    when the path cannot belong to a tree of ``size`` leaves."""
    if not 0 <= index < size:
        return None
    fn, sn, result = index, size - 1, leaf
    for sibling in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            result = node_hash(sibling, result)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            result = node_hash(result, sibling)
        fn >>= 1
        sn >>= 1
    return result if sn == 0 else None


class NodeTree:
    """An RFC 6962 tree over already-hashed nodes whose subtree roots are remembered, so that
    after the first root every audit path costs a few look-ups (a block's chunk-level tree)."""

    def __init__(self, hashes: Sequence[bytes]) -> None:
        self.hashes = list(hashes)
        self._roots: dict[tuple[int, int], bytes] = {}

    def root(self, start: int = 0, end: int | None = None) -> bytes:
        end = len(self.hashes) if end is None else end
        if end - start == 1:
            return self.hashes[start]
        remembered = self._roots.get((start, end))
        if remembered is None:
            k = largest_power_of_two_below(end - start)
            remembered = node_hash(self.root(start, start + k), self.root(start + k, end))
            self._roots[(start, end)] = remembered
        return remembered

    def path(self, index: int, start: int = 0, end: int | None = None) -> list[bytes]:
        end = len(self.hashes) if end is None else end
        if end - start <= 1:
            return []
        k = largest_power_of_two_below(end - start)
        if index < k:
            return [*self.path(index, start, start + k), self.root(start + k, end)]
        return [*self.path(index - k, start + k, end), self.root(start, start + k)]
