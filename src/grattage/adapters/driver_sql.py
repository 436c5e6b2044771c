"""Hot-path statements in plain SQL, run straight on the driver's cursor.

A purchase runs about a dozen statements. Through SQLAlchemy each costs several times what
SQLite takes to run it — even ``exec_driver_sql`` builds an execution context and a result
object per statement — so these few are written once in portable SQL with ``:name``
parameters and run on the DBAPI connection underneath the SQLAlchemy one (SQLite takes
``:name``, psycopg ``%(name)s``), which SQLAlchemy documents as the way to reach the driver.
The statements still run inside the SQLAlchemy connection's transaction; a driver error is
wrapped in SQLAlchemy's exception classes exactly as SQLAlchemy would, and a lost connection is
invalidated, so callers handle both paths alike. Everything else goes through SQLAlchemy Core.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, MultipleResultsFound, NoResultFound

_NAMED = re.compile(r"(?<!:):(\w+)")


class DriverResult:
    """The rows a statement returned; the few of ``CursorResult``'s methods the hot path uses."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[Sequence[Any]]) -> None:
        self.rows = rows

    def __iter__(self) -> Iterator[Sequence[Any]]:
        return iter(self.rows)

    def first(self) -> Sequence[Any] | None:
        return self.rows[0] if self.rows else None

    def one(self) -> Sequence[Any]:
        if not self.rows:
            raise NoResultFound("No row was found when one was required")
        if len(self.rows) > 1:
            raise MultipleResultsFound("Multiple rows were found when exactly one was required")
        return self.rows[0]

    def scalar(self) -> Any:
        return self.rows[0][0] if self.rows else None

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalars(self) -> list[Any]:
        return [row[0] for row in self.rows]


class DriverSql:
    def __init__(self, sql: str) -> None:
        self.sql = " ".join(sql.split())
        self._pyformat = _NAMED.sub(r"%(\1)s", self.sql.replace("%", "%%"))
        self._returns_rows = self.sql.split(" ", 1)[0].upper() == "SELECT" or (
            " RETURNING " in self.sql.upper()
        )

    def __call__(self, connection: Connection, parameters: Any = None) -> DriverResult:
        """Run on ``connection``'s driver connection, in its current transaction."""
        sqlite = connection.dialect.name == "sqlite"
        text = self.sql if sqlite else self._pyformat
        parameters = parameters if parameters is not None else {}
        proxied = connection.connection
        cursor = proxied.cursor()
        try:
            if isinstance(parameters, list):
                cursor.executemany(text, parameters)
            else:
                cursor.execute(text, parameters)
            return DriverResult(list(cursor.fetchall()) if self._returns_rows else [])
        except connection.dialect.loaded_dbapi.Error as failure:
            if connection.dialect.is_disconnect(failure, proxied.dbapi_connection, cursor):
                connection.invalidate(failure)
            raise DBAPIError.instance(
                text, parameters, failure, connection.dialect.loaded_dbapi.Error
            ) from failure
        finally:
            cursor.close()


def db_time(connection: Connection, moment: datetime) -> Any:
    """A time as the schema stores it (naive UTC; SQLite as SQLAlchemy's text format)."""
    naive = moment.astimezone(UTC).replace(tzinfo=None)
    if connection.dialect.name == "sqlite":
        return naive.isoformat(" ", "microseconds")  # as strftime("%Y-%m-%d %H:%M:%S.%f"), faster
    return naive


def from_db_time(value: Any) -> datetime:
    """A stored time back as an aware UTC datetime (SQLite hands back its text)."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    assert isinstance(moment, datetime)
    return moment.replace(tzinfo=UTC)
