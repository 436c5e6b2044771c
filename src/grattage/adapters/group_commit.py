"""Group commit for SQLite: concurrent write transactions of a process share one commit.

With ``synchronous=FULL`` every SQLite commit waits for an fsync, and SQLite has one writer at
a time, so committing each purchase alone caps sales at one fsync each. Here the write
transactions of a process run one after the other on one connection, each inside its own
SAVEPOINT (a refusal rolls back only its own work), and the last one of a run of queued
transactions commits them all at once. A caller returns only after the commit that holds its
work, so an acknowledged purchase is still durable; if that commit fails, every caller of the
batch gets the error and nothing of the batch is kept.

Between processes (``serve --workers N``) a batch holds an exclusive ``flock`` on a file next
to the database from BEGIN to COMMIT: a waiting process sleeps in the kernel and wakes the
moment the lock is free, where SQLite's busy handler would poll with sleeps of up to 100 ms.

A batch runner can also *hold* a batch (:meth:`GroupCommitter.hold`): the work it runs through
:meth:`HeldBatch.run` then joins the batch without waiting for a commit, until
:meth:`GroupCommitter.release` commits it all. The server's purchases use it from the event loop
(see ``entrypoints/http/batching.py``), so a sale runs without handing the GIL back and forth
between request threads; whoever holds must not acknowledge anything before ``release`` has
returned. What joins is told by a :class:`~contextvars.ContextVar` that ``run`` sets, not by
the thread: other code on the runner's thread (the event loop's other tasks) joins nothing, and
touching the database there while the batch is held raises at once — it would otherwise wait
for a turn the held batch can only give back once that same thread moves on.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, RootTransaction

from grattage.adapters.database import WRITE_OPTION
from grattage.adapters.driver_sql import RELEASE_SAVEPOINT, ROLLBACK_TO_SAVEPOINT, SAVEPOINT
from grattage.errors import Unavailable

T = TypeVar("T")

WRITES_PER_SHARED_COMMIT = 64
"""Queued write transactions one commit may hold: bounds what waits behind a long queue."""

_RUNNING_IN: ContextVar[HeldBatch | None] = ContextVar("grattage_held_batch", default=None)


class HeldBatch:
    """A batch one runner holds open: what it runs through :meth:`run` joins it.

    Made on the thread that will run the batch's work, which is remembered only to catch
    mistakes (see :meth:`GroupCommitter.write`)."""

    def __init__(self) -> None:
        self.runner_thread = threading.get_ident()

    def run(self, work: Callable[[], T]) -> T:
        """``work()`` inside the batch: its writes and reads go to the held connection."""
        token = _RUNNING_IN.set(self)
        try:
            return work()
        finally:
            _RUNNING_IN.reset(token)


class OutsideTheHeldBatchError(RuntimeError):
    """The database was touched on a held batch's thread, but not through the batch."""


class _Batch:
    """The transactions one commit holds; its callers wait on ``done``."""

    def __init__(self, transaction: RootTransaction) -> None:
        self.transaction = transaction
        self.size = 0
        self.done = threading.Event()
        self.failure: BaseException | None = None


class _Refusal:
    """What a write's body raised, if anything."""

    error: BaseException | None = None


