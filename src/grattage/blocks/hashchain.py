"""Hash chains: a secret seed, a published head, links revealed one by one (docs/witness.md).

A chain of length ``L``: the seed ``s_L`` is 32 random bytes, ``s_{i-1} = SHA-256(s_i)``, and
the head ``s_0`` is published (signed) before any link is used. Whoever holds a link ``s_k``
checks a later-revealed link ``s_i`` (``i ≥ k``) by hashing it ``i - k`` times; nobody without
the seed can compute ``s_i`` from the links revealed before it (SHA-256 is one-way).

The witness's beacon publishes ``s_r`` as round ``r``; the operator's per-block chain gives the
``d_{n+1}`` of the draw. Both keep the seed secret and, so that no link costs a walk down from
the seed, **checkpoints**: ``s_i`` for every ``i ≡ 0 (mod 4096)``, computed once when the chain
is made; ``link(i) = SHA-256^(c - i)(s_c)``, ``c`` the first checkpoint ``≥ i`` (or ``L``,
the seed), at most 4 095 hashes — and the chain keeps the last segment it walked, so links
asked for in order cost one hash each.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from itertools import repeat
from typing import Any

SEED_BYTES = 32
CHECKPOINT_EVERY = 4096


def _one_block_sha256() -> Callable[[bytes], Any]:
    """The fastest SHA-256 of the standard library for a 32-byte message (one block).

    OpenSSL's (``hashlib.sha256``) spends most of a short hash setting up its context; the
    interpreter's own implementation (``_sha256`` in 3.11, ``_sha2`` from 3.12) has none of
    that cost and hashes one block about 1.5 times as fast. Both are SHA-256: the same bytes.
    """
    for module, name in (("_sha2", "sha256"), ("_sha256", "sha256")):
        try:
            constructor: Callable[[bytes], Any] = getattr(__import__(module), name)
        except (ImportError, AttributeError):
            continue
        if constructor(b"").digest() == hashlib.sha256(b"").digest():
            return constructor
    return hashlib.sha256


sha256_32 = _one_block_sha256()
"""A SHA-256 constructor, fastest for one-block messages such as chain links."""


def hash_times(value: bytes, times: int) -> bytes:
    """``SHA-256`` applied ``times`` times to ``value``."""
    sha256 = sha256_32
    for _ in repeat(None, times):
        value = sha256(value).digest()
    return value


def walk_down(top: bytes, count: int) -> list[bytes]:
    """``[top, SHA-256(top), SHA-256²(top), …]``: ``count + 1`` links, from link ``i`` down to
    link ``i - count`` (the whole segment between two checkpoints, in one pass)."""
    sha256 = sha256_32
    links = [top]
    append = links.append
    for _ in repeat(None, count):
        top = sha256(top).digest()
        append(top)
    return links


class HashChain:
    """A chain held by its owner: the seed and its checkpoints (never published)."""

    def __init__(self, seed: bytes, length: int, checkpoints: dict[int, bytes]) -> None:
        self._seed = seed
        self.length = length
        self._checkpoints = checkpoints
        self._segment: tuple[int, list[bytes]] = (-1, [])

    @classmethod
    def create(cls, length: int, seed: bytes | None = None) -> tuple[HashChain, bytes]:
        """A chain of ``length`` links from ``seed`` (32 fresh random bytes if None), and its
        head ``s_0``. Passing the stored seed rebuilds the same chain."""
        if length < 1:
            raise ValueError(f"a hash chain has at least one link, got length {length}")
        seed = secrets.token_bytes(SEED_BYTES) if seed is None else seed
        if len(seed) != SEED_BYTES:
            raise ValueError(f"a chain's seed is {SEED_BYTES} bytes, got {len(seed)}")
        checkpoints: dict[int, bytes] = {}
        top = length - length % CHECKPOINT_EVERY  # the highest checkpoint, the seed's if equal
        value = hash_times(seed, length - top)
        for index in range(top, -1, -CHECKPOINT_EVERY):  # one hash per link, no test per link
            checkpoints[index] = value
            if index:
                value = hash_times(value, CHECKPOINT_EVERY)
        chain = cls(seed, length, checkpoints)
        return chain, checkpoints[0]

    @property
    def seed(self) -> bytes:
        """The secret: only for the key store that keeps it."""
        return self._seed

    def checkpoints(self) -> dict[int, bytes]:
        """The checkpoints (secret as the seed): for the key store, or a worker's answer."""
        return dict(self._checkpoints)

    @property
    def head(self) -> bytes:
        return self._checkpoints[0]

    def link(self, index: int) -> bytes:
        """``s_index`` for ``0 ≤ index ≤ length`` (``s_0`` the head, ``s_length`` the seed)."""
        if not 0 <= index <= self.length:
            raise ValueError(f"link {index} is not in a chain of length {self.length}")
        top = min(-(-index // CHECKPOINT_EVERY) * CHECKPOINT_EVERY, self.length)
        if index == top:  # a checkpoint, or the seed: no walk
            return self._seed if top == self.length else self._checkpoints[top]
        cached_top, links = self._segment
        if cached_top != top:
            # The links are used in order (sale after sale, round after round): walk the whole
            # segment below the checkpoint once and keep it (4 096 links, 160 KB), so that a
            # link costs one hash on average instead of up to 4 095.
            start = self._seed if top == self.length else self._checkpoints[top]
            below = max(top - 1, 0) // CHECKPOINT_EVERY * CHECKPOINT_EVERY
            links = walk_down(start, top - below)
            self._segment = (top, links)
        return links[top - index]


def verify_link(value: bytes, index: int, known_value: bytes, known_index: int) -> bool:
    """Is ``value`` link ``index`` of the chain whose link ``known_index`` is ``known_value``?
    (Hashing it ``index - known_index`` times must give ``known_value``.) A link is only ever
    checked against an earlier one — the head, or the last link already checked."""
    if index < known_index or known_index < 0:
        return False
    if len(value) != SEED_BYTES or len(known_value) != SEED_BYTES:
        return False
    return hash_times(value, index - known_index) == known_value
