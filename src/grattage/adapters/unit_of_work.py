"""The unit of work: one connection, one transaction, the repositories bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection, Engine

from grattage.adapters.back_office import SqlAuditLog, SqlLimits, SqlOperators, SqlReports
from grattage.adapters.database import WRITE_OPTION, is_sqlite
from grattage.adapters.errors import database_errors_mapped
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
class ProcessCaches:
    """Facts that never change once in the database, remembered by the process."""

    house_ids: dict[str, int] = field(default_factory=dict)
    player_account_ids: dict[int, int] = field(default_factory=dict)
    open_blocks: dict[str, tuple[float, list[int]]] = field(default_factory=dict)
    """A hint only: the open blocks of each game as last seen (re-checked by every sale)."""


@dataclass
class SqlRepositories:
    connection: Connection
    caches: ProcessCaches = field(default_factory=ProcessCaches)

    def __post_init__(self) -> None:
        self.players = SqlPlayers(self.connection)
        self.sessions = SqlSessions(self.connection)
        self.ledger = SqlLedger(
            self.connection, self.caches.house_ids, self.caches.player_account_ids
        )
        self.blocks = SqlBlocks(self.connection, self.caches.open_blocks)
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
        self._caches = ProcessCaches()
        self._group: GroupCommitter | None = None
        if is_sqlite(engine):
            database = engine.url.database
            lock_path = (
                Path(f"{database}.write-lock") if database and database != ":memory:" else None
            )
            self._group = GroupCommitter(
                engine,
                lambda connection: SqlRepositories(connection, self._caches),
                lock_path=lock_path,
            )

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[SqlRepositories]:
        with self.engine.connect() as connection:
            connection.execution_options(**{WRITE_OPTION: write})
            with connection.begin():
                yield SqlRepositories(connection, self._caches)

    @contextmanager
    def write(self) -> Iterator[SqlRepositories]:
        """A write transaction: commits when the block ends, rolls back on an exception.

        On SQLite, concurrent write transactions of this process share their commit (see
        :mod:`grattage.adapters.group_commit`); the block still ends only once it is durable.
        """
        with database_errors_mapped():
            if self._group is not None:
                with self._group.write() as repositories:
                    yield repositories
                return
            with self._transaction(write=True) as repositories:
                yield repositories

    @property
    def holds_batches(self) -> bool:
        """Whether one thread can hold a batch of writes (SQLite's group commit)."""
        return self._group is not None

    def hold(self, thread_id: int) -> None:
        """Open a batch that ``thread_id``'s writes join, uncommitted, until :meth:`release`."""
        assert self._group is not None
        with database_errors_mapped():
            self._group.hold(thread_id)

    def release(self) -> int:
        """Commit the held batch; raises :class:`Unavailable` when none of it was kept."""
        assert self._group is not None
        with database_errors_mapped():
            return self._group.release()

    @contextmanager
    def read(self) -> Iterator[SqlRepositories]:
        held = self._group.held_connection() if self._group is not None else None
        with database_errors_mapped():
            if held is not None:
                yield SqlRepositories(held, self._caches)
                return
            with self._transaction(write=False) as repositories:
                yield repositories

    def close(self) -> None:
        """Release the connections (tests, shutdown)."""
        if self._group is not None:
            self._group.close()
        self.engine.dispose()
