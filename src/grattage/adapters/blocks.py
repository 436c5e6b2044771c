"""Emissions, blocks, their sealed chunks and commitments.

Facts and conditional writes only: which blocks of a game are open, "take one unit of block
B if it is open and not sold out", "change B's state if it is still in that state". When to
take, exhaust or open which block is decided by :mod:`grattage.service.block_lifecycle`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from grattage.adapters.driver_sql import COUNT_PRIZE_SOLD, OPEN_BLOCK_IDS, SEALED_CHUNK, TAKE_UNIT
from grattage.adapters.rows import record_of
from grattage.adapters.tables import (
    block_chunks,
    block_commitments,
    block_prizes_sold,
    blocks,
    emissions,
)
from grattage.service.model import Block, BlockState, ChainTip, NewBlock

UNSOLD_STATES: tuple[BlockState, ...] = ("open", "pending")
"""The states whose unsold units can still be sold."""


def _block(row: Any) -> Block:
    return record_of(Block, row)


def _blocks_with_their_table() -> Any:
    return select(
        blocks.c.id,
        blocks.c.emission_id,
        blocks.c.game,
        blocks.c.key_id,
        blocks.c.size,
        blocks.c.sold,
        blocks.c.state,
        blocks.c.chunk_units,
        emissions.c.table_json,
        blocks.c.price_cents,
        blocks.c.title,
        blocks.c.commitment_index,
    ).join(emissions, emissions.c.id == blocks.c.emission_id)


def _any(db: Connection, game: str, state: BlockState) -> bool:
    found = db.execute(
        select(blocks.c.id).where(blocks.c.game == game, blocks.c.state == state).limit(1)
    ).first()
    return found is not None


class SealedChunks:
    """The sealed tiers of the chunks sales read lately, kept by the process (the last
    :data:`KEPT` of them, 64 KiB each: 25 MiB at most).

    A chunk never changes once its block is stored. An undrawn block's units are sold in
    position order, so a chunk read once serves the next 65 536 sales of its block; reading
    each sale's byte with a statement of its own was one more round trip on PostgreSQL while
    the sale holds its block's row. A drawn block's units are unsealed by the drawer at the
    positions its draws land on, anywhere in the block: :data:`KEPT` covers two whole
    12 000 000-unit blocks (184 chunks, 12 MiB each), so each chunk is read once there too.
    (The process already keeps the block's key, which unseals them.)"""

    KEPT = 400

    def __init__(self) -> None:
        self._chunks: OrderedDict[tuple[int, int], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, block_id: int, chunk: int) -> bytes | None:
        with self._lock:
            data = self._chunks.get((block_id, chunk))
            if data is not None:
                self._chunks.move_to_end((block_id, chunk))
            return data

    def keep(self, block_id: int, chunk: int, data: bytes) -> None:
        with self._lock:
            self._chunks[(block_id, chunk)] = data
            while len(self._chunks) > self.KEPT:
                self._chunks.popitem(last=False)


class SqlBlocks:
    def __init__(self, connection: Connection, sealed: SealedChunks | None = None) -> None:
        self.db = connection
        self._sealed = sealed if sealed is not None else SealedChunks()
        self.state_changes: list[tuple[int, BlockState, BlockState]] = []

    def add_emission(
        self, game: str, table_json: str, digest: str, price_cents: int, title: str, now: datetime
    ) -> int:
        return int(
            self.db.execute(
                insert(emissions)
                .values(
                    game=game,
                    table_json=table_json,
                    table_digest=digest,
                    price_cents=price_cents,
                    title=title,
                    created_at=now,
                )
                .returning(emissions.c.id)
            ).scalar_one()
        )

    def add_block(self, block: NewBlock) -> int:
        return int(
            self.db.execute(
                insert(blocks)
                .values(**block.__dict__, sold=0, state="pending")
                .returning(blocks.c.id)
            ).scalar_one()
        )

    def add_chunk(self, block_id: int, chunk: int, sealed_tiers: bytes) -> None:
        self.db.execute(
            insert(block_chunks).values(block_id=block_id, chunk=chunk, sealed_tiers=sealed_tiers)
        )

    def get(self, block_id: int) -> Block | None:
        row = self.db.execute(_blocks_with_their_table().where(blocks.c.id == block_id)).first()
        return None if row is None else _block(row)

    def all(self, game: str | None = None) -> list[Block]:
        query = _blocks_with_their_table().order_by(blocks.c.id)
        if game is not None:
            query = query.where(blocks.c.game == game)
        return [_block(row) for row in self.db.execute(query)]

    def open_block_ids(self, game: str) -> list[int]:
        return [int(row[0]) for row in OPEN_BLOCK_IDS(self.db, {"game": game})]

    def take_unit(self, block_id: int) -> tuple[int, int, int, ChainTip] | None:
        taken = TAKE_UNIT(self.db, {"block_id": block_id}).first()
        if taken is None:
            return None
        sold, size, price_cents, receipt_sha256, round_ms = taken
        tip = ChainTip(
            None if receipt_sha256 is None else str(receipt_sha256),
            None if round_ms is None else int(round_ms),
        )
        return int(sold), int(size), int(price_cents), tip

    def count_prize_sold(self, block_id: int, prize_cents: int) -> int:
        return int(
            COUNT_PRIZE_SOLD(self.db, {"block_id": block_id, "prize_cents": prize_cents}).one()[0]
        )

    def prizes_sold(self, block_ids: list[int]) -> dict[int, dict[int, int]]:
        sold: dict[int, dict[int, int]] = {block_id: {} for block_id in block_ids}
        if block_ids:
            rows = self.db.execute(
                select(
                    block_prizes_sold.c.block_id,
                    block_prizes_sold.c.prize_cents,
                    block_prizes_sold.c.sold,
                ).where(block_prizes_sold.c.block_id.in_(block_ids))
            )
            for block_id, prize_cents, count in rows:
                sold[int(block_id)][int(prize_cents)] = int(count)
        return sold

    def open_blocks(self, game: str | None = None) -> list[Block]:
        query = _blocks_with_their_table().where(blocks.c.state == "open").order_by(blocks.c.id)
        if game is not None:
            query = query.where(blocks.c.game == game)
        return [_block(row) for row in self.db.execute(query)]

    def sealed_tier(self, block: Block, position: int) -> bytes:
        chunk, offset = divmod(position, block.chunk_units)
        data = self._sealed.get(block.id, chunk)
        if data is None:
            data = bytes(SEALED_CHUNK(self.db, {"block_id": block.id, "chunk": chunk}).scalar_one())
            self._sealed.keep(block.id, chunk, data)
        return data[offset : offset + 1]

    def sealed_tiers(self, block: Block, start: int, count: int) -> bytes:
        chunk, offset = divmod(start, block.chunk_units)
        data = self.db.execute(
            select(func.substr(block_chunks.c.sealed_tiers, offset + 1, count)).where(
                block_chunks.c.block_id == block.id, block_chunks.c.chunk == chunk
            )
        ).scalar_one()
        return bytes(data)

    def add_commitment(self, block_id: int, commitment: str, chunk_roots: bytes) -> None:
        self.db.execute(
            insert(block_commitments).values(
                block_id=block_id, commitment=commitment, chunk_roots=chunk_roots
            )
        )

    def commitment(self, block_id: int) -> tuple[str, bytes] | None:
        row = self.db.execute(
            select(block_commitments.c.commitment, block_commitments.c.chunk_roots).where(
                block_commitments.c.block_id == block_id
            )
        ).first()
        return None if row is None else (row.commitment, bytes(row.chunk_roots))

    def set_state(self, block_id: int, state: BlockState, only_from: BlockState) -> bool:
        changed = self.db.execute(
            update(blocks)
            .where(blocks.c.id == block_id, blocks.c.state == only_from)
            .values(state=state)
            .returning(blocks.c.id)
        ).first()
        if changed is not None:
            self.state_changes.append((block_id, only_from, state))
        return changed is not None

    def open_next_pending(self, game: str) -> int | None:
        pending = (
            select(blocks.c.id)
            .where(
                blocks.c.game == game,
                blocks.c.state == "pending",
                blocks.c.commitment_index.is_not(None),  # only a block whose commitment is logged
            )
            .order_by(blocks.c.id)
            .limit(1)
            .scalar_subquery()
        )
        opened = self.db.execute(
            update(blocks)
            .where(blocks.c.id == pending, blocks.c.state == "pending")
            .values(state="open")
            .returning(blocks.c.id)
        ).scalar()
        if opened is not None:
            self.state_changes.append((int(opened), "pending", "open"))
        return None if opened is None else int(opened)

    def has_open(self, game: str) -> bool:
        return _any(self.db, game, "open")

    def has_suspended(self, game: str) -> bool:
        return _any(self.db, game, "suspended")

    def states_with_unsold_units(self, game: str) -> set[BlockState]:
        rows = self.db.execute(
            select(blocks.c.state)
            .where(blocks.c.game == game, blocks.c.sold < blocks.c.size)
            .distinct()
        )
        return {state for (state,) in rows}

    def showcase(self, game: str) -> Block | None:
        row = self.db.execute(
            _blocks_with_their_table()
            .where(blocks.c.game == game, blocks.c.state.in_(UNSOLD_STATES))
            .order_by((blocks.c.state == "open").desc(), blocks.c.id)
            .limit(1)
        ).first()
        return None if row is None else _block(row)

    def units_left(self, game: str) -> int:
        left = self.db.execute(
            select(func.coalesce(func.sum(blocks.c.size - blocks.c.sold), 0)).where(
                blocks.c.game == game, blocks.c.state.in_(UNSOLD_STATES)
            )
        ).scalar_one()
        return int(left)

    def drain_state_changes(self) -> list[tuple[int, BlockState, BlockState]]:
        """The state changes not yet written to the audit log, which this forgets."""
        changes, self.state_changes = self.state_changes, []
        return changes
