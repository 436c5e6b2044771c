"""The one time codec: aware UTC datetimes in Python, naive UTC in the database.

SQLite and PostgreSQL then compare stored times the same way. SQLite has no time type: a time
is stored as text in SQLAlchemy's format (``YYYY-MM-DD HH:MM:SS.ffffff``), which sorts as
the times do. Both the SQLAlchemy column type (:class:`UtcDateTime`) and the statements run on
the driver (:mod:`grattage.adapters.driver_sql`) go through :func:`to_db_time` and
:func:`from_db_time`, so a time reads back the same whichever path wrote it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


def to_db_time(moment: datetime, dialect: Dialect) -> datetime | str:
    """``moment`` as the database stores it: naive UTC (on SQLite, as its text)."""
    naive = moment.astimezone(UTC).replace(tzinfo=None)
    if dialect.name == "sqlite":
        return naive.isoformat(" ", "microseconds")  # as SQLAlchemy writes it, but faster
    return naive


def from_db_time(value: datetime | str) -> datetime:
    """A stored time (SQLite's text, or the naive datetime psycopg returns) as aware UTC."""
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.replace(tzinfo=UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A time column: the codec above in both directions, in place of SQLAlchemy's own
    conversion (the column is still a plain ``DateTime`` to the schema and the migrations)."""

    impl = DateTime(timezone=False)
    cache_ok = True

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any]:
        def process(value: Any) -> Any:
            return None if value is None else to_db_time(value, dialect)

        return process

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any]:
        def process(value: Any) -> datetime | None:
            return None if value is None else from_db_time(value)

        return process
