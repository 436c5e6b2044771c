"""Hash chains (grattage.blocks.hashchain): links, checkpoints, verification."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grattage.blocks.hashchain import (
    CHECKPOINT_EVERY,
    HashChain,
    hash_times,
    sha256_32,
    verify_link,
)

SEED = bytes(range(32))


def walk_down(seed: bytes, length: int) -> list[bytes]:
    """Every link s_0..s_L the slow way: s_L = seed, s_{i-1} = SHA-256(s_i)."""
    links = [seed]
    for _ in range(length):
        links.append(hashlib.sha256(links[-1]).digest())
    return links[::-1]


def test_each_link_hashes_to_the_one_before_and_the_seed_is_the_last():
    length = 3 * CHECKPOINT_EVERY + 17
    chain, head = HashChain.create(length, SEED)
    expected = walk_down(SEED, length)
    assert head == expected[0]
    for index in (0, 1, 4095, 4096, 4097, 8191, 8192, 12288, length - 1, length):
        assert chain.link(index) == expected[index], index


def test_a_chain_rebuilt_from_its_seed_is_the_same_chain():
    first, head = HashChain.create(5000)
    again, head_again = HashChain.create(5000, first.seed)
    assert head == head_again and again.link(4321) == first.link(4321)


def test_two_fresh_chains_share_no_head():
    assert HashChain.create(10)[1] != HashChain.create(10)[1]


def test_a_chain_whose_length_is_a_multiple_of_the_checkpoints_ends_at_its_seed():
    chain, _ = HashChain.create(2 * CHECKPOINT_EVERY, SEED)
    assert chain.link(2 * CHECKPOINT_EVERY) == SEED
    assert chain.link(CHECKPOINT_EVERY + 1) == hash_times(SEED, CHECKPOINT_EVERY - 1)


def test_the_chain_of_the_docs_test_vector():
    # docs/witness.md, "Hash chains": seed 00 01 .. 1f, length 3.
    chain, head = HashChain.create(3, SEED)
    assert head.hex() == "4e05063392f42b5180353ef82da86c714042155044d91ab3253f1bab08120a0a"
    assert chain.link(1).hex() == (
        "2f287b4d3d4910f6cada9e1bd1b4648099e8c52c81aa4a6aebfa6fc86f19834e"
    )
    assert chain.link(2).hex() == (
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    )


@pytest.mark.parametrize("index", [-1, 11])
def test_a_link_outside_the_chain_is_refused(index):
    chain, _ = HashChain.create(10, SEED)
    with pytest.raises(ValueError):
        chain.link(index)


@pytest.mark.parametrize("seed", [b"", bytes(31), bytes(33)])
def test_a_seed_is_32_bytes(seed):
    with pytest.raises(ValueError):
        HashChain.create(10, seed)


def test_a_chain_has_at_least_one_link():
    with pytest.raises(ValueError):
        HashChain.create(0)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 9000), st.integers(0, 9000))
def test_a_link_verifies_against_any_earlier_link_and_no_later_one(i, k):
    chain, _ = HashChain.create(9000, SEED)
    assert verify_link(chain.link(i), i, chain.link(k), k) == (i >= k)


def test_a_link_does_not_verify_at_another_index_or_with_another_value():
    chain, head = HashChain.create(100, SEED)
    assert verify_link(chain.link(50), 50, head, 0)
    assert not verify_link(chain.link(50), 51, head, 0)
    assert not verify_link(chain.link(50), 49, head, 0)
    assert not verify_link(bytes(32), 50, head, 0)
    assert not verify_link(chain.link(50)[:31], 50, head, 0)


SLOW_CHAIN = walk_down(SEED, 2 * CHECKPOINT_EVERY + 5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2 * CHECKPOINT_EVERY + 5), min_size=1, max_size=12))
def test_links_asked_in_any_order_are_the_slow_walk_s(indexes):
    chain, _ = HashChain.create(len(SLOW_CHAIN) - 1, SEED)
    for index in indexes:
        assert chain.link(index) == SLOW_CHAIN[index], index


@pytest.mark.parametrize(
    "length", [1, CHECKPOINT_EVERY - 1, CHECKPOINT_EVERY, CHECKPOINT_EVERY + 1]
)
def test_every_link_of_a_chain_near_a_checkpoint_is_the_slow_walk_s(length):
    chain, head = HashChain.create(length, SEED)
    expected = walk_down(SEED, length)
    assert head == expected[0]
    assert [chain.link(index) for index in range(length + 1)] == expected


def test_the_fast_one_block_hash_is_sha256():
    assert sha256_32(SEED).digest() == hashlib.sha256(SEED).digest()
    assert hash_times(SEED, 3) == walk_down(SEED, 3)[0]
