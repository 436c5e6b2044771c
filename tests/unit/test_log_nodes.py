"""The log's nodes a proof needs are read in one statement, not one statement a node."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from grattage.blocks.tlog import Frontier, consistency_path, entry_leaf_hash, subtree_hash
from grattage.service.log_nodes import LogNodes


class _CountingStore:
    """The nodes of a tree of ``size`` entries, counting the reads asked of it."""

    def __init__(self, size: int) -> None:
        self.stored: dict[tuple[int, int], bytes] = {}
        frontier = Frontier.of(lambda level, index: b"", 0)
        for index in range(size):
            leaf = entry_leaf_hash(str(index).encode())
            self.stored[(0, index)] = leaf
            for level, node_index, digest in frontier.append(leaf):
                self.stored[(level, node_index)] = digest
        self.reads = 0

    def nodes(self, wanted: Iterable[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        self.reads += 1
        return {key: self.stored[key] for key in wanted}


def _nodes(store: _CountingStore) -> LogNodes:
    return LogNodes(cast(Any, store))


def test_a_consistency_proof_reads_its_nodes_in_one_read_and_is_the_same_proof() -> None:
    store = _CountingStore(1000)
    expected = consistency_path(_nodes(_CountingStore(1000)), 333, 1000)
    nodes = _nodes(store)
    nodes.prefetch_for(lambda source: consistency_path(source, 333, 1000))
    assert consistency_path(nodes, 333, 1000) == expected
    assert store.reads == 1


def test_a_root_of_a_size_reads_its_nodes_in_one_read_and_is_the_same_root() -> None:
    store = _CountingStore(1000)
    expected = subtree_hash(_nodes(_CountingStore(1000)), 0, 777)
    nodes = _nodes(store)
    nodes.prefetch_for(lambda source: subtree_hash(source, 0, 777))
    assert subtree_hash(nodes, 0, 777) == expected
    assert store.reads == 1
