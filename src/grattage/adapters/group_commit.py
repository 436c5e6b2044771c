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
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, RootTransaction

from grattage.adapters.database import WRITE_OPTION
from grattage.errors import Unavailable

MAX_BATCH = 64
"""Transactions one commit may hold: bounds what waits behind a long queue."""


class GroupCommitter:
    def __init__(
        self,
        engine: Engine,
        make_repositories: Callable[[Connection], Any],
        lock_path: Path | None = None,
    ) -> None:
        self._engine = engine
        self._lock_path = lock_path
        self._lock_file: int | None = None
        self._make_repositories = make_repositories
        self._condition = threading.Condition()
        self._busy = False  # a transaction is running statements on the connection
        self._queued = 0  # transactions waiting for their turn
        self._batch = 0  # transactions in the open, uncommitted batch
        self._generation = 0  # number of the open batch
        self._committed = 0  # last batch committed
        self._failures: dict[int, BaseException] = {}
        self._connection: Connection | None = None
        self._transaction: RootTransaction | None = None

    def _begin_if_needed(self) -> Connection:
        if self._connection is None or self._connection.closed:
            self._connection = self._engine.connect()
            self._connection.execution_options(**{WRITE_OPTION: True})
        if self._transaction is None:
            self._lock_processes()
            try:
                self._transaction = self._connection.begin()
            except BaseException:
                self._unlock_processes()
                raise
            self._generation += 1
            self._failures.pop(self._generation - MAX_BATCH * 4, None)
        return self._connection

    @contextmanager
    def write(self) -> Iterator[Any]:
        with self._condition:
            self._queued += 1
            while self._busy:
                self._condition.wait()
            self._busy = True
            self._queued -= 1
        try:
            connection = self._begin_if_needed()
            generation = self._generation
        except BaseException:
            with self._condition:
                self._busy = False
                self._condition.notify_all()
            raise
        error: BaseException | None = None
        savepoint = connection.begin_nested()
        try:
            yield self._make_repositories(connection)
            savepoint.commit()
        except BaseException as raised:
            error = raised
            if savepoint.is_active:
                savepoint.rollback()
        with self._condition:
            self._batch += 1
            if self._queued == 0 or self._batch >= MAX_BATCH:
                self._commit(generation)
            self._busy = False
            self._condition.notify_all()
            while error is None and self._committed < generation:
                if generation in self._failures:
                    break
                self._condition.wait()
            failure = self._failures.get(generation)
        if error is not None:
            raise error
        if failure is not None:
            raise Unavailable("the database could not save this change; retry") from failure

    def _commit(self, generation: int) -> None:
        """Commit the open batch (called holding the condition, with the connection idle)."""
        transaction, self._transaction = self._transaction, None
        self._batch = 0
        assert transaction is not None
        try:
            transaction.commit()
        except Exception as failed:
            self._failures[generation] = failed
            if self._connection is not None:
                self._connection.invalidate()
                self._connection = None
            return
        finally:
            self._unlock_processes()
        self._committed = generation

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
        with self._condition:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
            if self._lock_file is not None:
                os.close(self._lock_file)
                self._lock_file = None
