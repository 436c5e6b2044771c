"""The transparency log's Merkle tree, as RFC 9162 §2.1 defines it — standard library only.

The log is a list of entries ``D[0..n)``, each entry a byte string (its canonical JSON, see
docs/fairness.md). Its tree is the one of RFC 9162 (and RFC 6962, which has the same hashes):

* ``MTH({}) = SHA-256()``; ``MTH({d}) = SHA-256(0x00 || d)`` (a *leaf*);
* ``MTH(D[n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n]))``, ``k`` the largest power of two
  smaller than ``n``.

A log keeps the hash of every *perfect* subtree it has completed — the node at ``level`` and
``index`` covers the leaves ``[index·2^level, (index+1)·2^level)`` — so that any subtree hash,
audit path (§2.1.3.1) or consistency proof (§2.1.4.1) needs only O(log² n) of them. The
functions here take that store as a callable ``node(level, index)``; the verifiers take
nothing but hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from grattage.blocks.merkle import largest_power_of_two_below, node_hash, root_from_path

NodeSource = Callable[[int, int], bytes]
"""``node(level, index)``: the hash of the perfect subtree over leaves
``[index << level, (index + 1) << level)`` (level 0 is the leaf hash)."""

EMPTY_ROOT = hashlib.sha256(b"").digest()


def entry_leaf_hash(entry: bytes) -> bytes:
    """RFC 9162 §2.1.1: ``SHA-256(0x00 || entry)``."""
    return hashlib.sha256(b"\x00" + entry).digest()


def subtree_hash(node: NodeSource, start: int, end: int) -> bytes:
    """MTH(D[start:end]) for a range that is a subtree of some tree of the log."""
    count = end - start
    if count <= 0:
        return EMPTY_ROOT
    if count & (count - 1) == 0 and start % count == 0:
        return node(count.bit_length() - 1, start // count)
    k = largest_power_of_two_below(count)
    return node_hash(subtree_hash(node, start, start + k), subtree_hash(node, start + k, end))


def inclusion_path(node: NodeSource, index: int, size: int) -> list[bytes]:
    """RFC 9162 §2.1.3.1 ``PATH(m, D[n])``: the audit path of leaf ``index`` in the tree of
    ``size`` leaves, from the leaf's sibling up."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    path: list[bytes] = []
    start, end = 0, size
    while end - start > 1:
        k = largest_power_of_two_below(end - start)
        if index < start + k:
            path.append(subtree_hash(node, start + k, end))
            end = start + k
        else:
            path.append(subtree_hash(node, start, start + k))
            start = start + k
    path.reverse()
    return path


def consistency_path(node: NodeSource, first: int, second: int) -> list[bytes]:
    """RFC 9162 §2.1.4.1 ``PROOF(m, D[n]) = SUBPROOF(m, D[n], true)``."""
    if not 0 < first <= second:
        raise ValueError(f"no consistency proof from {first} to {second}")
    proof: list[bytes] = []
    m, start, end, whole = first, 0, second, True
    while True:
        count = end - start
        if m == count:
            if not whole:
                proof.append(subtree_hash(node, start, end))
            break
        k = largest_power_of_two_below(count)
        if m <= k:
            proof.append(subtree_hash(node, start + k, end))
            end = start + k
        else:
            proof.append(subtree_hash(node, start, start + k))
            start, m, whole = start + k, m - k, False
    proof.reverse()
    return proof


def verify_inclusion(
    leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 §2.1.3.2."""
    return root_from_path(index, size, leaf, path) == root


def verify_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 §2.1.4.2: does the tree of ``second`` leaves extend the tree of ``first``?"""
    if not 0 <= first <= second:
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        return not proof  # every tree extends the empty one
    path = list(proof)
    if first & (first - 1) == 0:  # first is a power of two: its root starts the path
        path.insert(0, first_root)
    if not path:
        return False
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == first_root and sr == second_root


@dataclass
class Frontier:
    """The right edge of the log's tree: the roots of its perfect subtrees, largest first (one
    per set bit of ``size``). Appending a leaf returns the perfect nodes it completes, which a
    log stores so that later paths and proofs can be answered."""

    size: int = 0
    peaks: list[bytes] = field(default_factory=list)

    @classmethod
    def of(cls, node: NodeSource, size: int) -> Frontier:
        peaks, start = [], 0
        for level in range(size.bit_length() - 1, -1, -1):
            if size >> level & 1:
                peaks.append(node(level, start >> level))
                start += 1 << level
        return cls(size=size, peaks=peaks)

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add one leaf; the completed nodes as ``(level, index, hash)``, the leaf first."""
        created = [(0, self.size, leaf)]
        current, level, index = leaf, 0, self.size
        while self.size >> level & 1:
            current = node_hash(self.peaks.pop(), current)
            level, index = level + 1, index >> 1
            created.append((level, index, current))
        self.peaks.append(current)
        self.size += 1
        return created

    def root(self) -> bytes:
        if not self.peaks:
            return EMPTY_ROOT
        current = self.peaks[-1]
        for peak in reversed(self.peaks[:-1]):
            current = node_hash(peak, current)
        return current