class GroupCommitter:
    def __init__(
        self,
        engine: Engine,
        make_repositories: Callable[[Connection], Any],
        lock_path: Path | None = None,
    ) -> None:
        self._engine = engine
        self._make_repositories = make_repositories
        self._lock_path = lock_path
        self._lock_file: int | None = None
        # Plain locks, not a Condition: waking a crowd of waiters on every commit cost more
        # CPU than the sales themselves.
        self._turn = threading.Lock()  # held while a transaction uses the connection
        self._counter = threading.Lock()
        self._queued = 0  # transactions waiting for their turn
        self._connection: Connection | None = None
        self._batch: _Batch | None = None
        self._held: HeldBatch | None = None
        self._hold_failure: BaseException | None = None

    def _open_batch(self) -> tuple[Connection, _Batch]:
        if self._connection is None or self._connection.closed:
            self._connection = self._engine.connect()
            self._connection.execution_options(**{WRITE_OPTION: True})
        if self._batch is None:
            self._lock_processes()
            try:
                self._batch = _Batch(self._connection.begin())
            except BaseException:
                self._unlock_processes()
                raise
        return self._connection, self._batch

    def _joins_held_batch(self) -> bool:
        """Whether the caller runs inside the held batch; raises if it is on the batch's
        thread but outside it (waiting for the turn there would never end)."""
        held = self._held
        if held is None:
            return False
        if _RUNNING_IN.get() is held:
            return True
        if held.runner_thread == threading.get_ident():
            raise OutsideTheHeldBatchError(
                "the database was used on the thread of a held batch outside HeldBatch.run: "
                "it would wait for the batch, which waits for this thread"
            )
        return False

    @contextmanager
    def write(self) -> Iterator[Any]:
        if self._joins_held_batch():
            with self._held_write() as repositories:
                yield repositories
            return
        with self._counter:
            self._queued += 1
        self._turn.acquire()
        with self._counter:
            self._queued -= 1
        try:
            connection, batch = self._open_batch()
        except BaseException:
            self._turn.release()
            raise
        refusal = _Refusal()
        try:
            with self._savepoint(connection, refusal) as repositories:
                yield repositories
        except BaseException as broken:
            # The connection failed under us: the whole batch is lost, and all its callers
            # must hear it (none of them has answered yet).
            self._abandon(batch, broken)
            self._turn.release()
            raise
        batch.size += 1
        with self._counter:
            last = self._queued == 0 or batch.size >= WRITES_PER_SHARED_COMMIT
        if last:
            self._commit(batch)
        self._turn.release()
        if refusal.error is not None:
            raise refusal.error
        batch.done.wait()
        if batch.failure is not None:
            raise Unavailable("the database could not save this change; retry") from batch.failure

    def hold(self, batch: HeldBatch) -> None:
        """Take the turn and open ``batch``: what runs in it joins until ``release``.

        Blocks while other writers (of this process or another) have the database: call it
        from a helper thread, not the batch's own."""
        self._turn.acquire()
        try:
            self._open_batch()
        except BaseException:
            self._turn.release()
            raise
        self._hold_failure = None
        self._held = batch

    def release(self) -> int:
        """Commit the held batch (an fsync: call it from a helper thread); how many writes it held.

        Raises :class:`Unavailable` if the batch could not be saved: then none of its writes
        was kept, and every one of them must be reported as failed."""
        batch, failure = self._batch, self._hold_failure
        self._held = None
        self._hold_failure = None
        try:
            if batch is not None:
                self._commit(batch)
                failure = failure or batch.failure
        finally:
            self._turn.release()
        if failure is not None:
            raise Unavailable("the database could not save this change; retry") from failure
        return 0 if batch is None else batch.size

    def abandon_held(self, failure: BaseException) -> None:
        """Roll the held batch back now: :meth:`release` then keeps none of it and raises, so
        that every write it held is answered as failed (called on the batch's own thread)."""
        batch = self._batch
        if self._held is None or self._hold_failure is not None or batch is None:
            return
        self._hold_failure = failure
        self._abandon(batch, failure)

    def held_connection(self) -> Connection | None:
        """The held batch's connection when the caller runs in it: its reads go there (no
        connection to check out, and they see the batch's own writes)."""
        if not self._joins_held_batch() or self._hold_failure is not None:
            return None
        return self._connection

    @contextmanager
    def _held_write(self) -> Iterator[Any]:
        if self._hold_failure is not None:  # the batch is already lost: add nothing to it
            raise Unavailable("the database could not save this change; retry")
        connection, batch = self._connection, self._batch
        assert connection is not None and batch is not None
        refusal = _Refusal()
        try:
            with self._savepoint(connection, refusal) as repositories:
                yield repositories
        except BaseException as broken:
            self._hold_failure = broken
            self._abandon(batch, broken)
            raise Unavailable("the database could not save this change; retry") from broken
        batch.size += 1
        if refusal.error is not None:
            raise refusal.error

    @contextmanager
    def _savepoint(self, connection: Connection, refusal: _Refusal) -> Iterator[Any]:
        """The body in a savepoint of its own: an exception from it rolls back only its own
        work and is kept in ``refusal`` for the caller to raise once the batch is settled.
        Plain SQL savepoints: SQLAlchemy's nested transactions cost more than the sale."""
        SAVEPOINT(connection)
        try:
            yield self._make_repositories(connection)
        except BaseException as raised:
            refusal.error = raised
            ROLLBACK_TO_SAVEPOINT(connection)
        RELEASE_SAVEPOINT(connection)

    def _commit(self, batch: _Batch) -> None:
        """Commit the open batch (called holding the turn) and wake its callers."""
        self._batch = None
        try:
            batch.transaction.commit()
        except Exception as failed:
            batch.failure = failed
            self._drop_connection()
        finally:
            self._unlock_processes()
            batch.done.set()

    def _abandon(self, batch: _Batch, failure: BaseException) -> None:
        """Roll the open batch back (called holding the turn) and wake its callers."""
        self._batch = None
        batch.failure = failure
        try:
            batch.transaction.rollback()
        except Exception:  # the connection is being dropped anyway
            pass
        finally:
            self._drop_connection()
            self._unlock_processes()
            batch.done.set()

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.invalidate()
            self._connection = None

    def _lock_processes(self) -> None:
        if self._lock_path is None:
            return
        if self._lock_file is None:
            self._lock_file = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock_file, fcntl.LOCK_EX)

    def _unlock_processes(self) -> None:
        if self._lock_file is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._turn:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
            if self._lock_file is not None:
                os.close(self._lock_file)
                self._lock_file = None
