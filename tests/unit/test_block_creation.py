"""Creating a block fast changes no byte: the tree and the operator chain made together (the
chain walked by one worker process while the others hash the tree) are those made apart, and the golden
vectors still hold (tests/unit/test_fairness_vectors.py, test_proofs*.py)."""

from __future__ import annotations

import hashlib

import pytest

from grattage.blocks.commitment import CHUNKS_PER_TASK, build_tree, build_tree_and_chain
from grattage.blocks.hashchain import HashChain
from grattage.blocks.merkle import CHUNK_LEAVES, root_of, unit_leaf_v2
from grattage.blocks.operator_chain import chain_seed, create_chain, seal_chain
from grattage.blocks.salts import unit_salt

BLOCK_ID = bytes(range(16))
KEY = bytes(range(32, 64))
SEED = bytes(range(64, 96))
PRIZES = (0, 2000, 1000, 500)


def tiers_of(size: int) -> bytes:
    stream = hashlib.shake_256(b"block creation tiers").digest(size)
    return bytes(byte % len(PRIZES) for byte in stream)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_tree_and_chain_made_together_are_those_made_apart(workers):
    size = CHUNK_LEAVES * CHUNKS_PER_TASK + 3 * CHUNK_LEAVES + 17  # two tasks: the pool is used
    tiers = tiers_of(size)
    tree, chain = build_tree_and_chain(
        BLOCK_ID, KEY, tiers, SEED, workers=workers, tier_prizes=PRIZES
    )
    alone = build_tree(BLOCK_ID, KEY, tiers, workers=1, tier_prizes=PRIZES)
    assert tree == alone and chain is not None
    reference, head = HashChain.create(size, SEED)
    assert chain.head == head and chain.seed == SEED and chain.length == size
    for index in (0, 1, 4096, size - 1, size):
        assert chain.link(index) == reference.link(index)


def test_the_tree_of_a_small_block_is_the_leaf_by_leaf_one():
    tiers = tiers_of(1500)
    leaves = [
        unit_leaf_v2(BLOCK_ID, i, tier, PRIZES[tier], unit_salt(KEY, i))
        for i, tier in enumerate(tiers)
    ]
    tree, chain = build_tree_and_chain(BLOCK_ID, KEY, tiers, SEED, tier_prizes=PRIZES)
    assert tree.root == root_of(leaves) and chain is not None
    assert hashlib.sha256(chain.link(1)).digest() == chain.head


def test_a_block_that_is_not_drawn_gets_its_tree_and_no_chain():
    tiers = tiers_of(CHUNK_LEAVES * CHUNKS_PER_TASK + 17)
    tree, chain = build_tree_and_chain(BLOCK_ID, KEY, tiers, None, workers=2, tier_prizes=PRIZES)
    assert chain is None
    assert tree == build_tree(BLOCK_ID, KEY, tiers, workers=1, tier_prizes=PRIZES)


def test_the_operator_chain_walked_beside_the_tree_seals_as_create_chain_does():
    size = CHUNK_LEAVES * CHUNKS_PER_TASK + 4096 * 3  # a checkpoint on the last link too
    _, chain = build_tree_and_chain(
        BLOCK_ID, KEY, tiers_of(size), chain_seed(KEY), workers=2, tier_prizes=PRIZES
    )
    assert chain is not None
    assert seal_chain(KEY, chain) == create_chain(KEY, size)
    with pytest.raises(ValueError, match="not the one of this block key"):
        seal_chain(bytes(32), chain)
