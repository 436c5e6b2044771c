"""The draw's storage: drawn blocks' chains and cursors, the sparse permutation, the sales
waiting for their round, the rounds and chains logged, the leader's lease.

Facts and conditional writes: the draw cursor moves only from the value the drawer read
(under its lock), a covered ticket is resolved only while it is still covered, the lease is
taken only when free, expired or already the taker's. What to draw is decided in
:mod:`grattage.service.drawing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from grattage.adapters.db_time import to_db_time
from grattage.adapters.draw_tables import (
    block_draws,
    draw_lease,
    draw_queue,
    drawn_rounds,
    logged_beacon_chains,
)
from grattage.adapters.driver_sql import (
    DEQUEUE_DRAW,
    DROP_SLOT,
    PLACE_TICKET,
    QUEUE_DRAW,
    QUEUE_DRAW_PLACE_TICKET_AND_SET_CHAIN_TIP,
    RESOLVE_TICKET,
    SET_CHAIN_TIP,
    SET_SLOT,
    SLOT,
    SLOTS_FROM,
)
from grattage.adapters.log_tables import log_entries
from grattage.adapters.rows import record_of
from grattage.adapters.tables import blocks, tickets
from grattage.adapters.tickets import names_the_sale_index, sale_index_taken
from grattage.service.draw_port import QueuedDraw, SlotState
from grattage.service.model import Ticket

# The statements the drawer runs at every turn (a few dozen times a second) or every round,
# built once: built at each call, each was built, keyed and looked up in the compiled cache
# again every time (bench/play_cpu.py).
_ROUNDS = select(draw_queue.c.chain_id, draw_queue.c.round, draw_queue.c.round_ms)
_EARLIEST_ROUND = _ROUNDS.order_by(draw_queue.c.round_ms).limit(1)
_PENDING_ROUNDS = (
    _ROUNDS.where(draw_queue.c.round_ms <= bindparam("until_ms"))
    .distinct()
    .order_by(draw_queue.c.round_ms)
)
_PENDING_BLOCKS = (
    select(draw_queue.c.block_id)
    .where(draw_queue.c.round_ms <= bindparam("until_ms"))
    .distinct()
    .order_by(draw_queue.c.block_id)
)
_DRAWABLE = (
    select(draw_queue, log_entries.c.idx)
    .select_from(
        draw_queue.outerjoin(
            log_entries,
            and_(
                log_entries.c.ticket_id == draw_queue.c.ticket_id,
                log_entries.c.kind == "sale.receipt",
            ),
        )
    )
    .where(
        draw_queue.c.block_id == bindparam("block_id"),
        draw_queue.c.round_ms <= bindparam("until_ms"),
    )
    .order_by(draw_queue.c.sequence)
    .limit(bindparam("limit"))
)
_CURSOR = select(block_draws.c.drawn).where(block_draws.c.block_id == bindparam("block_id"))
_LOCK_CURSOR = _CURSOR.with_for_update()
_SET_CURSOR = (
    update(block_draws)
    .where(
        block_draws.c.block_id == bindparam("for_block"),
        block_draws.c.drawn == bindparam("drawn_before"),
    )
    .values(drawn=bindparam("drawn_after"))
    .returning(block_draws.c.block_id)
)
_COVERED_TICKETS = select(tickets).where(tickets.c.id.in_(bindparam("ids", expanding=True)))
_TAKE_LEASE = (
    update(draw_lease)
    .where(
        draw_lease.c.id == 1,
        (draw_lease.c.holder == bindparam("taker"))
        | (draw_lease.c.expires_ms < bindparam("now_ms")),
    )
    .values(holder=bindparam("taker"), expires_ms=bindparam("lease_until"))
    .returning(draw_lease.c.id)
)
_LEASE_EXPIRY = select(draw_lease.c.expires_ms).where(draw_lease.c.id == 1)


class SqlDraws:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    # -- a drawn block -------------------------------------------------------------------
    def add_block(self, block_id: int, chain_length: int, checkpoints: bytes) -> None:
        self.db.execute(
            insert(block_draws).values(
                block_id=block_id, chain_length=chain_length, checkpoints=checkpoints
            )
        )

    def drawn_blocks(self, block_ids: Sequence[int]) -> set[int]:
        rows = self.db.execute(
            select(block_draws.c.block_id).where(block_draws.c.block_id.in_(list(block_ids)))
        )
        return {int(block_id) for (block_id,) in rows}

    def checkpoints(self, block_id: int) -> tuple[int, bytes] | None:
        row = self.db.execute(
            select(block_draws.c.chain_length, block_draws.c.checkpoints).where(
                block_draws.c.block_id == block_id
            )
        ).first()
        return None if row is None else (int(row[0]), bytes(row[1]))

    # -- the sale (driver SQL: every drawn sale runs them) -------------------------------
    def set_chain_tip(self, block_id: int, receipt_sha256: str, round_ms: int | None) -> None:
        SET_CHAIN_TIP(
            self.db,
            {"block_id": block_id, "receipt_sha256": receipt_sha256, "round_ms": round_ms},
        )

    def queue(self, draw: QueuedDraw) -> None:
        values = dict(draw.__dict__)
        del values["receipt_index"]
        try:
            if self.db.dialect.name == "sqlite":
                QUEUE_DRAW(self.db, values)
                PLACE_TICKET(self.db, values)
                SET_CHAIN_TIP(self.db, values)
            else:
                QUEUE_DRAW_PLACE_TICKET_AND_SET_CHAIN_TIP(self.db, values)
        except IntegrityError as error:
            if not names_the_sale_index(error):
                raise  # any other broken constraint is a bug: a 500 with its traceback
            raise sale_index_taken(draw.block_id, draw.sequence) from error

    # -- the drawer ----------------------------------------------------------------------
    def earliest_round(self) -> tuple[str, int, int] | None:
        row = self.db.execute(_EARLIEST_ROUND).first()
        return None if row is None else (str(row[0]), int(row[1]), int(row[2]))

    def pending_rounds(self, until_ms: int) -> list[tuple[str, int, int]]:
        rows = self.db.execute(_PENDING_ROUNDS, {"until_ms": until_ms})
        return [(str(chain), int(number), int(ms)) for chain, number, ms in rows]

    def pending_blocks(self, until_ms: int) -> list[int]:
        rows = self.db.execute(_PENDING_BLOCKS, {"until_ms": until_ms})
        return [int(block_id) for (block_id,) in rows]

    def drawable(self, block_id: int, until_ms: int, limit: int) -> list[QueuedDraw]:
        rows = self.db.execute(
            _DRAWABLE, {"block_id": block_id, "until_ms": until_ms, "limit": limit}
        )
        return [
            QueuedDraw(
                ticket_id=int(row.ticket_id),
                block_id=int(row.block_id),
                sequence=int(row.sequence),
                chain_id=str(row.chain_id),
                round=int(row.round),
                round_ms=int(row.round_ms),
                receipt_sha256=str(row.receipt_sha256),
                receipt_index=None if row.idx is None else int(row.idx),
            )
            for row in rows
        ]

    def cursor(self, block_id: int) -> int:
        return int(self.db.execute(_CURSOR, {"block_id": block_id}).scalar_one())

    def lock_cursor(self, block_id: int) -> int:
        return int(self.db.execute(_LOCK_CURSOR, {"block_id": block_id}).scalar_one())

    def set_cursor(self, block_id: int, before: int, after: int) -> bool:
        moved = self.db.execute(
            _SET_CURSOR, {"for_block": block_id, "drawn_before": before, "drawn_after": after}
        ).first()
        return moved is not None

    # -- every draw (driver SQL) ---------------------------------------------------------
    def slot(self, block_id: int, slot: int) -> SlotState | None:
        row = SLOT(self.db, {"block_id": block_id, "slot": slot}).first()
        return None if row is None else SlotState(int(row[1]), int(row[2]))

    def slots_from(self, block_id: int, low: int, high: int) -> dict[int, SlotState]:
        rows = SLOTS_FROM(self.db, {"block_id": block_id, "low": low, "high": high})
        return {int(slot): SlotState(int(unit), int(set_by)) for slot, unit, set_by in rows}

    def set_slot(self, block_id: int, slot: int, state: SlotState) -> None:
        SET_SLOT(
            self.db,
            {"block_id": block_id, "slot": slot, "unit": state.unit, "set_by": state.set_by},
        )

    def drop_slot(self, block_id: int, slot: int) -> None:
        DROP_SLOT(self.db, {"block_id": block_id, "slot": slot})

    def dequeue(self, ticket_id: int) -> None:
        DEQUEUE_DRAW(self.db, {"ticket_id": ticket_id})

    def covered_tickets(self, ticket_ids: Sequence[int]) -> dict[int, Ticket]:
        rows = self.db.execute(_COVERED_TICKETS, {"ids": list(ticket_ids)})
        return {int(row.id): record_of(Ticket, row) for row in rows if row.state == "covered"}

    def round_logged(self, chain_id: str, round_number: int) -> bool:
        row = self.db.execute(
            select(drawn_rounds.c.round).where(
                drawn_rounds.c.chain_id == chain_id, drawn_rounds.c.round == round_number
            )
        ).first()
        return row is not None

    def mark_round_logged(self, chain_id: str, round_number: int) -> None:
        self.db.execute(insert(drawn_rounds).values(chain_id=chain_id, round=round_number))

    def chain_logged(self, chain_id: str) -> bool:
        row = self.db.execute(
            select(logged_beacon_chains.c.chain_id).where(
                logged_beacon_chains.c.chain_id == chain_id
            )
        ).first()
        return row is not None

    def mark_chain_logged(self, chain_id: str) -> None:
        self.db.execute(insert(logged_beacon_chains).values(chain_id=chain_id))

    def take_lease(self, holder: str, now_ms: int, until_ms: int) -> bool:
        taken = self.db.execute(
            _TAKE_LEASE, {"taker": holder, "now_ms": now_ms, "lease_until": until_ms}
        ).first()
        return taken is not None

    def lease_expiry(self) -> int:
        expires = self.db.execute(_LEASE_EXPIRY).scalar()
        return 0 if expires is None else int(expires)

    def resolve_ticket(self, ticket_id: int, **values: Any) -> bool:
        dialect = self.db.dialect
        for name in ("last_action_at", "finished_at"):
            if values[name] is not None:
                values[name] = to_db_time(values[name], dialect)
        return RESOLVE_TICKET(self.db, {"ticket_id": ticket_id, **values}).first() is not None

    def undrawn(self, block_id: int) -> int:
        sold = select(blocks.c.sold).where(blocks.c.id == block_id).scalar_subquery()
        left = self.db.execute(
            select(sold - func.coalesce(block_draws.c.drawn, 0)).where(
                block_draws.c.block_id == block_id
            )
        ).scalar()
        return 0 if left is None else int(left)
