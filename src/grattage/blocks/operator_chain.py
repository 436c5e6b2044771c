"""A block's operator chain ``d`` (docs/fairness.md, "The commitment of a drawn block").

``d_N = HMAC-SHA256(block key, "grattage/chain/1")``, ``d_{i-1} = SHA-256(d_i)``; ``d_0``, the
head, is in the signed commitment; the draw of sale ``n`` uses ``d_{n+1}``. The chain comes
from the block key, so no secret is stored for it: the disclosure of the key discloses the
chain. So that a sale's link costs no walk down from ``d_N``, the server keeps the chain's
checkpoints (``d_i`` for every ``i ≡ 0 (mod 4096)``, :mod:`grattage.blocks.hashchain`) sealed
with AES-256-CTR under ``HMAC-SHA256(block key, "grattage/chain-checkpoints/1")``, and reads
the links in increasing order through a :class:`LinkCursor`: 4 095 hashes once every 4 096
links, about one hash per sale.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from grattage.blocks.hashchain import CHECKPOINT_EVERY, HashChain, hash_times

CHAIN_CONTEXT = b"grattage/chain/1"
CHECKPOINTS_CONTEXT = b"grattage/chain-checkpoints/1"
LINK_BYTES = 32


def chain_seed(block_key: bytes) -> bytes:
    """``d_N`` of the block whose key is ``block_key``."""
    return hmac.new(block_key, CHAIN_CONTEXT, hashlib.sha256).digest()


def create_chain(block_key: bytes, length: int) -> tuple[bytes, bytes]:
    """The chain of a new block of ``length`` units: (its head ``d_0``, its sealed
    checkpoints) — one walk down the whole chain, done once, at the block's creation."""
    chain, _ = HashChain.create(length, chain_seed(block_key))
    return seal_chain(block_key, chain)


def seal_chain(block_key: bytes, chain: HashChain) -> tuple[bytes, bytes]:
    """What :func:`create_chain` gives, from the block's chain walked elsewhere (beside its
    tree: :func:`grattage.blocks.commitment.build_tree_and_chain` with :func:`chain_seed`)."""
    if chain.seed != chain_seed(block_key):
        raise ValueError("this chain is not the one of this block key")
    return chain.head, seal_checkpoints(block_key, _checkpoint_values(chain, chain.length))


def _checkpoint_values(chain: HashChain, length: int) -> bytes:
    return b"".join(chain.link(index) for index in _checkpoint_indexes(length))


def _checkpoint_indexes(length: int) -> range:
    return range(0, length + 1, CHECKPOINT_EVERY)


def _cipher(block_key: bytes) -> Any:
    key = hmac.new(block_key, CHECKPOINTS_CONTEXT, hashlib.sha256).digest()
    return Cipher(algorithms.AES(key), modes.CTR(bytes(16)))


def seal_checkpoints(block_key: bytes, values: bytes) -> bytes:
    encryptor = _cipher(block_key).encryptor()
    return bytes(encryptor.update(values) + encryptor.finalize())


def open_chain(block_key: bytes, length: int, sealed: bytes) -> HashChain:
    """The block's chain from its sealed checkpoints (no walk: ``link`` costs < 4 096 hashes)."""
    decryptor = _cipher(block_key).decryptor()
    values = decryptor.update(sealed) + decryptor.finalize()
    indexes = _checkpoint_indexes(length)
    if len(values) != LINK_BYTES * len(indexes):
        raise ValueError(f"{len(values)} bytes of checkpoints for a chain of {length} links")
    checkpoints = {
        index: values[LINK_BYTES * number : LINK_BYTES * (number + 1)]
        for number, index in enumerate(indexes)
    }
    seed = chain_seed(block_key)
    last = indexes[-1]
    if hash_times(seed, length - last) != checkpoints[last]:
        raise ValueError("the sealed checkpoints are not this block's")
    return HashChain(seed, length, checkpoints)


class LinkCursor:
    """Links of one chain read in (mostly) increasing order: each run of 4 096 links between
    two checkpoints is hashed down once and kept, so reading ``d_1, d_2, …`` costs one hash
    per link; any link may still be asked (a segment is then computed for it)."""

    def __init__(self, chain: HashChain) -> None:
        self.chain = chain
        self._low = 1
        self._high = 0  # empty: low > high
        self._values: list[bytes] = []

    def link(self, index: int) -> bytes:
        if not self._low <= index <= self._high:
            self._load(index)
        return self._values[index - self._low]

    def _load(self, index: int) -> None:
        length = self.chain.length
        if not 0 <= index <= length:
            raise ValueError(f"link {index} is not in a chain of length {length}")
        top = min(-(-index // CHECKPOINT_EVERY) * CHECKPOINT_EVERY, length)
        low = max(0, top - CHECKPOINT_EVERY + 1) if top else 0
        value = self.chain.link(top)
        values = [value]
        sha256 = hashlib.sha256
        for _ in range(top - low):
            value = sha256(value).digest()
            values.append(value)
        values.reverse()
        self._low, self._high, self._values = low, top, values
