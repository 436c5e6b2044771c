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

Elsewhere (PostgreSQL) :class:`LaneBatches` runs them in batches too, each game's on a thread
of its own (its *lane*), in one transaction per batch (:mod:`grattage.adapters.lane_batch`):
a purchase of a drawn game holds its block's row until it commits, so one transaction per
purchase made a game's sales serial on that row and its commit — about 160/s. A batch locks its
game's block rows first, so two workers' batches take turns instead of deadlocking.

One lane per game: the purchases of one game all wait on the same block rows, so when a stuck
transaction holds them only that game's lane waits (once per batch, for the lock timeout, and
answers what queued meanwhile with the same 503) — every other game's purchases run on lanes
of their own, undelayed. (One shared pool of threads let a held Astro row freeze Cash sales.)
Only the registered games get a lane; any other name shares one spare lane, where it is refused
at once as an unknown game, so the number of threads stays bounded whatever a client sends.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from asyncio import AbstractEventLoop
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from grattage.errors import WalletBusy

if TYPE_CHECKING:
    from grattage.adapters.lane_batch import LaneBatch

T = TypeVar("T")

log = logging.getLogger("grattage.batching")

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

    def abandon(self, failure: BaseException) -> None: ...


class Writes(Protocol):
    async def run(self, work: Callable[[], T], lane: str = "") -> T: ...

    def close(self) -> None: ...


SPARE_LANE = ""
"""The lane of every name that is not a registered game."""


class HoldsLaneBatches(Protocol):
    holds_lane_batches: bool

    def open_lane_batch(self, lane: str) -> LaneBatch: ...


class LaneBatches:
    """Each lane's purchases in batches on a thread of its own (PostgreSQL, see
    :mod:`grattage.adapters.lane_batch`): the thread takes what is queued (at most
    ``PURCHASES_PER_HELD_BATCH``), opens a batch (waiting for the game's turn), runs each
    purchase in it, commits, and only then answers them. One thread per lane and process: a
    batch of a game waits for the one before it anyway."""

    def __init__(self, uow: HoldsLaneBatches, lanes: Iterable[str] = ()) -> None:
        self._lanes = {name: _Lane(uow, name) for name in {*lanes, SPARE_LANE}}

    async def run(self, work: Callable[[], T], lane: str = SPARE_LANE) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        (self._lanes.get(lane) or self._lanes[SPARE_LANE]).submit(work, future, loop)
        return await future

    def close(self) -> None:
        for lane in self._lanes.values():
            lane.stop()


WALLET_BUSY_RETRY_SECONDS = 2.0
"""How long a purchase whose wallet another transaction holds is run again, batch after batch,
before it is answered 503: the lock timeout's default, as long as a purchase would have waited
for that wallet in a transaction of its own."""
WALLET_BUSY_PAUSE_SECONDS = 0.005
"""The pause before a purchase is run again: the holder (a drawer's round) needs a moment."""


@dataclass
class _Queued:
    work: Callable[[], Any]
    future: asyncio.Future[Any]
    loop: AbstractEventLoop
    busy_until: float | None = None  # set when its wallet was first found held
    not_before: float = 0.0


