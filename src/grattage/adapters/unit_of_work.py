"""The unit of work: one connection, one transaction, the repositories bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection, Engine

from grattage.adapters.back_office import SqlAuditLog, SqlLimits, SqlOperators, SqlReports
from grattage.adapters.database import WRITE_OPTION, is_sqlite
from grattage.adapters.group_commit import GroupCommitter
from grattage.adapters.repositories import (
    SqlAudit,
    SqlBlocks,
    SqlIdempotency,
    SqlLedger,
    SqlPlayers,
    SqlSessions,
    SqlTickets,
)


@dataclass
class SqlRepositories:
    connection: Connection
    house_ids: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.players = SqlPlayers(self.connection)
        self.sessions = SqlSessions(self.connection)
        self.ledger = SqlLedger(self.connection, self.house_ids)
        self.blocks = SqlBlocks(self.connection)
        self.tickets = SqlTickets(self.connection)
        self.idempotency = SqlIdempotency(self.connection)
        self.audit = SqlAudit(self.connection)
        self.operators = SqlOperators(self.connection)
        self.audit_log = SqlAuditLog(self.connection)
        self.limits = SqlLimits(self.connection)
        self.reports = SqlReports(self.connection)


class SqlUnitOfWork:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._house_ids: dict[str, int] = {}
        self._group: GroupCommitter | None = None
        if is_sqlite(engine):
            database = engine.url.database
            lock_path = (
                Path(f"{database}.write-lock") if database and database != ":memory:" else None
            )
            self._group = GroupCommitter(
                engine,
                lambda connection: SqlRepositories(connection, self._house_ids),
                lock_path=lock_path,
            )

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[SqlRepositories]:
        with self.engine.connect() as connection:
            connection.execution_options(**{WRITE_OPTION: write})
            with connection.begin():
                yield SqlRepositories(connection, self._house_ids)

    @contextmanager
    def write(self) -> Iterator[SqlRepositories]:
        """A write transaction: commits when the block ends, rolls back on an exception.

        On SQLite, concurrent write transactions of this process share their commit (see
        :mod:`grattage.adapters.group_commit`); the block still ends only once it is durable.
        """
        if self._group is not None:
            with self._group.write() as repositories:
                yield repositories
            return
        with self._transaction(write=True) as repositories:
            yield repositories

    @contextmanager
    def read(self) -> Iterator[SqlRepositories]:
        with self._transaction(write=False) as repositories:
            yield repositories

    def close(self) -> None:
        """Release the connections (tests, shutdown)."""
        if self._group is not None:
            self._group.close()
        self.engine.dispose()
