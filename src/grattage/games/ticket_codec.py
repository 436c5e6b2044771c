"""What a sold ticket showed, stored in a compact, versioned binary form (issue 17, item 5).

A ticket's document stays the record of what its player saw — never re-derived from the block's
key, which could be lost — but as JSON text it took about 790 bytes a Cash ticket. Here it is a
few dozen. Pure functions, no I/O; nothing here needs the block's prize table or rules version,
so one row is read on its own, by the history, the proofs, a migration or an auditor alike.

**Document.** The first byte names the format; every format stays readable for good, so a later
one is read beside these:

* ``0x00`` — any game: the document as compact UTF-8 JSON. The fallback of a game without a
  compact format (the test suite's third game), and of a document a compact format cannot hold
  exactly (a key more or less, an amount a format has no room for, a covered ticket's ``{}``).
* ``0x01`` — Cash: ``k`` (one byte, 1–16), the ``k`` distinct star amounts in order of first
  appearance (unsigned LEB128), then one big-endian bit string of 230 bits in 29 bytes: the 5
  winning numbers then the 20 stars' numbers (6 bits each, in the document's order), then each
  star's amount as its 4-bit index among the ``k``; then ``prize_cents`` (LEB128).
* ``0x02`` — Astro: six nibbles in 3 bytes, the sign's index in :data:`ASTRO_SIGNS` then the 5
  discs' indexes in :data:`ASTRO_DISCS`; one byte, the banner's index in :data:`ASTRO_BANNERS`;
  ``gain_cents`` and ``prize_cents`` (LEB128).

The compact formats' tables are copied here, frozen: a later edit of a game's symbols or
phrases cannot change what a stored ticket decodes to (a document showing something not in
them is stored as ``0x00``). Decoding gives back the document exactly, key order included.

**Revealed zones.** ``0x00`` and the JSON list of zone names, or ``0x01`` and a bit set over
the game's ``zones`` (bit ``i`` of the little-endian integer that follows is zone ``i``; high
zero bytes left out, so nothing revealed is one byte, a whole Cash ticket five). A list in the
game's zone order without repeats — what the service always stores — is a bit set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from grattage.errors import Inconsistent
from grattage.games.base import TicketDocument

GENERIC_JSON = 0x00
CASH_V1 = 0x01
ASTRO_V1 = 0x02
REVEALED_JSON = 0x00
REVEALED_BITS = 0x01

_CASH_KEYS = ["game", "winning_numbers", "your_numbers", "prize_cents"]
_STAR_KEYS = ["number", "amount_cents"]
_CASH_NUMBERS, _CASH_STARS, _CASH_PALETTE = 5, 20, 16
_CASH_BITS = (_CASH_NUMBERS + _CASH_STARS) * 6 + _CASH_STARS * 4
_CASH_BYTES = (_CASH_BITS + 7) // 8

_ASTRO_KEYS = ["game", "sign", "symbols", "gain_cents", "banner", "prize_cents"]
_BANNER_KEYS = ["text", "multiplier"]
ASTRO_SIGNS: tuple[str, ...] = (
    "aries", "taurus", "gemini", "cancer", "leo", "virgo",
    "libra", "scorpio", "sagittarius", "capricorn", "aquarius", "pisces",
)  # fmt: skip
ASTRO_DISCS: tuple[str, ...] = (
    "sign", "cosmos", "moon", "comet", "saturn", "explosion", "eclipse", "star", "sun",
)  # fmt: skip
ASTRO_BANNERS: tuple[tuple[str, int | None], ...] = (
    ("Pas de multiplicateur cette fois-ci.", None),
    ("Les astres restent muets.", None),
    ("Votre étoile brillera une autre fois.", None),
    ("Aucun multiplicateur sous ce ciel.", None),
    ("Vos gains sont doublés ! (×2)", 2),
    ("Vos gains sont multipliés par 2 !", 2),
    ("Vos gains sont triplés ! (×3)", 3),
    ("Vos gains sont multipliés par 3 !", 3),
    ("Vos gains sont multipliés par 4 !", 4),
    ("Quatre fois plus de gains ! (×4)", 4),
    ("Vos gains sont multipliés par 6 !", 6),
    ("Six fois plus de gains ! (×6)", 6),
    ("Vos gains sont multipliés par 10 !", 10),
    ("Dix fois plus de gains ! (×10)", 10),
    ("Vos gains sont multipliés par 20 !", 20),
    ("Vingt fois plus de gains ! (×20)", 20),
    ("Vos gains sont multipliés par 100 !", 100),
    ("Cent fois plus de gains ! (×100)", 100),
    ("Vos gains sont multipliés par 1 000 !", 1000),
    ("Mille fois plus de gains ! (×1 000)", 1000),
)
_SIGN_INDEX = {sign: index for index, sign in enumerate(ASTRO_SIGNS)}
_DISC_INDEX = {disc: index for index, disc in enumerate(ASTRO_DISCS)}
_BANNER_INDEX = {text: index for index, (text, _) in enumerate(ASTRO_BANNERS)}
_MAX_AMOUNT = 2**63 - 1  # what a BigInteger column holds: no amount of a ticket is larger


# -- documents ---------------------------------------------------------------------------------


def encode_document(document: Mapping[str, Any]) -> bytes:
    """The stored form of ``document``: its game's compact format when it holds it exactly."""
    game = document.get("game")
    compact = _cash(document) if game == "cash" else _astro(document) if game == "astro" else None
    if compact is not None:
        return compact
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    return bytes((GENERIC_JSON,)) + text.encode("utf-8")


