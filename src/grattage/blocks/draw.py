"""The unsteerable draw: which unit a sale gets, and which open block it is drawn from.

Everything here is specified to the byte in docs/draw.md (with the vectors of
tests/fixtures/golden/draw_vectors.json); the verifying half needs only the standard library.

**The unit.** Sale ``n`` (0-based) of a block of ``N`` units, whose receipt hashes to ``H``
(SHA-256 of the receipt's canonical JSON), is drawn once the witness publishes round ``w_r``,
with the operator's chain link ``d_{n+1}`` (published in the resolution)::

    K   = SHA-256(w_r || d_{n+1})
    U_c = HMAC-SHA256(K, "grattage/draw/1" || 0x00 || block_id (16) || n (u64 BE) || H (32)
                         || c (u32 BE))                                   for c = 0, 1, 2, ...
    x   = the first 8 bytes of U_c as an unsigned 64-bit big-endian integer
    accept the first c with x < 2^64 - (2^64 mod (N - n));  j = n + x mod (N - n)

then one Fisher-Yates step on the block's slot -> unit permutation ``P`` (the identity before
the first sale): swap ``P[n]`` and ``P[j]``; the sale gets unit ``P[n]``. Rejection makes every
``j`` in ``[n, N)`` exactly equally likely (a plain ``x mod (N - n)`` would favour the small
remainders by up to ``(N - n) / 2^64``); a step is rejected with probability below
``(N - n) / 2^64``, so ``c`` is 0 in practice, and the loop is still exact when it is not.
The slots below ``n`` are never touched again, so whatever the draws, the sold units and the
unsold ones together are exactly the block's units: the table stays exact.

**The block** (several open blocks of one game): the beacon draws it among the open blocks
weighted by their remaining units, with the same rejection rule (:func:`choose_block`). Why
weighted: a block drawn with probability ``units_left / total`` and then a uniform unit of it
is a uniform unit of the union of the open blocks, so the open blocks behave as ONE pool whose
remaining average prize is a martingale under the draws: no moment of sale, refusal or sale of
its own the operator picks without knowing the next round can change a sale's expected prize
(optional stopping). Drawing the block uniformly instead would give the last few units of a
nearly empty block - whose prizes the operator knows - the same weight as a full block: an
operator could then send a targeted player while a tail of losing units is open and burn a
tail that still holds a prize with sales of its own first.
"""

from __future__ import annotations

import hashlib
import hmac
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import NamedTuple

from grattage.errors import InvalidInput, VerificationFailed

DRAW_CONTEXT = b"grattage/draw/1\x00"
BLOCK_CONTEXT = b"grattage/block/1\x00"
BLOCK_ID_BYTES = 16
HASH_BYTES = 32
PERMUTATION_MAGIC = b"GPRM"
PERMUTATION_VERSION = 1
_TWO_64 = 1 << 64
_FIRST_ATTEMPT = bytes(4)
_MAX_ATTEMPTS = 1 << 32  # c is a u32; each attempt is rejected with probability < 1/2


def draw_key(w_r: bytes, d_next: bytes) -> bytes:
    """``K = SHA-256(w_r || d_{n+1})``: neither the witness (w) nor the operator (d) knows both."""
    _check_length("a beacon value", w_r, HASH_BYTES)
    _check_length("a chain link", d_next, HASH_BYTES)
    return _sha256(w_r + d_next).digest()


def draw_word(key: bytes, block_id: bytes, n: int, receipt_hash: bytes, attempt: int) -> bytes:
    """``U_c``, the 32 bytes of attempt ``c`` of the draw of sale ``n``."""
    message = DRAW_CONTEXT + _sale_fields(block_id, n, receipt_hash) + _u32(attempt)
    return hmac.digest(key, message, "sha256")


def draw_index(
    w_r: bytes, d_next: bytes, block_id: bytes, n: int, size: int, receipt_hash: bytes
) -> int:
    """The slot ``j`` in ``[n, size)`` that sale ``n`` swaps with slot ``n``."""
    if not 0 <= n < size:
        raise ValueError(f"sale {n!r} is outside a block of {size!r} units")
    key = draw_key(w_r, d_next)
    prefix = DRAW_CONTEXT + _sale_fields(block_id, n, receipt_hash)
    bound = size - n
    limit = _TWO_64 - _TWO_64 % bound
    x = int.from_bytes(_hmac_digest(key, prefix + _FIRST_ATTEMPT, "sha256")[:8], "big")
    if x < limit:  # the path taken but for a chance below 2^-40 in a 12 000 000-unit block
        return n + x % bound
    return n + _uniform_below(bound, lambda c: _hmac_digest(key, prefix + _u32(c), "sha256"))


