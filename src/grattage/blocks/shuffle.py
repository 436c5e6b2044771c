"""The unbiased shuffle of a block.

A block is the table's exact multiset of tier indexes (``uint8``, tier 0 = losing) shuffled by
NumPy's ``Generator.shuffle`` driven by randomgen's ``ChaCha`` bit generator (ChaCha20, 20
rounds) keyed with 256 bits from the operating system (``os.urandom``, i.e. ``getrandom(2)``).

Why it is unbiased: ``Generator.shuffle`` is the Fisher–Yates shuffle; at step ``i`` it draws
``j`` uniformly in ``[0, i]`` with Lemire's bounded-integer method, which rejects the draws that
would favour some values, so every ``j`` is exactly equally likely and every permutation of the
block is equally likely given uniform input bits. ChaCha20's output is computationally
indistinguishable from uniform bits (it is a cryptographic stream cipher), and its key is fresh
OS entropy, so no one — including us — can predict or reproduce the order.
"""

from __future__ import annotations

import os

import numpy as np
from numpy.typing import NDArray
from randomgen import ChaCha

from grattage.games.table import PrizeTable

TierArray = NDArray[np.uint8]


def secure_generator(key: bytes | None = None) -> np.random.Generator:
    """A NumPy generator over ChaCha20; ``key`` (32 bytes) is drawn from the OS unless given."""
    key = os.urandom(32) if key is None else key
    if len(key) != 32:
        raise ValueError(f"a ChaCha key is 32 bytes, got {len(key)}")
    return np.random.Generator(ChaCha(key=int.from_bytes(key, "little"), rounds=20))


def ordered_tiers(table: PrizeTable) -> TierArray:
    """The block's units before the shuffle: the losing units, then each tier's."""
    return np.repeat(
        np.arange(len(table.tiers) + 1, dtype=np.uint8),
        np.asarray(table.counts_by_tier(), dtype=np.int64),
    )


def shuffled_tiers(table: PrizeTable, generator: np.random.Generator) -> TierArray:
    """The exact multiset of ``table`` in a uniformly random order."""
    units = ordered_tiers(table)
    generator.shuffle(units)
    return units


def bare_permutation(size: int, generator: np.random.Generator) -> NDArray[np.int64]:
    """The physical limit a block's generation is measured against (benchmarks)."""
    return generator.permutation(size)
