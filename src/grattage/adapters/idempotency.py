"""Idempotency keys: a purchase retried with the same key is answered, not sold again."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from grattage.adapters.tables import idempotency_keys


class SqlIdempotency:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def get(self, player_id: int, key: str) -> tuple[str, int | None] | None:
        row = self.db.execute(
            select(idempotency_keys.c.request_hash, idempotency_keys.c.ticket_id).where(
                idempotency_keys.c.player_id == player_id, idempotency_keys.c.key == key
            )
        ).first()
        return None if row is None else (row.request_hash, row.ticket_id)

    def add(self, player_id: int, key: str, request_hash: str, now: datetime) -> bool:
        dialect_insert = sqlite_insert if self.db.dialect.name == "sqlite" else postgresql_insert
        claimed = self.db.execute(
            dialect_insert(idempotency_keys)
            .values(player_id=player_id, key=key, request_hash=request_hash, created_at=now)
            .on_conflict_do_nothing()
            .returning(idempotency_keys.c.key)
        ).first()
        return claimed is not None

    def set_ticket(self, player_id: int, key: str, ticket_id: int) -> None:
        self.db.execute(
            update(idempotency_keys)
            .where(idempotency_keys.c.player_id == player_id, idempotency_keys.c.key == key)
            .values(ticket_id=ticket_id)
        )
