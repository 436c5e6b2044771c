"""The log's tree is RFC 9162's: the reference recursion of the RFC, the certificate-transparency
test vectors, and every inclusion and consistency proof of small trees checked both ways."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grattage.blocks.merkle import largest_power_of_two_below, node_hash
from grattage.blocks.tlog import (
    EMPTY_ROOT,
    Frontier,
    consistency_path,
    entry_leaf_hash,
    inclusion_path,
    subtree_hash,
    verify_consistency,
    verify_inclusion,
)

# The leaves of certificate-transparency's merkle_tree_test (and RFC 9162's test vectors).
CT_LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    b"\x50\x51\x52\x53\x54\x55\x56\x57",
    b"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
]
CT_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def reference_mth(leaves: list[bytes]) -> bytes:
    """RFC 9162 §2.1.1, written as the RFC writes it."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = largest_power_of_two_below(len(leaves))
    return node_hash(reference_mth(leaves[:k]), reference_mth(leaves[k:]))


def reference_path(m: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) <= 1:
        return []
    k = largest_power_of_two_below(len(leaves))
    if m < k:
        return [*reference_path(m, leaves[:k]), reference_mth(leaves[k:])]
    return [*reference_path(m - k, leaves[k:]), reference_mth(leaves[:k])]


def reference_subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [reference_mth(leaves)]
    k = largest_power_of_two_below(n)
    if m <= k:
        return [*reference_subproof(m, leaves[:k], whole), reference_mth(leaves[k:])]
    return [*reference_subproof(m - k, leaves[k:], False), reference_mth(leaves[:k])]


class StoredTree:
    """A log's node store, filled by the frontier as leaves are appended."""

    def __init__(self, entries: list[bytes]) -> None:
        self.nodes: dict[tuple[int, int], bytes] = {}
        self.frontier = Frontier()
        self.roots = [EMPTY_ROOT]
        for entry in entries:
            for level, index, digest in self.frontier.append(entry_leaf_hash(entry)):
                self.nodes[(level, index)] = digest
            self.roots.append(self.frontier.root())

    def node(self, level: int, index: int) -> bytes:
        return self.nodes[(level, index)]


def test_the_tree_gives_certificate_transparencys_roots() -> None:
    tree = StoredTree(CT_LEAVES)
    assert [root.hex() for root in tree.roots[1:]] == CT_ROOTS
    assert tree.roots[0] == EMPTY_ROOT


def test_a_frontier_rebuilt_from_the_store_has_the_same_root() -> None:
    tree = StoredTree([bytes([i]) * i for i in range(37)])
    for size in range(38):
        assert Frontier.of(tree.node, size).root() == tree.roots[size]


@pytest.mark.parametrize("size", range(1, 34))
def test_every_inclusion_path_is_the_rfcs_and_verifies(size: int) -> None:
    entries = [i.to_bytes(2, "big") for i in range(size)]
    tree = StoredTree(entries)
    for index in range(size):
        path = inclusion_path(tree.node, index, size)
        assert path == reference_path(index, entries)
        leaf = entry_leaf_hash(entries[index])
        assert verify_inclusion(leaf, index, size, path, tree.roots[size])
        assert not verify_inclusion(leaf, index, size, path, tree.roots[size - 1])
        if path:
            assert not verify_inclusion(leaf, index, size, path[:-1], tree.roots[size])


@pytest.mark.parametrize("second", range(1, 34))
def test_every_consistency_proof_is_the_rfcs_and_verifies(second: int) -> None:
    entries = [i.to_bytes(2, "big") for i in range(second)]
    tree = StoredTree(entries)
    for first in range(1, second + 1):
        proof = consistency_path(tree.node, first, second)
        assert proof == reference_subproof(first, entries, True)
        assert verify_consistency(first, second, tree.roots[first], tree.roots[second], proof)


def test_a_forked_log_fails_consistency() -> None:
    honest = StoredTree([b"a", b"b", b"c", b"d", b"e"])
    forked = StoredTree([b"a", b"b", b"X", b"d", b"e", b"f"])
    proof = consistency_path(forked.node, 5, 6)
    assert not verify_consistency(5, 6, honest.roots[5], forked.roots[6], proof)
    assert verify_consistency(5, 6, forked.roots[5], forked.roots[6], proof)


@given(st.integers(1, 300), st.data())
def test_consistency_and_inclusion_hold_for_any_sizes(second: int, data: st.DataObject) -> None:
    first = data.draw(st.integers(1, second))
    index = data.draw(st.integers(0, second - 1))
    entries = [i.to_bytes(2, "big") for i in range(second)]
    tree = StoredTree(entries)
    proof = consistency_path(tree.node, first, second)
    assert verify_consistency(first, second, tree.roots[first], tree.roots[second], proof)
    if proof:
        tampered = [bytes(32), *proof[1:]]
        assert not verify_consistency(
            first, second, tree.roots[first], tree.roots[second], tampered
        )
    path = inclusion_path(tree.node, index, second)
    assert verify_inclusion(
        entry_leaf_hash(entries[index]), index, second, path, tree.roots[second]
    )


def test_subtree_hash_of_any_range_is_the_reference() -> None:
    entries = [bytes([i]) for i in range(20)]
    tree = StoredTree(entries)
    assert subtree_hash(tree.node, 0, 20) == reference_mth(entries)
    assert subtree_hash(tree.node, 16, 20) == reference_mth(entries[16:20])
