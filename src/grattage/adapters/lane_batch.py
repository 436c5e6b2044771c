"""PostgreSQL: the purchases of one game run in batches, one transaction each, by one thread.

A sale of a drawn game locks the game's one open block row (its index n and receipt chain)
until it commits, so on PostgreSQL the sales of a game were serial on that row, each holding
it for its last statements *and its commit* (a WAL flush): about 160 sales/s, whatever the
number of workers. A batch runs the purchases queued for a game one after the other on one
connection, each inside a SAVEPOINT of its own (a refusal rolls back only its own work), and
commits them all at once: the row is taken once per batch, and one flush holds them all.

Batches of the same game, in the same or another worker process, take their turns on the
game's open block rows, which a batch locks **first**, before any purchase runs (so before any
wallet): a batch that held a player's wallet (debited) while waiting for the block row held by
another batch, which then waited for that wallet, would deadlock; a batch waiting for its turn
holds nothing. Held by someone else (a hung transaction), the rows are waited for once per
batch, up to the lock timeout in all (PostgreSQL's own ``lock_timeout`` counts each lock of a
row apart: a second waiter waited twice as long), and the batch's purchases, with those
queued meanwhile, are then all answered 503 — not one lock timeout after the other. (An
advisory lock per game, taken before the rows, made the batches of both workers wait for a
hung row one after the other: 8 s for a purchase.)
A batch never waits for a wallet, though: it holds the wallets of its earlier purchases, and
the transaction holding the one it wants may want one of those — the drawer credits a round's
winners in one transaction, and in the bench it deadlocked with the batches every few seconds
(a second's stall for the game each time, deadlock_timeout). Inside a batch a wallet is locked
``NOWAIT`` (adapters/ledger.py); held elsewhere, the purchase is :class:`WalletBusy`, rolled
back to its savepoint, and the lane runs it again in a later batch, for as long as a purchase
would have waited for that wallet alone (entrypoints/http/batching.py).

Nothing is acknowledged before the batch's commit has returned (the runner answers after
:meth:`LaneBatch.commit`); if that commit fails, every purchase of the batch is answered 503
and none was kept — as a single purchase's failed commit is — except when the connection
died during the COMMIT itself: then the outcome is unknown (503 ``outcome_unknown``), and a
retry with the same Idempotency-Key answers the kept purchase or makes it. What joins a
batch is told by a :class:`~contextvars.ContextVar` that :meth:`LaneBatch.run` sets: the
unit of work's ``write`` and ``read`` go to the batch's connection there (reads see the
batch's own writes: an Idempotency-Key replayed within the same batch finds its ticket).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, RootTransaction
from sqlalchemy.exc import DBAPIError

from grattage.adapters.database import WRITE_OPTION
from grattage.adapters.driver_sql import (
    LOCK_OPEN_BLOCKS,
    LOCK_WAIT_AS_STATEMENT_LIMIT,
    RELEASE_SAVEPOINT,
    ROLLBACK_TO_SAVEPOINT,
    SAVEPOINT,
    STATEMENT_LIMIT_RESET,
    defer_on,
    flush_deferred,
    stop_deferring,
)
from grattage.errors import OutcomeUnknown, Unavailable

T = TypeVar("T")


_RUNNING_IN: ContextVar[LaneBatch | None] = ContextVar("grattage_lane_batch", default=None)

LOST = "the database could not save this change; retry"
UNKNOWN = (
    "the connection to the database was lost during the commit: this purchase may have been"
    " kept; retry with the same Idempotency-Key to learn which"
)


def running_batch() -> LaneBatch | None:
    """The lane batch the caller runs in, if any."""
    return _RUNNING_IN.get()


class LaneBatch:
    """One transaction on one connection, open until :meth:`commit`; its turn taken."""

    def __init__(self, engine: Engine, lane: str) -> None:
        self.size = 0
        self._failure: BaseException | None = None
        self.connection: Connection = engine.connect()
        try:
            self.connection.execution_options(**{WRITE_OPTION: True})
            self._transaction: RootTransaction = self.connection.begin()
            # What needs no answer goes with the next statement that does (driver_sql.py):
            # the limit with the lock, the reset with the first purchase's first statement.
            defer_on(self.connection)
            LOCK_WAIT_AS_STATEMENT_LIMIT(self.connection)
            # Waited for, the rows are those that were open when this statement began: if the
            # one it waited for ended meanwhile, it locked none, and the next block is open.
            if not LOCK_OPEN_BLOCKS(self.connection, {"game": lane}).rows:
                LOCK_OPEN_BLOCKS(self.connection, {"game": lane})
            STATEMENT_LIMIT_RESET(self.connection)
        except BaseException:
            stop_deferring(self.connection)
            self.connection.invalidate()
            self.connection.close()
            raise

    def run(self, work: Callable[[], T]) -> T:
        """``work()`` inside the batch: its writes and reads go to the batch's connection."""
        token = _RUNNING_IN.set(self)
        try:
            return work()
        finally:
            _RUNNING_IN.reset(token)

    @contextmanager
    def write(self, make_repositories: Callable[[Connection], Any]) -> Iterator[Any]:
        """A write of the batch, in a savepoint of its own: an exception from its body rolls
        back only its own work, and is raised to its caller."""
        self._check_whole()
        try:
            SAVEPOINT(self.connection)
        except BaseException as broken:
            self._failure = broken
            raise
        try:
            yield make_repositories(self.connection)
            # What it deferred is sent before it ends: an error there is its own, rolled back
            # to its savepoint like any other (its RELEASE alone waits for the next statement).
            flush_deferred(self.connection)
        except BaseException:
            try:
                ROLLBACK_TO_SAVEPOINT(self.connection)
                RELEASE_SAVEPOINT(self.connection)
            except BaseException as broken:  # the connection went: the whole batch is lost
                self._failure = broken
            raise
        try:
            RELEASE_SAVEPOINT(self.connection)  # deferred: sent with the next statement
        except BaseException as broken:
            self._failure = broken
            raise
        self.size += 1

    @contextmanager
    def read(self, make_repositories: Callable[[Connection], Any]) -> Iterator[Any]:
        """A read on the batch's connection: a database error in it aborts the transaction,
        so the batch is lost (nothing of it will be kept)."""
        self._check_whole()
        try:
            yield make_repositories(self.connection)
        except DBAPIError as broken:
            self._failure = broken
            raise

    def commit(self) -> int:
        """Commit the batch (the connection then goes back to the pool); how many writes it
        held. Raises :class:`Unavailable` when none of it was kept."""
        try:
            if self._failure is not None:
                with suppress(DBAPIError):  # the connection is dropped below anyway
                    self._transaction.rollback()
                raise Unavailable(LOST) from self._failure
            try:
                flush_deferred(self.connection)  # a failure here: COMMIT was never sent
            except DBAPIError as failed:
                raise Unavailable(LOST) from failed
            try:
                self._transaction.commit()
            except DBAPIError as failed:
                # A COMMIT the server refused was rolled back; one whose connection died may
                # have been kept (the server commits, the answer is lost): say so, never
                # "nothing was kept" (cluster test of a cut link, issue 17).
                if failed.connection_invalidated:
                    raise OutcomeUnknown(UNKNOWN) from failed
                raise Unavailable(LOST) from failed
        except BaseException:
            stop_deferring(self.connection)  # before the connection goes
            self.connection.invalidate()
            raise
        else:
            stop_deferring(self.connection)
        finally:
            self.connection.close()
        return self.size

    def _check_whole(self) -> None:
        if self._failure is not None:  # already lost: add nothing to it
            raise Unavailable(LOST) from self._failure