def choose_block(w_r: bytes, receipt_hash: bytes, remaining: Sequence[tuple[bytes, int]]) -> bytes:
    """The open block a sale is drawn from, weighted by the units each has left.

    ``remaining`` lists ``(block_id, units_left)`` of the game's open blocks at the moment of
    the draw (after the earlier sales of the round); its order does not matter: the blocks are
    taken in ascending block id. ``t`` is drawn uniformly in ``[0, total)`` from
    ``HMAC-SHA256(w_r, "grattage/block/1" || 0x00 || H || total (u64 BE) || c (u32 BE))`` by
    the rejection rule of :func:`draw_index`, and the block is the one whose cumulative range
    holds ``t``. Only the beacon keys it: the operator, who knows the blocks' contents and
    places the sales, cannot predict it; the witness, who can, knows neither the contents nor
    the receipt before the sale, and does not place sales.
    """
    _check_length("a beacon value", w_r, HASH_BYTES)
    _check_length("a receipt hash", receipt_hash, HASH_BYTES)
    blocks = sorted(remaining)
    if len({block_id for block_id, _ in blocks}) != len(blocks):
        raise ValueError("a block is listed twice")
    for block_id, units_left in blocks:
        _check_length("a block id", block_id, BLOCK_ID_BYTES)
        if units_left < 0:
            raise ValueError(f"a block cannot have {units_left!r} units left")
    total = sum(units_left for _, units_left in blocks)
    if total == 0:
        raise ValueError("no open block has a unit left")
    prefix = BLOCK_CONTEXT + receipt_hash + total.to_bytes(8, "big")
    target = _uniform_below(total, lambda c: hmac.digest(w_r, prefix + _u32(c), "sha256"))
    for block_id, units_left in blocks:
        if target < units_left:
            return block_id
        target -= units_left
    raise AssertionError("unreachable: target < total")


class SparsePermutation:
    """A block's slot -> unit permutation, storing only the slots whose unit is not their own.

    Identity at first; a sale is :meth:`draw` (one Fisher-Yates step). The serialisation
    (:meth:`to_bytes`) is ``"GPRM" || version (u8, 1) || width (u8: 4 when size <= 2^32,
    else 8) || size (u64 BE) || count (u64 BE) || count slots || count units``, slots
    ascending, each a big-endian unsigned integer of ``width`` bytes; :meth:`from_bytes`
    refuses anything else, and any mapping that is not a permutation.
    """

    __slots__ = ("_moved", "size")

    def __init__(self, size: int) -> None:
        if size <= 0:
            raise ValueError(f"a block has at least one unit, not {size!r}")
        self.size = size
        self._moved: dict[int, int] = {}

    def unit_at(self, slot: int) -> int:
        self._check_slot(slot)
        return self._moved.get(slot, slot)

    def swap(self, a: int, b: int) -> None:
        unit_a, unit_b = self.unit_at(a), self.unit_at(b)
        self._set(a, unit_b)
        self._set(b, unit_a)

    def draw(self, n: int, j: int) -> int:
        """Sale ``n`` with the drawn slot ``j``: swap slots ``n`` and ``j``; the unit of slot n."""
        if not 0 <= n <= j < self.size:
            raise ValueError(f"slot {j!r} cannot be drawn by sale {n!r} of {self.size!r} units")
        self.swap(n, j)
        return self._moved.get(n, n)

    def moved(self) -> int:
        """How many slots hold another slot's unit (the stored entries)."""
        return len(self._moved)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SparsePermutation):
            return NotImplemented
        return self.size == other.size and self._moved == other._moved

    def __hash__(self) -> int:
        raise TypeError("a SparsePermutation is mutable")

    def to_bytes(self) -> bytes:
        width = _width(self.size)
        slots = sorted(self._moved)
        slot_array = array(_ARRAY_CODES[width], slots)
        unit_array = array(_ARRAY_CODES[width], (self._moved[slot] for slot in slots))
        if _LITTLE_ENDIAN:
            slot_array.byteswap()
            unit_array.byteswap()
        header = PERMUTATION_MAGIC + bytes((PERMUTATION_VERSION, width))
        counts = self.size.to_bytes(8, "big") + len(slots).to_bytes(8, "big")
        return header + counts + slot_array.tobytes() + unit_array.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> SparsePermutation:
        if len(data) < 22 or data[:4] != PERMUTATION_MAGIC or data[4] != PERMUTATION_VERSION:
            raise InvalidInput("not a grattage permutation (GPRM version 1)")
        width, size = data[5], int.from_bytes(data[6:14], "big")
        count = int.from_bytes(data[14:22], "big")
        if size == 0 or width != _width(size) or len(data) != 22 + 2 * count * width:
            raise InvalidInput(f"a permutation of {size!r} units has the wrong length or width")
        slot_array, unit_array = array(_ARRAY_CODES[width]), array(_ARRAY_CODES[width])
        slot_array.frombytes(data[22 : 22 + count * width])
        unit_array.frombytes(data[22 + count * width :])
        if _LITTLE_ENDIAN:
            slot_array.byteswap()
            unit_array.byteswap()
        moved = dict(zip(slot_array, unit_array, strict=True))
        if (
            any(a >= b for a, b in pairwise(slot_array))
            or (count and slot_array[-1] >= size)
            or any(slot == unit for slot, unit in moved.items())
            or set(unit_array) != moved.keys()
        ):
            raise InvalidInput("the stored slots and units are not a permutation")
        permutation = cls(size)
        permutation._moved = moved
        return permutation

    def _set(self, slot: int, unit: int) -> None:
        if slot == unit:
            self._moved.pop(slot, None)
        else:
            self._moved[slot] = unit

    def _check_slot(self, slot: int) -> None:
        if not 0 <= slot < self.size:
            raise ValueError(f"slot {slot!r} is outside a block of {self.size!r} units")


