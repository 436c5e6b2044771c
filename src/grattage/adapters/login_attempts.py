"""The lock-out's counters: one atomic statement counts an attempt and answers the count.

Counting is a single ``INSERT … ON CONFLICT DO UPDATE … RETURNING`` (the known-device count a
plain ``UPDATE … RETURNING``): the database serialises concurrent attempts on the row, so
each one gets its own number whatever the number of threads or processes, and the service
checks the password only for the numbers within its threshold.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, case, delete, literal, or_, update
from sqlalchemy.dialects import postgresql, sqlite

from grattage.adapters.db_time import UtcDateTime, from_db_time
from grattage.adapters.tables import login_attempts

_T = login_attempts.c


class SqlLogInAttempts:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def _windowed(self, now: datetime, window_seconds: int) -> dict[str, Any]:
        """The new values of a counted row: one more attempt in its window, or the first of a
        new window that opens now if the row's has passed."""
        at = literal(now, UtcDateTime)
        passed = _T.window_start <= literal(now - timedelta(seconds=window_seconds), UtcDateTime)
        return {
            "attempts": case((passed, 1), else_=_T.attempts + 1),
            "window_start": case((passed, at), else_=_T.window_start),
        }

    def count(
        self, scope: str, subject: str, now: datetime, window_seconds: int
    ) -> tuple[int, datetime]:
        dialect = postgresql if self.db.dialect.name == "postgresql" else sqlite
        statement = dialect.insert(login_attempts).values(
            scope=scope, subject=subject, window_start=now, attempts=1
        )
        statement = statement.on_conflict_do_update(
            index_elements=[_T.scope, _T.subject], set_=self._windowed(now, window_seconds)
        ).returning(_T.attempts, _T.window_start)
        attempts, window_start = self.db.execute(statement).one()
        return int(attempts), from_db_time(window_start)

    def count_if_present(
        self, scope: str, subject: str, now: datetime, window_seconds: int
    ) -> tuple[int, datetime] | None:
        row = self.db.execute(
            update(login_attempts)
            .where(_T.scope == scope, _T.subject == subject)
            .values(self._windowed(now, window_seconds))
            .returning(_T.attempts, _T.window_start)
        ).first()
        return None if row is None else (int(row[0]), from_db_time(row[1]))

    def start_over(self, scope: str, subject: str, now: datetime) -> None:
        dialect = postgresql if self.db.dialect.name == "postgresql" else sqlite
        statement = dialect.insert(login_attempts).values(
            scope=scope, subject=subject, window_start=now, attempts=0
        )
        self.db.execute(
            statement.on_conflict_do_update(
                index_elements=[_T.scope, _T.subject],
                set_={"attempts": 0, "window_start": literal(now, UtcDateTime)},
            )
        )

    def forget(self, scope: str, subject: str) -> None:
        self.db.execute(delete(login_attempts).where(_T.scope == scope, _T.subject == subject))

    def forget_older(self, older_than: dict[str, datetime]) -> None:
        self.db.execute(
            delete(login_attempts).where(
                or_(
                    *(
                        (_T.scope == scope) & (_T.window_start < literal(when, UtcDateTime))
                        for scope, when in older_than.items()
                    )
                )
            )
        )
