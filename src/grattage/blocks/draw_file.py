"""A drawn block's draws in one compact binary file (docs/draw.md, "The draws file").

Reading a 12 000 000-unit block's draws from the log means parsing 24 000 000 JSON entries
(a receipt and a ``sale.drawn`` per sale): about 5 µs a sale, more than the hashes of the
replay itself. This file carries exactly what the replay needs, column by column, so that a
verifier reads it with ``array.frombytes`` and hands slices to its worker processes:

    "GDRW" || u8(1) || u8(width) || block_id (16) || u64(N) || u64(m) || u32(c) || u64(q)
    || c x (u32(length) || the canonical JSON of a signed beacon-chain document)
    || q x (u32(chain ordinal) || u64(round) || w_r (32))
    || m x H (32)  ||  m x u32(round ordinal)  ||  m x slot j (width)  ||  m x unit (width)

``width`` is 4 when ``N <= 2^32``, else 8 (as a stored permutation's); ``m`` the sales drawn,
records in index order (record n is sale n); the rounds sorted by (chain ordinal, round), each
once, each used by at least one sale. Standard library only.
"""

from __future__ import annotations

import json
import struct
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from grattage.blocks.signing import canonical_json
from grattage.errors import VerificationFailed

MAGIC = b"GDRW"
VERSION = 1
HEADER = struct.Struct(">4sBB16sQQIQ")
ROUND = struct.Struct(">IQ32s")
HASH_BYTES = 32
_CODES = {4: "I", 8: "Q"}
_LITTLE_ENDIAN = sys.byteorder == "little"


def width_of(size: int) -> int:
    return 4 if size <= 1 << 32 else 8


def _column(code: str, values: Iterable[int]) -> bytes:
    column = array(code, values)
    if _LITTLE_ENDIAN:
        column.byteswap()
    return column.tobytes()


def _read_column(code: str, data: bytes | memoryview) -> array[int]:
    column = array(code)
    column.frombytes(data)
    if _LITTLE_ENDIAN:
        column.byteswap()
    return column


@dataclass(frozen=True)
class DrawRecord:
    """Sale n's draw: its receipt's hash H, the round it was drawn with, its slot j, its unit."""

    receipt_sha256: bytes
    chain_id: str
    round: int
    slot: int
    unit: int


def encode_draw_file(
    block_id: bytes,
    size: int,
    chains: Sequence[Mapping[str, Any]],
    round_values: Mapping[tuple[str, int], bytes],
    records: Sequence[DrawRecord],
) -> bytes:
    """The file of a block's draws; ``chains`` the witness's signed chain documents (in the
    order of the log's ``beacon.chain`` entries), ``round_values`` each round's ``w_r``."""
    ordinal = {str(chain["chain_id"]): number for number, chain in enumerate(chains)}
    used = sorted({(ordinal[r.chain_id], r.round) for r in records})
    names = {number: chain_id for chain_id, number in ordinal.items()}
    round_number = {key: number for number, key in enumerate(used)}
    width = width_of(size)
    return encode_draw_columns(
        block_id,
        size,
        chains,
        [(c, number, round_values[names[c], number]) for c, number in used],
        b"".join(record.receipt_sha256 for record in records),
        array("I", (round_number[ordinal[r.chain_id], r.round] for r in records)),
        array(_CODES[width], (record.slot for record in records)),
        array(_CODES[width], (record.unit for record in records)),
    )


def encode_draw_columns(
    block_id: bytes,
    size: int,
    chains: Sequence[Mapping[str, Any]],
    rounds: Sequence[tuple[int, int, bytes]],
    receipt_hashes: bytes,
    round_ordinals: array[int],
    slots: array[int],
    units: array[int],
) -> bytes:
    """The same file from its columns (``rounds``: (chain ordinal, round, w_r), sorted)."""
    width, sales = width_of(size), len(slots)
    header = HEADER.pack(MAGIC, VERSION, width, block_id, size, sales, len(chains), len(rounds))
    parts = [header]
    for chain in chains:
        document = canonical_json(chain)
        parts += [len(document).to_bytes(4, "big"), document]
    parts += [ROUND.pack(*item) for item in rounds]
    parts.append(receipt_hashes)
    parts.append(_column("I", round_ordinals))
    parts.append(_column(_CODES[width], slots))
    parts.append(_column(_CODES[width], units))
    return b"".join(parts)


@dataclass(frozen=True)
class DrawFile:
    block_id: bytes
    size: int
    width: int
    chains: list[dict[str, Any]]
    rounds: list[tuple[int, int, bytes]]
    """(chain ordinal, round, w_r), sorted, each once."""
    receipt_hashes: memoryview
    """m x 32 bytes: H of sale n at [32n, 32n + 32)."""
    round_ordinals: array[int]
    slots: array[int]
    units: array[int]

    @property
    def sales(self) -> int:
        return len(self.slots)

    def record(self, n: int) -> DrawRecord:
        chain_ordinal, number, _ = self.rounds[self.round_ordinals[n]]
        return DrawRecord(
            bytes(self.receipt_hashes[HASH_BYTES * n : HASH_BYTES * (n + 1)]),
            str(self.chains[chain_ordinal]["chain_id"]),
            number,
            self.slots[n],
            self.units[n],
        )


