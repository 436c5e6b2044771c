"""Writing a block's draws file (docs/draw.md, "The draws file") sale by sale, in bounded memory.

:func:`grattage.blocks.draw_file.encode_draw_file` holds the whole file and a Python object per
sale: 528 MB and 12 000 000 objects for a full Cash block, too much for a server worker. Here
each sale goes, as it is read, into four anonymous temporary column files (its receipt's hash,
its round, its slot, its unit), buffered :data:`FLUSH_SALES` sales at a time; :meth:`write`
then streams header, chains, rounds and the four columns into the output, hashing as it goes.
The round column is spooled as each round's first-seen number and renumbered on the way out,
since the file numbers the rounds in (chain ordinal, round) order, known only at the end.
What stays in memory: the buffers, and one small entry per round the block was drawn with.
Standard library only.
"""

from __future__ import annotations

import hashlib
import tempfile
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from grattage.blocks.draw_file import (
    _CODES,
    _LITTLE_ENDIAN,
    HASH_BYTES,
    HEADER,
    MAGIC,
    ROUND,
    VERSION,
    width_of,
)
from grattage.blocks.signing import canonical_json
from grattage.errors import VerificationFailed

FLUSH_SALES = 1 << 16
COPY_BYTES = 1 << 20


class DrawFileWriter:
    """Collects a block's draws in index order (:meth:`add`), then writes the file once."""

    def __init__(self, block_id: bytes, size: int, directory: Path | None = None) -> None:
        self.block_id, self.size, self.width = block_id, size, width_of(size)
        self.sales = 0
        self._code = _CODES[self.width]
        names = ("hashes", "rounds", "slots", "units")
        # closed by __exit__: a writer is used as a context manager
        self._files = {name: tempfile.TemporaryFile(dir=directory) for name in names}  # noqa: SIM115
        self._hashes = bytearray()
        self._rounds = array("I")
        self._slots, self._units = array(self._code), array(self._code)
        self._first_seen: dict[tuple[str, int], int] = {}

    def __enter__(self) -> DrawFileWriter:
        return self

    def __exit__(self, *_: object) -> None:
        for spool in self._files.values():
            spool.close()  # anonymous files: closing frees them, as a crash does

    @property
    def rounds_used(self) -> set[tuple[str, int]]:
        """(chain id, round) of every round a sale added so far was drawn with."""
        return set(self._first_seen)

    def add(
        self, receipt_sha256: bytes, chain_id: str, round_number: int, slot: int, unit: int
    ) -> None:
        """Sale number :attr:`sales` (the next in index order)."""
        if len(receipt_sha256) != HASH_BYTES:
            raise VerificationFailed(f"draw {self.sales}: its receipt hash is not 32 bytes")
        key = (chain_id, round_number)
        self._rounds.append(self._first_seen.setdefault(key, len(self._first_seen)))
        self._hashes += receipt_sha256
        self._slots.append(slot)
        self._units.append(unit)
        self.sales += 1
        if len(self._slots) >= FLUSH_SALES:
            self._flush()

    def _flush(self) -> None:
        self._files["hashes"].write(self._hashes)
        self._files["rounds"].write(self._rounds.tobytes())  # native order: only we read it
        for name, column in (("slots", self._slots), ("units", self._units)):
            if _LITTLE_ENDIAN:
                column.byteswap()
            self._files[name].write(column.tobytes())
        self._hashes = bytearray()
        self._rounds = array("I")
        self._slots, self._units = array(self._code), array(self._code)

    def write(
        self,
        out: IO[bytes],
        chains: Sequence[Mapping[str, Any]],
        round_values: Mapping[tuple[str, int], bytes],
    ) -> str:
        """Write the file to ``out``; the hex SHA-256 of its bytes. ``chains``: the witness's
        chain documents of the rounds used, in the order of the log's ``beacon.chain`` entries;
        ``round_values``: ``w_r`` of (at least) each round used."""
        self._flush()
        ordinal = {str(chain["chain_id"]): number for number, chain in enumerate(chains)}
        if any(c not in ordinal for c, _ in self._first_seen) or not (
            self._first_seen.keys() <= round_values.keys()
        ):
            raise VerificationFailed("a draw of the block names a round or chain the log lacks")
        ordered = sorted(self._first_seen, key=lambda key: (ordinal[key[0]], key[1]))
        renumbered = array("I", bytes(4 * len(ordered)))
        for number, key in enumerate(ordered):
            renumbered[self._first_seen[key]] = number
        digest = hashlib.sha256()

        def emit(data: bytes) -> None:
            digest.update(data)
            out.write(data)

        emit(
            HEADER.pack(
                MAGIC,
                VERSION,
                self.width,
                self.block_id,
                self.size,
                self.sales,
                len(chains),
                len(ordered),
            )
        )
        for chain in chains:
            document = canonical_json(chain)
            emit(len(document).to_bytes(4, "big") + document)
        emit(b"".join(ROUND.pack(ordinal[c], r, round_values[c, r]) for c, r in ordered))
        self._copy("hashes", emit)
        spool = self._files["rounds"]
        spool.seek(0)
        while piece := spool.read(4 * FLUSH_SALES):
            first_seen = array("I")
            first_seen.frombytes(piece)
            column = array("I", map(renumbered.__getitem__, first_seen))
            if _LITTLE_ENDIAN:
                column.byteswap()
            emit(column.tobytes())
        self._copy("slots", emit)
        self._copy("units", emit)
        return digest.hexdigest()

    def _copy(self, name: str, emit: Any) -> None:
        spool = self._files[name]
        spool.seek(0)
        while piece := spool.read(COPY_BYTES):
            emit(piece)
