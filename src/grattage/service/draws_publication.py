"""A drawn block's draws file from the platform's own log (docs/draw.md, "The draws file").

The file holds nothing the log does not: the block's ``sale.drawn`` entries (in index order,
read a window of indexes at a time by the index on (block, index)), and of the ``draw.round`` and
``beacon.chain`` entries before its last draw those of the rounds and chains it was drawn with
— the same bytes as :func:`grattage.blocks.draw_file.draw_file_from_log` over the whole log,
in memory bounded by a window of entries and one small entry per round used
(:class:`grattage.blocks.draw_file_writer.DrawFileWriter`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from grattage.blocks.draw_file_writer import DrawFileWriter
from grattage.errors import Conflict, NotFound
from grattage.service import transparency
from grattage.service.context import Platform
from grattage.service.model import LogEntryRow

WINDOW = 10_000
"""Log indexes read at a time: at most this many entries held."""


def is_drawn(platform: Platform, block_id: int) -> bool:
    """Whether the block is drawn from the beacon (committed with a chain): it has draws."""
    with platform.uow.read() as repos:
        return bool(repos.draws.drawn_blocks([block_id]))


def published_sha256(platform: Platform, block_id: int) -> str:
    """The SHA-256 its ``disclosure.published`` entry gives the block's draws file; NotFound
    before that entry is written, and for a block that is not drawn (its entry has none)."""
    with platform.uow.read() as repos:
        body = repos.log.block_entry_body(block_id, "disclosure.published")
    sha256 = None if body is None else json.loads(body).get("draws_sha256")
    if not isinstance(sha256, str):
        raise NotFound(f"block {block_id!r} has no published draws file")
    return sha256


def write_draws_file(
    platform: Platform, block_id: int, writer_dir: Path | None, out: IO[bytes]
) -> str:
    """Write the ended drawn block's draws file to ``out`` (spooling its columns in
    ``writer_dir``); the hex SHA-256 of the bytes written. Conflict while some of its
    ``sale.drawn`` entries are not merged in the log yet (the next sweep tries again)."""
    with platform.uow.read() as repos:
        block = repos.blocks.get(block_id)
        stored = repos.blocks.commitment(block_id)
        if block is None or stored is None or block.commitment_index is None:
            raise NotFound(f"no block {block_id!r} committed in the log")
        public_id = str(json.loads(stored[0])["block_id"])
        sold, size, commitment_index = block.sold, block.size, block.commitment_index
    transparency.integrate_round(platform)  # its last draws may be queued still
    with DrawFileWriter(bytes.fromhex(public_id), size, writer_dir) as writer:
        last = _spool_sales(platform, block_id, public_id, sold, commitment_index, writer)
        if writer.sales != sold:
            raise Conflict(
                f"block {block_id!r}: {writer.sales} of its {sold} draws are in the log so far"
            )
        chains, values = _witness_entries(platform, commitment_index, last, writer.rounds_used)
        used = {chain_id for chain_id, _ in writer.rounds_used}
        listed = [chain for chain_id, chain in chains.items() if chain_id in used]
        return writer.write(out, listed, values)


def _spool_sales(
    platform: Platform, block_id: int, public_id: str, sold: int, after: int, writer: DrawFileWriter
) -> int:
    """Feed the block's ``sale.drawn`` entries after index ``after`` (its commitment's) to
    ``writer``, up to its ``sold`` sales or the log's end; the last one's log index."""
    with platform.uow.read() as repos:
        head = repos.log.latest_head()
    last = after
    for row in _scan(
        platform, "sale.drawn", after, -1 if head is None else head.tree_size - 1, block_id
    ):
        entry = json.loads(row.body)
        if entry["block_id"] != public_id or entry["sequence"] != writer.sales:
            raise Conflict(
                f"the log's draw {entry['sequence']!r} of block {block_id!r} comes where "
                f"draw {writer.sales} should"
            )
        beacon = entry["beacon"]
        writer.add(
            bytes.fromhex(entry["receipt_sha256"]),
            str(beacon["chain_id"]),
            int(beacon["round"]),
            int(entry["slot"]),
            int(entry["unit"]),
        )
        last = row.index
        if writer.sales == sold:
            break
    return last


def _witness_entries(
    platform: Platform, commitment_index: int, last: int, used: set[tuple[str, int]]
) -> tuple[dict[str, Mapping[str, Any]], dict[tuple[str, int], bytes]]:
    """The chains of the log's ``beacon.chain`` entries up to ``last`` (the first of each, in
    log order), and the values of the rounds ``used`` from its ``draw.round`` entries after the
    commitment (a round is logged with the first draw made with it, so before ``last``)."""
    chains: dict[str, Mapping[str, Any]] = {}
    values: dict[tuple[str, int], bytes] = {}
    for row in _scan(platform, "beacon.chain", -1, last):
        entry = json.loads(row.body)
        chains.setdefault(str(entry["chain"]["chain_id"]), entry["chain"])
    for row in _scan(platform, "draw.round", commitment_index, last):
        document = json.loads(row.body)["round"]
        key = (str(document["chain_id"]), int(document["round"]))
        if key in used:
            values[key] = bytes.fromhex(document["value"])
    return chains, values


def _scan(
    platform: Platform, kind: str, after: int, last: int, block_id: int | None = None
) -> Iterator[LogEntryRow]:
    """The entries of ``kind`` (of one block, if given) with ``after < index <= last``, read a
    window of :data:`WINDOW` indexes at a time: each read is one short range of the primary
    key (or of the index on (block, index)), whatever the planner thinks of the table. (Pages
    of "the next 5 000 after i" had PostgreSQL, its statistics stale after a bulk of sales,
    sort every remaining entry for each page: 0.7 s a page, 124 s for 1 000 000 sales.)"""
    while after < last:
        end = min(after + WINDOW, last)
        with platform.uow.read() as repos:
            rows = repos.log.entries_of_kinds((kind,), after, end, WINDOW, block_id)
        yield from rows
        after = end