def read_draw_file(data: bytes) -> DrawFile:
    """Parse and check the structure (not the draws: :mod:`grattage.blocks.replay` does)."""
    view = memoryview(data)
    if len(view) < HEADER.size:
        raise VerificationFailed("not a draws file (GDRW): too short")
    magic, version, width, block_id, size, sales, chain_count, round_count = HEADER.unpack_from(
        view
    )
    if magic != MAGIC or version != VERSION:
        raise VerificationFailed("not a draws file (GDRW version 1)")
    if size == 0 or width != width_of(size) or sales > size:
        raise VerificationFailed(f"a draws file of {sales} sales of {size} units, width {width}")
    offset = HEADER.size
    chains: list[dict[str, Any]] = []
    for _ in range(chain_count):
        if offset + 4 > len(view):
            raise VerificationFailed("the draws file ends inside its chains")
        length = int.from_bytes(view[offset : offset + 4], "big")
        text = bytes(view[offset + 4 : offset + 4 + length])
        offset += 4 + length
        try:
            chain = json.loads(text.decode("ascii"))
        except ValueError:
            raise VerificationFailed("a chain of the draws file is not JSON") from None
        if not isinstance(chain, dict) or canonical_json(chain) != text:
            raise VerificationFailed("a chain of the draws file is not canonical JSON")
        chains.append(chain)
    expected = offset + ROUND.size * round_count + sales * (HASH_BYTES + 4 + 2 * width)
    if len(view) != expected:
        raise VerificationFailed(
            f"the draws file has {len(view)} bytes, its header says {expected}"
        )
    rounds = [ROUND.unpack_from(view, offset + ROUND.size * i) for i in range(round_count)]
    offset += ROUND.size * round_count
    if any(c >= chain_count or r < 1 for c, r, _ in rounds) or any(
        (a[0], a[1]) >= (b[0], b[1]) for a, b in pairwise(rounds)
    ):
        raise VerificationFailed("the draws file's rounds are not sorted, unique, of its chains")
    hashes = view[offset : offset + HASH_BYTES * sales]
    offset += HASH_BYTES * sales
    ordinals = _read_column("I", view[offset : offset + 4 * sales])
    offset += 4 * sales
    slots = _read_column(_CODES[width], view[offset : offset + width * sales])
    units = _read_column(_CODES[width], view[offset + width * sales :])
    if sales and max(ordinals) >= round_count:
        raise VerificationFailed("a draw names a round the draws file does not list")
    if round_count and len(set(ordinals)) != round_count:
        raise VerificationFailed("the draws file lists a round no sale was drawn with")
    return DrawFile(
        block_id=bytes(block_id),
        size=size,
        width=width,
        chains=chains,
        rounds=[(c, r, bytes(value)) for c, r, value in rounds],
        receipt_hashes=hashes,
        round_ordinals=ordinals,
        slots=slots,
        units=units,
    )


def draw_file_from_log(block_id: str, size: int, entries: Iterable[Mapping[str, Any]]) -> bytes:
    """The draws file of block ``block_id`` (hex) from the log's entries, in index order: its
    ``sale.drawn`` entries, the rounds of the ``draw.round`` entries they name and the chains of
    the ``beacon.chain`` entries — what the operator serves, and what a verifier that read the
    log compares a served file with."""
    chains: dict[str, Mapping[str, Any]] = {}
    values: dict[tuple[str, int], bytes] = {}
    records: list[DrawRecord] = []
    for entry in entries:
        kind = entry.get("kind")
        if kind == "beacon.chain":
            chains.setdefault(str(entry["chain"]["chain_id"]), entry["chain"])
        elif kind == "draw.round":
            document = entry["round"]
            values[str(document["chain_id"]), int(document["round"])] = bytes.fromhex(
                document["value"]
            )
        elif kind == "sale.drawn" and entry.get("block_id") == block_id:
            if entry["sequence"] != len(records):
                raise VerificationFailed(
                    f"the log's draw {entry['sequence']!r} of the block comes where draw "
                    f"{len(records)} should"
                )
            beacon = entry["beacon"]
            records.append(
                DrawRecord(
                    bytes.fromhex(entry["receipt_sha256"]),
                    str(beacon["chain_id"]),
                    int(beacon["round"]),
                    int(entry["slot"]),
                    int(entry["unit"]),
                )
            )
    used = {record.chain_id for record in records}
    missing = {(r.chain_id, r.round) for r in records} - values.keys()
    if not used <= chains.keys() or missing:
        raise VerificationFailed("a draw of the block names a round or chain the log lacks")
    listed = [chain for chain_id, chain in chains.items() if chain_id in used]
    return encode_draw_file(bytes.fromhex(block_id), size, listed, values, records)
