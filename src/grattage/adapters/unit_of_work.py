"""The unit of work: one connection, one transaction, the repositories bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from grattage.adapters.accounts import SqlPlayers, SqlSessions
from grattage.adapters.audit_log import SqlAuditLog
from grattage.adapters.blocks import SealedChunks, SqlBlocks
from grattage.adapters.database import WRITE_OPTION, is_sqlite
from grattage.adapters.draws import SqlDraws
from grattage.adapters.emission_jobs import SqlEmissionJobs
from grattage.adapters.errors import database_errors_mapped
from grattage.adapters.group_commit import GroupCommitter, HeldBatch
from grattage.adapters.idempotency import SqlIdempotency
from grattage.adapters.identities import SqlIdentities
from grattage.adapters.lane_batch import UNKNOWN, LaneBatch, running_batch
from grattage.adapters.ledger import HouseAccounts, SqlLedger
from grattage.adapters.limits import SqlLimits
from grattage.adapters.login_attempts import SqlLogInAttempts
from grattage.adapters.operators import SqlOperators
from grattage.adapters.player_directory import SqlPlayerDirectory
from grattage.adapters.reconciliation import SqlReconciliation
from grattage.adapters.reports import SqlReports
from grattage.adapters.tickets import SqlTickets
from grattage.adapters.transparency_log import SqlTransparencyLog
from grattage.adapters.try_play import SqlTryPlay
from grattage.errors import OutcomeUnknown

_AUTOCOMMIT = "AUTOCOMMIT"


@dataclass
class ProcessCaches:
    """Facts that never change once in the database, remembered by the process."""

    house_accounts: HouseAccounts = field(default_factory=HouseAccounts)
    player_account_ids: dict[int, int] = field(default_factory=dict)
    sealed_chunks: SealedChunks = field(default_factory=SealedChunks)


@dataclass
class SqlRepositories:
    connection: Connection
    caches: ProcessCaches = field(default_factory=ProcessCaches)
    wallets_without_waiting: bool = False
    """In a lane batch: a held wallet is WalletBusy at once (adapters/lane_batch.py)."""

    def __post_init__(self) -> None:
        self.players = SqlPlayers(self.connection)
        self.sessions = SqlSessions(self.connection)
        # The wallets this transaction holds, which the ledger and the limits both lock.
        held_wallets: set[int] = set()
        self.ledger = SqlLedger(
            self.connection,
            self.caches.house_accounts,
            self.caches.player_account_ids,
            held_wallets,
            self.wallets_without_waiting,
        )
        self.blocks = SqlBlocks(self.connection, self.caches.sealed_chunks)
        self.tickets = SqlTickets(self.connection)
        self.idempotency = SqlIdempotency(self.connection)
        self.reconciliation = SqlReconciliation(self.connection)
        self.operators = SqlOperators(self.connection)
        self.audit_log = SqlAuditLog(self.connection)
        self.limits = SqlLimits(self.connection, self.caches.player_account_ids, held_wallets)
        self.reports = SqlReports(self.connection)
        self.identities = SqlIdentities(self.connection)
        self.emission_jobs = SqlEmissionJobs(self.connection)
        self.login_attempts = SqlLogInAttempts(self.connection)
        self.log = SqlTransparencyLog(self.connection)
        self.draws = SqlDraws(self.connection)
        self.player_directory = SqlPlayerDirectory(self.connection)
        self.try_play = SqlTryPlay(self.connection)  # play money only (service/try_mode.py)


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
            if write or self._group is not None:
                connection.execution_options(**{WRITE_OPTION: write})
            else:
                # A read on PostgreSQL runs in autocommit: under READ COMMITTED each of its
                # statements sees its own snapshot inside a transaction too, and BEGIN and
                # COMMIT were two round trips of the four of every request's session lookup.
                connection.execution_options(
                    **{WRITE_OPTION: write, "isolation_level": _AUTOCOMMIT}
                )
            body_ended = False
            try:
                with connection.begin():
                    yield SqlRepositories(connection, self._caches)
                    body_ended = True
            except DBAPIError as failed:
                # Only the COMMIT is left once the body ended: a connection that died there
                # may have been committed by the server (its answer lost), so "nothing was
                # kept" would be a lie — as in a lane batch (adapters/lane_batch.py).
                if write and body_ended and failed.connection_invalidated:
                    raise OutcomeUnknown(UNKNOWN) from failed
                raise

    @contextmanager
    def write(self) -> Iterator[SqlRepositories]:
        """A write transaction: commits when the block ends, rolls back on an exception.

        On SQLite, concurrent write transactions of this process share their commit (see
        :mod:`grattage.adapters.group_commit`); the block still ends only once it is durable.
        """
        with database_errors_mapped():
            if (lane_batch := running_batch()) is not None:
                with lane_batch.write(self._batch_repositories) as repositories:
                    yield repositories
                return
            if self._group is not None:
                with self._group.write() as repositories:
                    yield repositories
                return
            with self._transaction(write=True) as repositories:
                yield repositories

    def _batch_repositories(self, connection: Connection) -> SqlRepositories:
        return SqlRepositories(connection, self._caches, wallets_without_waiting=True)

    @property
    def holds_lane_batches(self) -> bool:
        """Whether a game's purchases can run in lane batches (PostgreSQL; SQLite has its
        group commit)."""
        return self._group is None

    def open_lane_batch(self, lane: str) -> LaneBatch:
        """A new batch for the purchases of ``lane`` (a game), its turn taken: waits while
        another batch of that game, in any process, is open. Run its work through
        :meth:`LaneBatch.run` on the calling thread, then :meth:`LaneBatch.commit` it."""
        assert self._group is None
        with database_errors_mapped():
            return LaneBatch(self.engine, lane)

    @property
    def holds_batches(self) -> bool:
        """Whether a batch runner can hold a batch of writes (SQLite's group commit)."""
        return self._group is not None

    def new_batch(self) -> HeldBatch:
        """A batch whose work will run on the calling thread, through :meth:`HeldBatch.run`."""
        return HeldBatch()

    def hold(self, batch: HeldBatch) -> None:
        """Open ``batch``: the work run in it joins it, uncommitted, until :meth:`release`."""
        assert self._group is not None
        with database_errors_mapped():
            self._group.hold(batch)

    def abandon(self, failure: BaseException) -> None:
        """Roll the held batch back: :meth:`release` then raises, none of it kept."""
        assert self._group is not None
        self._group.abandon_held(failure)

    def release(self) -> int:
        """Commit the held batch; raises :class:`Unavailable` when none of it was kept."""
        assert self._group is not None
        with database_errors_mapped():
            return self._group.release()

    @contextmanager
    def read(self) -> Iterator[SqlRepositories]:
        held = self._group.held_connection() if self._group is not None else None
        with database_errors_mapped():
            if (lane_batch := running_batch()) is not None:
                with lane_batch.read(self._batch_repositories) as repositories:
                    yield repositories
                return
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