def decode_document(data: bytes) -> TicketDocument:
    """The document ``data`` stores, exactly as it was given to :func:`encode_document`."""
    try:
        if data[:1] == bytes((GENERIC_JSON,)):
            document = json.loads(data[1:].decode("utf-8"))
            if not isinstance(document, dict):
                raise ValueError("not a JSON object")
            return document
        if data[:1] == bytes((CASH_V1,)):
            return _read_cash(data)
        if data[:1] == bytes((ASTRO_V1,)):
            return _read_astro(data)
    except (ValueError, IndexError) as error:  # UnicodeDecodeError, JSONDecodeError included
        raise _unreadable(data, str(error)) from error
    raise _unreadable(data, "unknown format")


def _amount(value: object) -> bool:
    # ``type(x) is int``: a bool equals 0 or 1 but would not decode as one
    return type(value) is int and 0 <= value <= _MAX_AMOUNT


def _cash(document: Mapping[str, Any]) -> bytes | None:
    if list(document) != _CASH_KEYS or not _amount(document["prize_cents"]):
        return None
    winning, stars = document["winning_numbers"], document["your_numbers"]
    if type(winning) is not list or len(winning) != _CASH_NUMBERS:
        return None
    if type(stars) is not list or len(stars) != _CASH_STARS:
        return None
    numbers = list(winning)
    palette: dict[int, int] = {}
    indexes = []
    for star in stars:
        if type(star) is not dict or list(star) != _STAR_KEYS or not _amount(star["amount_cents"]):
            return None
        numbers.append(star["number"])
        indexes.append(palette.setdefault(star["amount_cents"], len(palette)))
    if len(palette) > _CASH_PALETTE or any(type(n) is not int or not 0 <= n < 64 for n in numbers):
        return None
    packed = 0
    for number in numbers:
        packed = packed << 6 | number
    for index in indexes:
        packed = packed << 4 | index
    packed <<= _CASH_BYTES * 8 - _CASH_BITS
    return b"".join(
        (
            bytes((CASH_V1, len(palette))),
            *(_varint(amount) for amount in palette),
            packed.to_bytes(_CASH_BYTES, "big"),
            _varint(document["prize_cents"]),
        )
    )


def _read_cash(data: bytes) -> TicketDocument:
    count = data[1]
    if not 1 <= count <= _CASH_PALETTE:
        raise ValueError(f"a palette of {count} amounts")
    at = 2
    palette = []
    for _ in range(count):
        amount, at = _read_varint(data, at)
        palette.append(amount)
    packed = int.from_bytes(_take(data, at, _CASH_BYTES), "big") >> (_CASH_BYTES * 8 - _CASH_BITS)
    prize, at = _read_varint(data, at + _CASH_BYTES)
    _end(data, at)
    indexes = [(packed >> (4 * (_CASH_STARS - 1 - i))) & 15 for i in range(_CASH_STARS)]
    packed >>= 4 * _CASH_STARS
    total = _CASH_NUMBERS + _CASH_STARS
    numbers = [(packed >> (6 * (total - 1 - i))) & 63 for i in range(total)]
    return {
        "game": "cash",
        "winning_numbers": numbers[:_CASH_NUMBERS],
        "your_numbers": [
            {"number": number, "amount_cents": palette[index]}
            for number, index in zip(numbers[_CASH_NUMBERS:], indexes, strict=True)
        ],
        "prize_cents": prize,
    }


