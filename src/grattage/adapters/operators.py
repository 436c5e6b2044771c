"""Operators (the back office's staff) and their sessions, apart from the players'."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, update

from grattage.adapters.rows import SqlAccountTable, record_of
from grattage.adapters.tables import operator_sessions, operators
from grattage.service.model import Operator, OperatorSessionRow


class SqlOperators(SqlAccountTable):
    table = operators

    def add(self, email: str, password_hash: str, now: datetime) -> int:
        return self._insert(
            f"the operator {email!r} already exists",
            email=email,
            password_hash=password_hash,
            created_at=now,
        )

    def by_email(self, email: str) -> Operator | None:
        row = self._by_email(email)
        return None if row is None else record_of(Operator, row)

    def add_session(self, token_hash: str, operator_id: int, now: datetime) -> None:
        self.db.execute(
            insert(operator_sessions).values(
                token_hash=token_hash, operator_id=operator_id, created_at=now, last_seen_at=now
            )
        )

    def find_session(self, token_hash: str) -> OperatorSessionRow | None:
        row = self.db.execute(
            select(
                operator_sessions.c.id,
                operator_sessions.c.operator_id,
                operator_sessions.c.last_seen_at,
                operators.c.email,
            )
            .join(operators, operators.c.id == operator_sessions.c.operator_id)
            .where(operator_sessions.c.token_hash == token_hash)
        ).first()
        if row is None:
            return None
        return OperatorSessionRow(row.id, row.operator_id, row.email, row.last_seen_at)

    def touch_session(self, session_id: int, now: datetime) -> None:
        self.db.execute(
            update(operator_sessions)
            .where(operator_sessions.c.id == session_id)
            .values(last_seen_at=now)
        )

    def delete_session(self, token_hash: str) -> bool:
        gone = self.db.execute(
            operator_sessions.delete().where(operator_sessions.c.token_hash == token_hash)
        )
        return bool(gone.rowcount)
