"""The block shuffle is unbiased — and the test would catch a biased one.

Method: a 4-unit block holding two losing units and two distinct prizes has 12 distinct
arrangements. We shuffle it 24 000 times from a FIXED ChaCha key (so the test is deterministic,
never flaky) and compare the arrangement counts with the uniform expectation by Pearson's
chi-square: 11 degrees of freedom, significance 0.001, critical value 31.264.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from grattage.blocks.shuffle import secure_generator, shuffled_tiers
from grattage.games.table import PrizeTable, Tier

TRIALS = 24_000
CRITICAL_11_DOF_AT_0_001 = 31.264
FIXED_KEY = bytes(range(32))
TABLE = PrizeTable(
    game="cash",
    title="test",
    source="test",
    reconstruction=False,
    block_size=4,
    price_cents=500,
    tiers=(Tier(1, 1000, 1), Tier(2, 500, 1)),
)


def chi_square(arrangements: Counter[bytes]) -> float:
    expected = TRIALS / 12
    assert len(arrangements) <= 12
    counts = [arrangements.get(key, 0) for key in _all_arrangements()]
    return sum((c - expected) ** 2 / expected for c in counts)


def _all_arrangements() -> list[bytes]:
    from itertools import permutations

    return sorted({bytes(p) for p in permutations([0, 0, 1, 2])})


def naive_shuffle(units: np.ndarray, generator: np.random.Generator) -> np.ndarray:
    """The classic mistake: swap each place with ANY place (n**n paths onto n! orders)."""
    for i in range(len(units)):
        j = int(generator.integers(0, len(units)))
        units[i], units[j] = units[j], units[i]
    return units


def test_block_arrangements_are_uniform_by_chi_square():
    generator = secure_generator(FIXED_KEY)
    seen = Counter(shuffled_tiers(TABLE, generator).tobytes() for _ in range(TRIALS))
    assert chi_square(seen) < CRITICAL_11_DOF_AT_0_001


def test_the_chi_square_test_rejects_a_biased_shuffle():
    generator = secure_generator(FIXED_KEY)
    base = np.array([0, 0, 1, 2], dtype=np.uint8)
    seen = Counter(naive_shuffle(base.copy(), generator).tobytes() for _ in range(TRIALS))
    assert chi_square(seen) > CRITICAL_11_DOF_AT_0_001


def test_a_shuffled_block_holds_exactly_the_table():
    tiers = shuffled_tiers(TABLE.scaled(1000), secure_generator())
    assert np.bincount(tiers).tolist() == [2000, 1000, 1000]
