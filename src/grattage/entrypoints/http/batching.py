"""Where the buy route runs its work: in batches on the event loop (SQLite) or on a thread.

On SQLite every write of every worker process goes through one lock, so a sale is only as
fast as the time its transaction holds it. Run on request threads, that transaction competed
for the GIL with the event loop and a dozen other requests: each of its statements hands the
GIL over, and getting it back could take milliseconds, all while the database was locked for
both workers (measured: a 0.3 ms sale held the lock 0.7 ms at the median, 11 ms at p99).

So on SQLite the purchases of a process are queued to its :class:`LoopBatcher`, which takes
the database once for everything queued (:meth:`SqlUnitOfWork.hold`, on a helper thread
because it may wait for the other worker), runs each purchase on the event loop inside the
held batch (``batch.run``: only what runs there joins it) — one thread, nothing to hand
over — then commits them all at once on the helper thread (the fsync does not
hold the loop) and only then answers them. A purchase refused (insufficient balance, sold
out…) is rolled back alone and answered with its error; if the commit fails, every purchase
of the batch is answered 503 and none was kept. Nothing is acknowledged before it is durable.

Elsewhere (PostgreSQL) :class:`OnThreads` runs each purchase in a transaction of its own on a
few threads of its own (``GRATTAGE_PURCHASE_THREADS``), not on FastAPI's forty: a purchase
holds its block's row until it commits, and every thread that waits for the GIL meanwhile
stretches that hold. A batch there would hold the rows of many players and blocks at once, and
two workers' batches could deadlock.

Those threads are per *lane*, one lane per game: the purchases of one game all wait on the
same block row, so when a stuck transaction holds it they fill their lane's threads, each for
up to the lock timeout, and sit in its queue — while every other game's purchases run on
threads of their own, undelayed. (One shared pool let a held Astro row freeze Cash sales: its
4 threads were all waiting on the Astro row.) Only the registered games get a lane; any other
name shares one spare lane, where it is refused at once as an unknown game, so the number of
threads stays bounded whatever a client sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar, cast

T = TypeVar("T")

PURCHASES_PER_HELD_BATCH = 32
"""Purchases one held batch runs before its commit: bounds how long the other worker waits
for the database (the group committer's own bound on a shared commit is larger)."""


class HeldBatch(Protocol):
    def run(self, work: Callable[[], T]) -> T: ...


class HoldsBatches(Protocol):
    holds_batches: bool

    def new_batch(self) -> HeldBatch: ...

    def hold(self, batch: HeldBatch) -> None: ...

    def release(self) -> int: ...


class Writes(Protocol):
    async def run(self, work: Callable[[], T], lane: str = "") -> T: ...

    def close(self) -> None: ...


SPARE_LANE = ""
"""The lane of every name that is not a registered game."""


class OnThreads:
    """``threads`` threads for each lane in ``lanes`` (and the spare lane), made up front."""

    def __init__(self, threads: int, lanes: Iterable[str] = ()) -> None:
        self._lanes = {
            name: ThreadPoolExecutor(
                max_workers=threads, thread_name_prefix=f"grattage-buy-{name or 'spare'}"
            )
            for name in {*lanes, SPARE_LANE}
        }

    async def run(self, work: Callable[[], T], lane: str = SPARE_LANE) -> T:
        threads = self._lanes.get(lane) or self._lanes[SPARE_LANE]
        return await asyncio.get_running_loop().run_in_executor(threads, work)

    def close(self) -> None:
        for threads in self._lanes.values():
            threads.shutdown(wait=False)


class LoopBatcher:
    def __init__(self, uow: HoldsBatches, after_batch: Callable[[], object] | None = None) -> None:
        self._uow = uow
        self._after_batch = after_batch
        self._pending: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
        self._drain_task: asyncio.Task[None] | None = None
        self._batch_task: asyncio.Future[None] | None = None
        # Its own thread, not the request threads': those may all be waiting for the
        # database this batch holds, and the batch must still be able to let it go.
        self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grattage-commit")

    async def run(self, work: Callable[[], T], lane: str = "") -> T:
        # One lane for all: on SQLite every purchase waits for the one database lock anyway,
        # and a batch never waits on a row (SQLite locks the whole database, not rows).
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._pending.append((work, future))
        if self._drain_task is None or self._drain_task.done():
            self._drain_task = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            # One batch at a time, shielded: once the database is held, only release() may end
            # a batch, even if this task is cancelled (the next drain waits for it).
            if self._batch_task is None or self._batch_task.done():
                self._batch_task = asyncio.ensure_future(self._run_batch())
            await asyncio.shield(self._batch_task)

    async def _run_batch(self) -> None:
        loop = asyncio.get_running_loop()
        held = self._uow.new_batch()  # made here: its work runs on this, the loop's, thread
        try:
            await loop.run_in_executor(self._helper, self._uow.hold, held)
        except Exception as failure:
            _fail(self._take_batch(), failure)
            return
        # Taken once the database is ours: what arrived while waiting for it joins this batch.
        batch = self._take_batch()
        outcomes: list[tuple[asyncio.Future[Any], Any, Exception | None]] = []
        try:
            for work, future in batch:
                if future.done():  # the client went away before its turn: nothing was sold
                    continue
                try:
                    outcomes.append((future, held.run(work), None))
                except Exception as refused:
                    outcomes.append((future, None, refused))
            if self._after_batch is not None and outcomes:
                held.run(self._after_batch)  # in the same commit (see writes_for)
        finally:
            # Even when something worse than an exception stops the batch, the database is let
            # go (what was sold is kept, unanswered, as after a lost answer).
            saved = await self._release(outcomes)
        if not saved:
            return
        for future, value, refusal in outcomes:
            if future.done():
                continue
            if refusal is None:
                future.set_result(value)
            else:
                future.set_exception(refusal)

    async def _release(self, outcomes: list[tuple[asyncio.Future[Any], Any, Any]]) -> bool:
        """Commit the batch; on failure answer every purchase in it with the failure."""
        try:
            await asyncio.get_running_loop().run_in_executor(self._helper, self._uow.release)
        except Exception as failure:
            _fail([(None, future) for future, _, _ in outcomes], failure)
            return False
        return True

    def _take_batch(self) -> list[tuple[Callable[[], Any], asyncio.Future[Any]]]:
        batch = self._pending[:PURCHASES_PER_HELD_BATCH]
        del self._pending[:PURCHASES_PER_HELD_BATCH]
        return batch

    def close(self) -> None:
        self._helper.shutdown(wait=False)


def _fail(batch: list[tuple[Any, asyncio.Future[Any]]], failure: Exception) -> None:
    for _, future in batch:
        if not future.done():
            future.set_exception(failure)


def writes_for(
    uow: object,
    threads: int,
    lanes: Iterable[str] = (),
    after_batch: Callable[[], object] | None = None,
) -> Writes:
    """The batcher when the unit of work can hold batches, else ``threads`` threads for each
    of ``lanes`` (the game names).

    ``after_batch`` (batches only) runs inside each batch, after its purchases, in the same
    commit: the server integrates the log's queue there when sales are drawn. On SQLite the
    database has one writer, so a sequencer of its own would wait for the lock behind the
    purchases of both workers — for seconds under load, letting the rounds the receipts name
    pass before their head could be cosigned. Integrated by the batch that wrote them, they
    are in the tree the moment they commit, and the cosigner needs no write at all."""
    if getattr(uow, "holds_batches", False):
        return LoopBatcher(cast(HoldsBatches, uow), after_batch)
    return OnThreads(threads, lanes)
