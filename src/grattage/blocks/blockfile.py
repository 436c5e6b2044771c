"""The compact block file: a header, then one byte per unit (its tier index, 0 = losing).

Layout::

    b"GRTBLK01"                magic and format version (8 bytes)
    header length              unsigned 32-bit big-endian
    header                     UTF-8 JSON: game, rules_version, table (whole), table_sha256,
                               size, unit_bytes (1), content_sha256, created_at, generator
    units                      ``size`` bytes in sale order

``verify`` recounts every tier against the header's table, and reports — never crashes on — a
file that is not a block, a damaged header, a truncated or extended body, a body whose hash
differs from the header's (tampering), or a tier that does not exist.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from grattage.blocks.progress import Progress, silent
from grattage.blocks.shuffle import TierArray
from grattage.errors import InvalidBlockFile, InvalidInput, VerificationFailed
from grattage.games.base import Game
from grattage.games.registry import find_game
from grattage.games.table import PrizeTable, table_from_dict

MAGIC = b"GRTBLK01"
_LENGTH = struct.Struct(">I")
MAX_HEADER_BYTES = 1 << 20
IO_CHUNK_UNITS = 1 << 22
"""Units (one byte each) written or read per system call: 4 MiB, not a storage chunk."""
GENERATOR_NAME = (
    "numpy Generator.shuffle (Fisher-Yates, Lemire bounded draws) over randomgen ChaCha20, "
    "key from os.urandom"
)


@dataclass(frozen=True)
class BlockHeader:
    game: str
    rules_version: str
    table: PrizeTable
    size: int
    content_sha256: str
    created_at: str
    generator: str = GENERATOR_NAME
    unit_bytes: int = 1

    def to_json(self) -> bytes:
        data = {
            "game": self.game,
            "rules_version": self.rules_version,
            "table": self.table.to_dict(),
            "table_sha256": self.table.digest(),
            "size": self.size,
            "unit_bytes": self.unit_bytes,
            "content_sha256": self.content_sha256,
            "created_at": self.created_at,
            "generator": self.generator,
        }
        return json.dumps(data, ensure_ascii=False, sort_keys=True).encode("utf-8")


@dataclass(frozen=True)
class VerifiedBlock:
    header: BlockHeader
    counts: list[int]
    """Units found per tier index, the losing tier first."""


def units_digest(tiers: TierArray) -> str:
    return hashlib.sha256(np.ascontiguousarray(tiers).data).hexdigest()


def write_block_file(
    path: Path, game: Game, tiers: TierArray, progress: Progress = silent
) -> BlockHeader:
    """Write the block atomically: a temporary file, fsync, then rename over ``path``."""
    if tiers.dtype != np.uint8 or len(tiers) != game.table.block_size:
        raise InvalidInput(f"a block of {game.table.block_size} uint8 tiers, got {tiers!r}")
    header = BlockHeader(
        game=game.name,
        rules_version=game.rules_version,
        table=game.table,
        size=len(tiers),
        content_sha256=units_digest(tiers),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    header_bytes = header.to_json()
    temporary = path.with_name(f".{path.name}.partial")
    with open(temporary, "wb") as out:
        out.write(MAGIC + _LENGTH.pack(len(header_bytes)) + header_bytes)
        view = np.ascontiguousarray(tiers).data
        for start in range(0, len(tiers), IO_CHUNK_UNITS):
            out.write(view[start : start + IO_CHUNK_UNITS])
            progress("writing", min(start + IO_CHUNK_UNITS, len(tiers)), len(tiers))
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    return header


def read_header(stream: BinaryIO, name: str) -> BlockHeader:
    magic = stream.read(len(MAGIC))
    if magic != MAGIC:
        raise InvalidBlockFile(f"{name}: not a grattage block file (starts with {magic[:8]!r})")
    raw_length = stream.read(_LENGTH.size)
    if len(raw_length) != _LENGTH.size:
        raise InvalidBlockFile(f"{name}: truncated inside the header")
    (length,) = _LENGTH.unpack(raw_length)
    if length > MAX_HEADER_BYTES:
        raise InvalidBlockFile(f"{name}: header length {length!r} is implausible")
    raw = stream.read(length)
    if len(raw) != length:
        raise InvalidBlockFile(f"{name}: truncated inside the header")
    try:
        data: dict[str, Any] = json.loads(raw.decode("utf-8"))
        header = BlockHeader(
            game=str(data["game"]),
            rules_version=str(data["rules_version"]),
            table=table_from_dict(data["table"]),
            size=int(data["size"]),
            content_sha256=str(data["content_sha256"]),
            created_at=str(data["created_at"]),
            generator=str(data.get("generator", "")),
            unit_bytes=int(data.get("unit_bytes", 1)),
        )
        stated_table_digest = str(data["table_sha256"])
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InvalidBlockFile(
            f"{name}: damaged header ({exc.__class__.__name__}: {exc})"
        ) from None
    except InvalidInput as exc:
        raise InvalidBlockFile(f"{name}: damaged header: {exc.message}") from None
    if header.unit_bytes != 1:
        raise InvalidBlockFile(f"{name}: unit_bytes {header.unit_bytes!r} is not supported")
    if header.table.digest() != stated_table_digest:
        raise InvalidBlockFile(f"{name}: the header's table does not match its table_sha256")
    if header.size != header.table.block_size:
        raise InvalidBlockFile(
            f"{name}: size {header.size!r} differs from the table's block size "
            f"{header.table.block_size!r}"
        )
    return header


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    while chunk := stream.read(IO_CHUNK_UNITS):
        yield chunk


def verify_block_file(path: Path, progress: Progress = silent) -> VerifiedBlock:
    """Recount every tier; raise :class:`InvalidBlockFile` or :class:`VerificationFailed`."""
    name = str(path)
    with open(path, "rb") as stream:
        header = read_header(stream, name)
        try:
            # the rules the block was made under, not today's: a block keeps its rules version
            find_game(header.game, header.table, rules_version=header.rules_version)
        except InvalidInput as exc:
            raise InvalidBlockFile(
                f"{name}: the header's table or rules are unusable: {exc.message}"
            ) from None
        tier_count = len(header.table.tiers) + 1
        counts = np.zeros(256, dtype=np.int64)
        digest = hashlib.sha256()
        seen = 0
        for chunk in _chunks(stream):
            digest.update(chunk)
            counts += np.bincount(np.frombuffer(chunk, dtype=np.uint8), minlength=256)
            seen += len(chunk)
            progress("verifying", min(seen, header.size), header.size)
    if seen < header.size:
        raise InvalidBlockFile(
            f"{name}: truncated: {seen!r} units found, the header announces {header.size!r}"
        )
    if seen > header.size:
        raise InvalidBlockFile(
            f"{name}: {seen - header.size!r} bytes more than the {header.size!r} units announced"
        )
    if digest.hexdigest() != header.content_sha256:
        raise InvalidBlockFile(
            f"{name}: the units do not match the header's content_sha256 (tampered or damaged)"
        )
    unknown = [i for i in range(tier_count, 256) if counts[i]]
    if unknown:
        raise VerificationFailed(f"{name}: units carry tiers that do not exist: {unknown!r}")
    found = [int(c) for c in counts[:tier_count]]
    expected = header.table.counts_by_tier()
    wrong = [
        f"tier {i} ({header.table.prize_of_tier(i)!r} cents): {f!r} units, the table says {e!r}"
        for i, (f, e) in enumerate(zip(found, expected, strict=True))
        if f != e
    ]
    if wrong:
        raise VerificationFailed(f"{name}: " + "; ".join(wrong))
    return VerifiedBlock(header=header, counts=found)
