"""The seeded randomness is specified to the byte, so anyone can re-derive a design."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grattage.games.randomness import SeededRandomness, sample, shuffled


def test_the_stream_is_shake256_of_the_domain_seed_and_chunk_read_as_big_endian_words():
    seed = b"abc"
    chunk = hashlib.shake_256(b"grattage/rng/v1" + b"\x00\x00\x00\x03abc" + bytes(4)).digest(512)
    first_word = int.from_bytes(chunk[:4], "big")
    assert SeededRandomness(seed).below(1 << 32) == first_word


def test_a_known_seed_gives_known_draws():
    rng = SeededRandomness(b"grattage")
    assert [rng.below(37) for _ in range(8)] == [rng2 for rng2 in _draws(b"grattage", 37, 8)]


def _draws(seed: bytes, n: int, k: int) -> list[int]:
    out, chunk_index, limit = [], 0, (1 << 32) - (1 << 32) % n
    prefix = b"grattage/rng/v1" + len(seed).to_bytes(4, "big") + seed
    while len(out) < k:
        chunk = hashlib.shake_256(prefix + chunk_index.to_bytes(4, "big")).digest(512)
        chunk_index += 1
        for i in range(0, 512, 4):
            word = int.from_bytes(chunk[i : i + 4], "big")
            if word < limit and len(out) < k:
                out.append(word % n)
    return out


@given(seed=st.binary(max_size=16), n=st.integers(1, 1 << 32))
def test_below_stays_in_range(seed, n):
    assert 0 <= SeededRandomness(seed).below(n) < n


def test_below_refuses_an_empty_range():
    with pytest.raises(ValueError, match="0"):
        SeededRandomness(b"").below(0)


@given(seed=st.binary(max_size=16), k=st.integers(0, 37))
def test_sample_draws_distinct_items(seed, k):
    drawn = sample(SeededRandomness(seed), range(37), k)
    assert len(drawn) == len(set(drawn)) == k


def test_shuffled_keeps_every_item():
    assert sorted(shuffled(SeededRandomness(b"s"), list(range(50)))) == list(range(50))


def test_draws_span_many_chunks_without_repeating():
    rng = SeededRandomness(b"long")
    draws = [rng.below(1 << 32) for _ in range(1000)]
    assert len(set(draws)) > 990
