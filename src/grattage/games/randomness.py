"""Randomness as a value passed into the rules — never a global generator.

Ticket designs must be reproducible by anyone (a fairness proof re-derives what the player saw),
so the draws are specified here down to the byte, using only the standard library:

* :class:`SeededRandomness` expands a seed with SHAKE-256 into 512-byte chunks,
  ``chunk_i = SHAKE256("grattage/rng/v1" || len(seed) as u32 || seed || i as u32)``, read as
  big-endian unsigned 32-bit words.
* ``below(n)`` takes the next word ``w`` and rejects it while ``w >= 2**32 - 2**32 % n`` (so every
  residue is equally likely), then answers ``w % n``.

* ``uniform_below(rng, n)`` extends ``below`` past 2**32 (design-v2's weighted draws): with
  ``k = ceil(bitlength(n - 1) / 32)`` words, it reads ``x`` = the next ``k`` words
  ``below(2**32)`` (each one word, never rejected), most significant first, rejects ``x`` while
  ``x >= 2**(32k) - 2**(32k) % n``, and answers ``x % n``; for ``n <= 2**32`` it is ``below(n)``.
* ``weighted(rng, cumulative)`` draws index ``i`` with probability ``weight_i / total`` from the
  running sums ``cumulative`` (``total`` last): ``x = uniform_below(rng, total)``, then the first
  ``i`` with ``x < cumulative[i]``.

The games build their shuffles from ``below`` alone (Cash's partial Fisher–Yates swaps item ``i``
with item ``i + below(len - i)``): a design is pinned by the seed and the order of its draws.

:class:`SystemRandomness` answers ``below`` from the operating system's CSPRNG, for draws that
must not be reproducible.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from bisect import bisect_right
from collections.abc import Sequence
from typing import Protocol

_DOMAIN = b"grattage/rng/v1"
_CHUNK_BYTES = 512
_WORDS_PER_CHUNK = _CHUNK_BYTES // 4
_WORDS = struct.Struct(f">{_WORDS_PER_CHUNK}I")
_WORD_SPACE = 1 << 32
WORD_SPACE = _WORD_SPACE
"""2**32: ``below(n)`` takes any ``n`` up to it; ``uniform_below`` goes beyond."""


class Randomness(Protocol):
    """The one operation the rules need: a uniform integer in ``range(n)``."""

    def below(self, n: int) -> int: ...


class SeededRandomness:
    """A deterministic, portable stream of uniform draws derived from ``seed``."""

    __slots__ = ("_chunk_index", "_position", "_prefix", "_words")

    def __init__(self, seed: bytes) -> None:
        self._prefix = _DOMAIN + len(seed).to_bytes(4, "big") + seed
        self._chunk_index = 0
        self._words: tuple[int, ...] = ()
        self._position = _WORDS_PER_CHUNK  # the first draw computes chunk 0

    def _refill(self) -> None:
        chunk = hashlib.shake_256(self._prefix + self._chunk_index.to_bytes(4, "big")).digest(
            _CHUNK_BYTES
        )
        self._words = _WORDS.unpack(chunk)
        self._chunk_index += 1
        self._position = 0

    def below(self, n: int) -> int:
        if n <= 0 or n > _WORD_SPACE:
            raise ValueError(f"below() needs 0 < n <= 2**32, got {n!r}")
        limit = _WORD_SPACE - _WORD_SPACE % n
        while True:  # the hot path of every design: kept free of helper calls
            if self._position == _WORDS_PER_CHUNK:
                self._refill()
            word = self._words[self._position]
            self._position += 1
            if word < limit:
                return word % n


class SystemRandomness:
    """Uniform draws from the operating system's CSPRNG (``secrets``)."""

    __slots__ = ()

    def below(self, n: int) -> int:
        return secrets.randbelow(n)


def uniform_below(rng: Randomness, n: int) -> int:
    """A uniform integer in ``range(n)`` for any ``n >= 1``, from whole 32-bit words."""
    if n <= _WORD_SPACE:
        return rng.below(n)
    words = -(-(n - 1).bit_length() // 32)
    space = 1 << (32 * words)
    limit = space - space % n
    while True:
        x = 0
        for _ in range(words):
            x = (x << 32) | rng.below(_WORD_SPACE)
        if x < limit:
            return x % n


def weighted(rng: Randomness, cumulative: Sequence[int]) -> int:
    """Index ``i`` with probability ``(cumulative[i] - cumulative[i - 1]) / cumulative[-1]``."""
    return bisect_right(cumulative, uniform_below(rng, cumulative[-1]))