class _Lane:
    def __init__(self, uow: HoldsLaneBatches, name: str) -> None:
        self._uow = uow
        self._name = name
        self._pending: deque[_Queued] = deque()
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(
            target=self._serve, name=f"grattage-buy-{name or 'spare'}", daemon=True
        )
        self._thread.start()

    def submit(
        self, work: Callable[[], Any], future: asyncio.Future[Any], loop: AbstractEventLoop
    ) -> None:
        with self._wake:
            self._pending.append(_Queued(work, future, loop))
            self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._stopped and (
                    not self._pending or self._pending[0].not_before > time.monotonic()
                ):
                    pause = (
                        self._pending[0].not_before - time.monotonic() if self._pending else None
                    )
                    self._wake.wait(pause)
                if self._stopped:
                    return
                count = min(len(self._pending), PURCHASES_PER_HELD_BATCH)
                batch = [self._pending.popleft() for _ in range(count)]
            self._run_batch(batch)

    def _run_batch(self, batch: list[_Queued]) -> None:
        try:
            held = self._uow.open_lane_batch(self._name)
        except Exception as unopened:
            # What was queued while this batch waited (for a row a hung transaction holds,
            # a database that does not answer) is answered with it: waiting in turn, each
            # batch would add its own wait to theirs.
            with self._wake:
                batch += self._pending
                self._pending.clear()
            for queued in batch:
                queued.loop.call_soon_threadsafe(_settle, queued.future, None, unopened)
            return
        outcomes: list[tuple[_Queued, Any, Exception | None]] = []
        again: list[_Queued] = []
        failure: Exception | None = None
        try:
            for queued in batch:
                if queued.future.done():  # the client went away before its turn: not sold
                    continue
                try:
                    outcomes.append((queued, held.run(queued.work), None))
                except WalletBusy as busy:
                    if self._runs_again(queued):
                        again.append(queued)
                    else:
                        outcomes.append((queued, None, busy))
                except Exception as refused:
                    outcomes.append((queued, None, refused))
        finally:
            # Even when something worse than an exception stops the batch, its transaction
            # ends here (what was sold is kept, unanswered, as after a lost answer).
            failure = _committed(held)
        if again:  # first in line, once this batch (and what it held) has committed
            with self._wake:
                self._pending.extendleft(reversed(again))
                self._wake.notify()
        for queued, value, refusal in outcomes:
            queued.loop.call_soon_threadsafe(_settle, queued.future, value, failure or refusal)

    @staticmethod
    def _runs_again(queued: _Queued) -> bool:
        now = time.monotonic()
        if queued.busy_until is None:
            queued.busy_until = now + WALLET_BUSY_RETRY_SECONDS
        queued.not_before = now + WALLET_BUSY_PAUSE_SECONDS
        return now < queued.busy_until


def _committed(held: LaneBatch) -> Exception | None:
    """Commit ``held``; what its commit raised, if it did (then none of it was kept)."""
    try:
        held.commit()
    except Exception as lost:
        return lost
    return None


def _settle(future: asyncio.Future[Any], value: Any, failure: BaseException | None) -> None:
    if future.done():
        return
    if failure is None:
        future.set_result(value)
    else:
        future.set_exception(failure)


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
                try:
                    held.run(self._after_batch)  # in the same commit (see writes_for)
                except Exception as failure:
                    # An outsider's finding: a merge that failed (a tampered log_state) escaped
                    # here, the batch was committed and its purchases never answered. Sales
                    # whose receipts cannot reach the tree are not made: all answered 503.
                    log.error(
                        "merging the log inside a purchase batch failed (%s: %s): its %d "
                        "purchases are rolled back and refused",
                        type(failure).__name__,
                        str(failure).splitlines()[0] if str(failure) else "",
                        len(outcomes),
                    )
                    self._uow.abandon(failure)
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
    lanes: Iterable[str] = (),
    after_batch: Callable[[], object] | None = None,
) -> Writes:
    """The batcher when the unit of work can hold batches (SQLite), else lane batches for
    each of ``lanes`` (the game names: PostgreSQL).

    ``after_batch`` (batches only) runs inside each batch, after its purchases, in the same
    commit: the server integrates the log's queue there when sales are drawn. On SQLite the
    database has one writer, so a sequencer of its own would wait for the lock behind the
    purchases of both workers — for seconds under load, letting the rounds the receipts name
    pass before their head could be cosigned. Integrated by the batch that wrote them, they
    are in the tree the moment they commit, and the cosigner needs no write at all."""
    if getattr(uow, "holds_batches", False):
        return LoopBatcher(cast(HoldsBatches, uow), after_batch)
    return LaneBatches(cast(HoldsLaneBatches, uow), lanes)
