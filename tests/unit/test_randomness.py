"""The seeded randomness is specified to the byte, so anyone can re-derive a design — and the
designs' own shuffles (built on ``below`` alone) really move things.

The exact designs are pinned by the golden vectors (``test_golden_designs.py``); the tests here
pin the stream underneath them and catch a shuffle that leaves its input in place or cannot
reach every place.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grattage.games import SeededRandomness, find_game
from grattage.games.astro import DISCS, SIGN
from grattage.games.cash import NUMBERS, STARS


def stream_words(seed: bytes, count: int) -> list[int]:
    """The first ``count`` words of the stream, computed from the spec in the module docstring."""
    prefix = b"grattage/rng/v1" + len(seed).to_bytes(4, "big") + seed
    words: list[int] = []
    chunk_index = 0
    while len(words) < count:
        chunk = hashlib.shake_256(prefix + chunk_index.to_bytes(4, "big")).digest(512)
        words.extend(int.from_bytes(chunk[i : i + 4], "big") for i in range(0, 512, 4))
        chunk_index += 1
    return words[:count]


def test_the_stream_is_shake256_of_the_domain_seed_and_chunk_read_as_big_endian_words():
    seed = b"abc"
    chunk = hashlib.shake_256(b"grattage/rng/v1" + b"\x00\x00\x00\x03abc" + bytes(4)).digest(512)
    first_word = int.from_bytes(chunk[:4], "big")
    assert SeededRandomness(seed).below(1 << 32) == first_word


def test_a_known_seed_gives_these_draws_forever():
    rng = SeededRandomness(b"grattage")
    assert [rng.below(37) for _ in range(8)] == [3, 22, 3, 22, 1, 33, 28, 14]


def test_draws_without_rejection_read_the_words_in_order_across_chunks():
    rng = SeededRandomness(b"long")
    # 128 words a chunk: 300 draws read chunks 0, 1 and part of 2
    assert [rng.below(1 << 32) for _ in range(300)] == stream_words(b"long", 300)


def test_a_word_at_or_above_the_limit_is_skipped_not_folded():
    n = (1 << 31) + 1  # limit = 2**31 + 1: almost half the words are rejected
    limit = (1 << 32) - (1 << 32) % n
    words = stream_words(b"reject", 8)
    assert [w >= limit for w in words[:3]] == [False, False, True]  # the seed does reject
    rng = SeededRandomness(b"reject")
    assert [rng.below(n) for _ in range(4)] == [1775528800, 410362109, 1782124653, 1443014153]
    assert [w % n for w in words if w < limit][:3] == [1775528800, 410362109, 1782124653]


@given(seed=st.binary(max_size=16), n=st.integers(1, 1 << 32))
def test_below_stays_in_range(seed, n):
    assert 0 <= SeededRandomness(seed).below(n) < n


@pytest.mark.parametrize("n", [0, -1, (1 << 32) + 1])
def test_below_refuses_a_range_it_cannot_draw_from(n):
    with pytest.raises(ValueError, match=r"below\(\) needs 0 < n <= 2\*\*32"):
        SeededRandomness(b"").below(n)


SEEDS = [i.to_bytes(4, "big") for i in range(2000)]


def test_a_single_cash_match_lands_on_every_star_evenly():
    """The stars' shuffle moves the matched star: an identity or Sattolo shuffle would not."""
    cash = find_game("cash")
    places = Counter()
    for seed in SEEDS:
        ticket = cash.design(500, SeededRandomness(seed))
        winning = set(ticket["winning_numbers"])
        (place,) = [i for i, s in enumerate(ticket["your_numbers"]) if s["number"] in winning]
        places[place] += 1
    assert sorted(places) == list(range(STARS))
    assert all(50 <= places[i] <= 150 for i in range(STARS)), places  # 100 expected each


def test_cash_numbers_are_drawn_from_all_37_evenly():
    """The numbers' partial Fisher–Yates reaches every number, for both zones."""
    cash = find_game("cash")
    winning = Counter()
    for seed in SEEDS:
        winning.update(cash.design(0, SeededRandomness(seed))["winning_numbers"])
    assert sorted(winning) == list(NUMBERS)
    expected = len(SEEDS) * 5 / len(NUMBERS)  # 270
    assert all(0.7 * expected <= winning[n] <= 1.3 * expected for n in NUMBERS), winning


def test_astro_signs_land_on_every_pair_of_discs_evenly():
    astro = find_game("astro")
    pairs = Counter()
    for seed in SEEDS:
        symbols = astro.design(400, SeededRandomness(seed), "leo")["symbols"]
        pairs[tuple(i for i in range(DISCS) if symbols[i] == SIGN)] += 1
    assert len(pairs) == 10  # every 2 of the 5 discs
    assert all(140 <= count <= 260 for count in pairs.values()), pairs  # 200 expected each