def _astro(document: Mapping[str, Any]) -> bytes | None:
    if list(document) != _ASTRO_KEYS:
        return None
    sign, symbols, banner = document["sign"], document["symbols"], document["banner"]
    gain, prize = document["gain_cents"], document["prize_cents"]
    fits = (
        type(sign) is str
        and sign in _SIGN_INDEX
        and _amount(gain)
        and _amount(prize)
        and type(symbols) is list
        and len(symbols) == 5
        and all(type(disc) is str and disc in _DISC_INDEX for disc in symbols)
        and type(banner) is dict
        and list(banner) == _BANNER_KEYS
        and type(banner["text"]) is str
        and banner["text"] in _BANNER_INDEX
    )
    if not fits:
        return None
    phrase = _BANNER_INDEX[banner["text"]]
    multiplier, expected = banner["multiplier"], ASTRO_BANNERS[phrase][1]
    exact = type(multiplier) is int and multiplier == expected
    if not (multiplier is None if expected is None else exact):
        return None
    packed = _SIGN_INDEX[sign]
    for disc in symbols:
        packed = packed << 4 | _DISC_INDEX[disc]
    return b"".join(
        (
            bytes((ASTRO_V1,)),
            packed.to_bytes(3, "big"),
            bytes((phrase,)),
            _varint(gain),
            _varint(prize),
        )
    )


def _read_astro(data: bytes) -> TicketDocument:
    packed = int.from_bytes(_take(data, 1, 3), "big")
    nibbles = [(packed >> (4 * (5 - i))) & 15 for i in range(6)]
    if nibbles[0] >= len(ASTRO_SIGNS) or max(nibbles[1:]) >= len(ASTRO_DISCS):
        raise ValueError("a sign or a disc out of range")
    text, multiplier = ASTRO_BANNERS[_take(data, 4, 1)[0]]
    gain, at = _read_varint(data, 5)
    prize, at = _read_varint(data, at)
    _end(data, at)
    return {
        "game": "astro",
        "sign": ASTRO_SIGNS[nibbles[0]],
        "symbols": [ASTRO_DISCS[index] for index in nibbles[1:]],
        "gain_cents": gain,
        "banner": {"text": text, "multiplier": multiplier},
        "prize_cents": prize,
    }


# -- revealed zones ----------------------------------------------------------------------------


def encode_revealed(zones: Sequence[str], revealed: Sequence[str]) -> bytes:
    """The stored form of the ``revealed`` zones of a ticket whose game has ``zones``."""
    position = {zone: index for index, zone in enumerate(zones)}
    places = [position.get(zone, -1) for zone in revealed]
    if -1 not in places and all(a < b for a, b in pairwise(places)):
        mask = sum(1 << place for place in places)
        return bytes((REVEALED_BITS,)) + mask.to_bytes((mask.bit_length() + 7) // 8, "little")
    text = json.dumps(list(revealed), separators=(",", ":"), ensure_ascii=False)
    return bytes((REVEALED_JSON,)) + text.encode("utf-8")


def decode_revealed(zones: Sequence[str], data: bytes) -> list[str]:
    """The revealed zones ``data`` stores, in the order they were given."""
    try:
        if data[:1] == bytes((REVEALED_BITS,)):
            mask = int.from_bytes(data[1:], "little")
            if mask >> len(zones):
                raise ValueError(f"a zone beyond the game's {len(zones)}")
            return [zone for index, zone in enumerate(zones) if mask >> index & 1]
        if data[:1] == bytes((REVEALED_JSON,)):
            found = json.loads(data[1:].decode("utf-8"))
            if not isinstance(found, list) or not all(isinstance(z, str) for z in found):
                raise ValueError("not a JSON list of zone names")
            return found
    except ValueError as error:
        raise _unreadable(data, str(error)) from error
    raise _unreadable(data, "unknown format")


# -- the pieces --------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    """Unsigned LEB128: 7 bits a byte, low bits first, the high bit set on all but the last."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = _take(data, at, 1)[0]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            if value > _MAX_AMOUNT:
                raise ValueError("an amount too large")
            return value, at
        shift += 7


def _take(data: bytes, at: int, count: int) -> bytes:
    if at + count > len(data):
        raise ValueError("cut short")
    return data[at : at + count]


def _end(data: bytes, at: int) -> None:
    if at != len(data):
        raise ValueError(f"{len(data) - at} bytes left over")


def _unreadable(data: bytes, why: str) -> Inconsistent:
    return Inconsistent(f"a stored ticket cannot be read ({why}): {bytes(data[:16]).hex()}…")
