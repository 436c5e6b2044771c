"""The try mode's repository (:class:`grattage.service.try_ports.TryRepository`).

Play money changes in single conditional statements (``UPDATE … WHERE balance >= stake``), so
two purchases racing on one try session can never take it below zero; a try block's row is
held (``FOR UPDATE`` on PostgreSQL; SQLite has one writer) while a sale deals from it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from grattage.adapters.rows import record_of
from grattage.adapters.try_tables import (
    try_block_slots,
    try_blocks,
    try_movements,
    try_sessions,
    try_tickets,
)
from grattage.service.model import FinishedBy
from grattage.service.try_ports import (
    NewTryTicket,
    TryBlock,
    TryMovement,
    TryMovementKind,
    TrySession,
    TryTicket,
)

_S = try_sessions.c
_B = try_blocks.c
_T = try_tickets.c
_M = try_movements.c
_SLOT = try_block_slots.c


def _ticket(row: Any) -> TryTicket:
    return record_of(TryTicket, row)


class SqlTryPlay:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add_session(
        self, token_sha256: str, balance_cents: int, now: datetime, expires_at: datetime
    ) -> int:
        return int(
            self.db.execute(
                insert(try_sessions)
                .values(
                    token_sha256=token_sha256,
                    balance_cents=balance_cents,
                    tickets_bought=0,
                    created_at=now,
                    expires_at=expires_at,
                )
                .returning(_S.id)
            ).scalar_one()
        )

    def session(self, token_sha256: str, now: datetime, lock: bool = False) -> TrySession | None:
        query = select(try_sessions).where(_S.token_sha256 == token_sha256, _S.expires_at > now)
        if lock:
            query = query.with_for_update()
        row = self.db.execute(query).first()
        return None if row is None else record_of(TrySession, row)

    def debit(self, session_id: int, stake_cents: int, most_tickets: int) -> int | None:
        balance = self.db.execute(
            update(try_sessions)
            .where(
                _S.id == session_id,
                _S.balance_cents >= stake_cents,
                _S.tickets_bought < most_tickets,
            )
            .values(
                balance_cents=_S.balance_cents - stake_cents,
                tickets_bought=_S.tickets_bought + 1,
            )
            .returning(_S.balance_cents)
        ).scalar_one_or_none()
        return None if balance is None else int(balance)

    def credit(self, session_id: int, amount_cents: int) -> int:
        return int(
            self.db.execute(
                update(try_sessions)
                .where(_S.id == session_id)
                .values(balance_cents=_S.balance_cents + amount_cents)
                .returning(_S.balance_cents)
            ).scalar_one()
        )

    def open_block(self, game: str, table_digest: str, size: int, now: datetime) -> TryBlock:
        query = (
            select(_B.id, _B.size, _B.sold)
            .where(_B.game == game, _B.table_digest == table_digest, _B.sold < _B.size)
            .order_by(_B.id)
            .limit(1)
            .with_for_update()
        )
        row = self.db.execute(query).first()
        if row is not None:
            return TryBlock(id=int(row.id), size=int(row.size), sold=int(row.sold))
        block_id = self.db.execute(
            insert(try_blocks)
            .values(game=game, table_digest=table_digest, size=size, sold=0, created_at=now)
            .returning(_B.id)
        ).scalar_one()
        return TryBlock(id=int(block_id), size=size, sold=0)

    def take_position(self, block_id: int) -> None:
        self.db.execute(update(try_blocks).where(_B.id == block_id).values(sold=_B.sold + 1))

    def moved_tier(self, block_id: int, slot: int) -> int | None:
        tier = self.db.execute(
            select(_SLOT.tier).where(_SLOT.block_id == block_id, _SLOT.slot == slot)
        ).scalar_one_or_none()
        return None if tier is None else int(tier)

    def move(self, block_id: int, slot: int, tier: int) -> None:
        dialect = postgresql if self.db.dialect.name == "postgresql" else sqlite
        statement = dialect.insert(try_block_slots).values(block_id=block_id, slot=slot, tier=tier)
        self.db.execute(
            statement.on_conflict_do_update(
                index_elements=[_SLOT.block_id, _SLOT.slot], set_={"tier": tier}
            )
        )

    def forget_slot(self, block_id: int, slot: int) -> None:
        self.db.execute(
            delete(try_block_slots).where(_SLOT.block_id == block_id, _SLOT.slot == slot)
        )

    def add_ticket(self, ticket: NewTryTicket) -> int:
        return int(
            self.db.execute(
                insert(try_tickets).values(**ticket.__dict__).returning(_T.id)
            ).scalar_one()
        )

    def ticket(self, session_id: int, ticket_id: int, lock: bool = False) -> TryTicket | None:
        query = select(try_tickets).where(_T.id == ticket_id, _T.session_id == session_id)
        if lock:
            query = query.with_for_update()
        row = self.db.execute(query).first()
        return None if row is None else _ticket(row)

    def last_ticket(self, session_id: int) -> TryTicket | None:
        found = self.history(session_id, 1)
        return found[0] if found else None

    def history(self, session_id: int, limit: int) -> list[TryTicket]:
        rows = self.db.execute(
            select(try_tickets)
            .where(_T.session_id == session_id)
            .order_by(_T.id.desc())
            .limit(limit)
        )
        return [_ticket(row) for row in rows]

    def set_revealed(self, ticket_id: int, revealed: str) -> None:
        self.db.execute(update(try_tickets).where(_T.id == ticket_id).values(revealed=revealed))

    def finish(self, ticket_id: int, revealed: str, finished_by: FinishedBy, now: datetime) -> bool:
        changed = self.db.execute(
            update(try_tickets)
            .where(_T.id == ticket_id, _T.state == "playing")
            .values(state="finished", revealed=revealed, finished_by=finished_by, finished_at=now)
        ).rowcount
        return bool(changed)

    def set_balance_after(self, ticket_id: int, balance_after_cents: int) -> None:
        self.db.execute(
            update(try_tickets)
            .where(_T.id == ticket_id)
            .values(balance_after_cents=balance_after_cents)
        )

    def record(
        self,
        session_id: int,
        ticket_id: int | None,
        kind: TryMovementKind,
        amount_cents: int,
        balance_after_cents: int,
        now: datetime,
    ) -> None:
        self.db.execute(
            insert(try_movements).values(
                session_id=session_id,
                ticket_id=ticket_id,
                kind=kind,
                amount_cents=amount_cents,
                balance_after_cents=balance_after_cents,
                at=now,
            )
        )

    def movements(self, session_id: int) -> list[TryMovement]:
        rows = self.db.execute(
            select(try_movements).where(_M.session_id == session_id).order_by(_M.id)
        )
        return [record_of(TryMovement, row) for row in rows]

    def purge(self, now: datetime) -> int:
        expired = select(_S.id).where(_S.expires_at <= now).scalar_subquery()
        self.db.execute(delete(try_movements).where(_M.session_id.in_(expired)))
        self.db.execute(delete(try_tickets).where(_T.session_id.in_(expired)))
        return int(self.db.execute(delete(try_sessions).where(_S.expires_at <= now)).rowcount)
