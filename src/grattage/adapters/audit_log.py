"""The audit log: an append-only hash chain of what operators and the system did."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, insert, select, update

from grattage.adapters.tables import audit_head, audit_log
from grattage.service.model import AuditEntry


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        created_at=row.created_at,
        actor=row.actor,
        action=row.action,
        subject=row.subject,
        details=row.details,
        prev_hash=row.prev_hash,
        hash=row.hash,
    )


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
        self.db.execute(
            insert(audit_log).values(
                id=entry.id,
                created_at=entry.created_at,
                actor=entry.actor,
                action=entry.action,
                subject=entry.subject,
                details=entry.details,
                prev_hash=entry.prev_hash,
                hash=entry.hash,
            )
        )
        self.db.execute(
            update(audit_head)
            .where(audit_head.c.id == 1)
            .values(last_id=entry.id, last_hash=entry.hash)
        )

    def entries(self, after: int = 0, limit: int = 10_000) -> list[AuditEntry]:
        rows = self.db.execute(
            select(audit_log).where(audit_log.c.id > after).order_by(audit_log.c.id).limit(limit)
        )
        return [_entry(row) for row in rows]

    def latest(self, limit: int) -> list[AuditEntry]:
        rows = self.db.execute(select(audit_log).order_by(audit_log.c.id.desc()).limit(limit))
        return [_entry(row) for row in rows]
