"""Operators (the back office's staff) and their sessions, apart from the players'."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from grattage.adapters.tables import operator_sessions, operators
from grattage.errors import AlreadyExists
from grattage.service.model import Operator, OperatorSessionRow


class SqlOperators:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(self, email: str, password_hash: str, now: datetime) -> int:
        try:
            with self.db.begin_nested():
                return int(
                    self.db.execute(
                        insert(operators)
                        .values(
                            email=email,
                            password_hash=password_hash,
                            created_at=now,
                            failed_logins=0,
                        )
                        .returning(operators.c.id)
                    ).scalar_one()
                )
        except IntegrityError:
            raise AlreadyExists(f"the operator {email!r} already exists") from None

    def by_email(self, email: str) -> Operator | None:
        row = self.db.execute(select(operators).where(operators.c.email == email)).first()
        if row is None:
            return None
        return Operator(row.id, row.email, row.password_hash, row.failed_logins, row.locked_until)

    def count_failed_log_in(self, account_id: int) -> int:
        return int(
            self.db.execute(
                update(operators)
                .where(operators.c.id == account_id)
                .values(failed_logins=operators.c.failed_logins + 1)
                .returning(operators.c.failed_logins)
            ).scalar_one()
        )

    def lock(self, account_id: int, until: datetime) -> None:
        self.db.execute(
            update(operators)
            .where(operators.c.id == account_id)
            .values(failed_logins=0, locked_until=until)
        )

    def clear_failed_log_ins(self, account_id: int) -> None:
        self.db.execute(
            update(operators)
            .where(operators.c.id == account_id)
            .values(failed_logins=0, locked_until=None)
        )

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

    def delete_session(self, token_hash: str) -> None:
        self.db.execute(
            operator_sessions.delete().where(operator_sessions.c.token_hash == token_hash)
        )