class Resolution(NamedTuple):
    """A logged draw: sale ``sequence`` drew ``slot`` (j) and got ``unit``; ``link`` = d_{n+1}."""

    sequence: int
    slot: int
    unit: int
    link: bytes | None = None


def replay(
    resolutions: Iterable[Resolution], size: int, *, chain_head: bytes | None = None
) -> array[int]:
    """Rebuild a block's permutation from its logged draws, checking each as it goes.

    The draws must come in index order (0, 1, 2, ... without a gap, so no slot is sold twice),
    each ``j`` in ``[n, size)``, each unit the one the swap puts in slot ``n``; with
    ``chain_head`` (d_0 of the commitment), each link must hash to the one before it. Returns
    the dense permutation (``result[slot] = unit``): a full replay touches nearly every slot,
    where a dense array is five times smaller and faster than a sparse map.
    """
    permutation = array(_ARRAY_CODES[_width(size)], range(size))
    sha256 = hashlib.sha256
    previous_link = chain_head
    for expected, (sequence, slot, unit, link) in enumerate(resolutions):
        if sequence != expected:
            raise VerificationFailed(f"draw {sequence!r} comes where draw {expected!r} should")
        if not sequence <= slot < size:
            raise VerificationFailed(f"draw {sequence!r} names slot {slot!r}, not in [n, {size})")
        permutation[sequence], permutation[slot] = permutation[slot], permutation[sequence]
        if permutation[sequence] != unit:
            raise VerificationFailed(
                f"draw {sequence!r} claims unit {unit!r}; slot {sequence} holds "
                f"{permutation[sequence]!r}"
            )
        if previous_link is not None:
            if link is None or sha256(link).digest() != previous_link:
                raise VerificationFailed(f"draw {sequence!r}: the chain link does not hash on")
            previous_link = link
    return permutation


def _width(size: int) -> int:
    return 4 if size <= 1 << 32 else 8


_ARRAY_CODES = {4: "I", 8: "Q"}
_sha256 = hashlib.sha256
_hmac_digest = hmac.digest
_LITTLE_ENDIAN = sys.byteorder == "little"


def _uniform_below(bound: int, word: Callable[[int], bytes]) -> int:
    """``x mod bound`` of the first 64-bit ``x`` below the largest multiple of ``bound``."""
    limit = _TWO_64 - _TWO_64 % bound
    for attempt in range(_MAX_ATTEMPTS):
        x = int.from_bytes(word(attempt)[:8], "big")
        if x < limit:
            return x % bound
    raise AssertionError("2^32 rejections in a row: the hash is broken")


def _u32(value: int) -> bytes:
    return value.to_bytes(4, "big")


def _sale_fields(block_id: bytes, n: int, receipt_hash: bytes) -> bytes:
    _check_length("a block id", block_id, BLOCK_ID_BYTES)
    _check_length("a receipt hash", receipt_hash, HASH_BYTES)
    return block_id + n.to_bytes(8, "big") + receipt_hash


def _check_length(what: str, value: bytes, length: int) -> None:
    if len(value) != length:
        raise ValueError(f"{what} is {length} bytes, got {len(value)!r}")
