"""The audit log: an append-only hash chain of what operators and the system did."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from sqlalchemy import Connection, insert, select, update

from grattage.adapters.tables import audit_head, audit_log
from grattage.service.model import AuditEntry

_COLUMNS = tuple(audit_log.c[field.name] for field in fields(AuditEntry))
"""An entry's columns, named as its fields."""


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(**row._mapping)


class SqlAuditLog:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def lock_head(self) -> tuple[int, str]:
        """The last entry's (id, hash), locked until the transaction ends: appends queue here."""
        row = self.db.execute(
            select(audit_head.c.last_id, audit_head.c.last_hash)
            .where(audit_head.c.id == 1)
            .with_for_update()
        ).one()
        return int(row.last_id), str(row.last_hash)

    def head(self) -> tuple[int, str]:
        row = self.db.execute(
            select(audit_head.c.last_id, audit_head.c.last_hash).where(audit_head.c.id == 1)
        ).one()
        return int(row.last_id), str(row.last_hash)

    def append(self, entry: AuditEntry) -> None:
        self.db.execute(insert(audit_log).values(**asdict(entry)))
        self.db.execute(
            update(audit_head)
            .where(audit_head.c.id == 1)
            .values(last_id=entry.id, last_hash=entry.hash)
        )

    def entries(self, after: int = 0, limit: int = 10_000) -> list[AuditEntry]:
        rows = self.db.execute(
            select(*_COLUMNS).where(audit_log.c.id > after).order_by(audit_log.c.id).limit(limit)
        )
        return [_entry(row) for row in rows]

    def latest(self, limit: int) -> list[AuditEntry]:
        rows = self.db.execute(select(*_COLUMNS).order_by(audit_log.c.id.desc()).limit(limit))
        return [_entry(row) for row in rows]
