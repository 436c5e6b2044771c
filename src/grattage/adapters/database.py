"""Engines for SQLite and PostgreSQL behind one code path.

SQLite: WAL with ``synchronous=FULL`` (a committed purchase survives a crash of the process or
the machine), a busy timeout, and ``BEGIN IMMEDIATE`` for write transactions so two writers
never deadlock upgrading a read lock; the writers of one process share commits
(:mod:`grattage.adapters.group_commit`). PostgreSQL: plain READ COMMITTED; the
repositories use atomic ``UPDATE … RETURNING`` and ``SELECT … FOR UPDATE`` where it matters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import QueuePool

WRITE_OPTION = "grattage_write"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(url: str, schema: str | None = None) -> Engine:
    """An engine for ``url``; ``schema`` (PostgreSQL) puts every table in that schema."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    connect_args: dict[str, Any] = {}
    if schema:
        connect_args["options"] = f"-csearch_path={schema}"
    return create_engine(
        url, connect_args=connect_args, pool_size=10, max_overflow=40, pool_pre_ping=True
    )


def _sqlite_engine(url: str) -> Engine:
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        poolclass=QueuePool,
        # Above the server's 40 request threads: a connection beyond pool_size is opened and
        # configured per checkout and closed after, which cost more than the reads it served.
        pool_size=48,
        max_overflow=16,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
    )

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event (below) issue BEGIN, not the driver.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, True)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine
