"""Hot-path statements in plain SQL, run straight through the driver.

A purchase runs about a dozen statements; through SQLAlchemy's expression layer each costs
more CPU than SQLite takes to run it. These few are written once in portable SQL with
``:name`` parameters and handed to the driver with the right parameter style (SQLite takes
``:name``, psycopg ``%(name)s``); everything else goes through SQLAlchemy Core.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

_NAMED = re.compile(r"(?<!:):(\w+)")


class DriverSql:
    def __init__(self, sql: str) -> None:
        self.sql = " ".join(sql.split())
        self._pyformat = _NAMED.sub(r"%(\1)s", self.sql.replace("%", "%%"))

    def __call__(self, connection: Connection, parameters: Any = None) -> Any:
        """The driver's result (a SQLAlchemy ``CursorResult``)."""
        text = self.sql if connection.dialect.name == "sqlite" else self._pyformat
        return connection.exec_driver_sql(text, parameters if parameters is not None else {})


def db_time(connection: Connection, moment: datetime) -> Any:
    """A time as the schema stores it (naive UTC; SQLite as SQLAlchemy's text format)."""
    naive = moment.astimezone(UTC).replace(tzinfo=None)
    if connection.dialect.name == "sqlite":
        return naive.strftime("%Y-%m-%d %H:%M:%S.%f")
    return naive


def from_db_time(value: Any) -> datetime:
    """A stored time back as an aware UTC datetime (SQLite hands back its text)."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    assert isinstance(moment, datetime)
    return moment.replace(tzinfo=UTC)
