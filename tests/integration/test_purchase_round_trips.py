"""How many times a purchase waits for its database, pinned (issue 17, item 4).

On PostgreSQL a lane batch holds its game's block rows from its first statement to its commit,
so every round trip of a purchase is added to the wait of every other buyer of the game
(docs/deploy.md, "What a purchase costs"); ``python -m bench.purchase_cost`` prints the same
figures with the time they take. A round trip is counted from libpq's own protocol trace: a
message after which the client waits (a simple ``Query``, or the ``Sync`` of an extended one).
SQLite runs in the process — no round trip — so there the statements are counted."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import pytest
from sqlalchemy import event

from grattage.adapters.driver_sql import DriverSql
from grattage.service import tickets
from support import DATABASES, World, make_world

PURCHASES = 10

# Measured when pinned, a purchase alone in its batch (BEGIN to COMMIT, the pool's liveness
# check included; a Sync inside a pipeline counts as one though the client did not wait for
# it): PostgreSQL 13 (undrawn, a losing ticket; +2 or 3 for a winning one: its prize counted
# and credited) and 14 (drawn), where sending the statements one by one took 18 (winners 21
# or 22) and 19. SQLite's statements, whose flow did not change: 13 and 16.
MOST_ROUND_TRIPS = {("postgres", False): 13, ("postgres", True): 14}
MOST_STATEMENTS = {("sqlite", False): 13, ("sqlite", True): 16}
A_WINNERS_MORE = {"postgres": 3, "sqlite": 4}  # SQLite: the prize movement takes two
T = TypeVar("T")


class _Waits:
    """What the client waited for, per purchase: round trips on PostgreSQL (libpq's trace of
    every connection opened from now on), statements on SQLite."""

    def __init__(self, world: World) -> None:
        self.engine: Any = world.platform.uow.engine  # type: ignore[attr-defined]
        self.sqlite = self.engine.dialect.name == "sqlite"
        self.traces: list[tuple[Any, IO[str]]] = []
        self.statements = 0

    def trace(self, dbapi_connection: Any, _record: Any) -> None:
        log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed by counted())
        dbapi_connection.pgconn.trace(log.fileno())
        self.traces.append((dbapi_connection.pgconn, log))

    def statement(self, *_: Any) -> None:
        self.statements += 1

    def take(self) -> int:
        """Since the last take."""
        if self.sqlite:
            count, self.statements = self.statements, 0
            return count
        count = 0
        for _pgconn, log in self.traces:
            log.flush()
            log.seek(0)
            for line in log.read().splitlines():
                sent = "\tF\t" in line
                count += sent and ("\tQuery\t" in line or line.endswith("\tSync"))
            log.seek(0)
            log.truncate()
        return count


@contextmanager
def counted(world: World) -> Iterator[_Waits]:
    waits = _Waits(world)
    if waits.sqlite:
        run_on_driver = DriverSql.__call__

        def on_driver(self: DriverSql, connection: Any, parameters: Any = None) -> Any:
            waits.statement()
            return run_on_driver(self, connection, parameters)

        # every statement: the hot ones on the driver, the others through SQLAlchemy
        event.listen(waits.engine, "before_cursor_execute", waits.statement)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(DriverSql, "__call__", on_driver)
            try:
                yield waits
            finally:
                event.remove(waits.engine, "before_cursor_execute", waits.statement)
        return
    event.listen(waits.engine, "connect", waits.trace)
    waits.engine.dispose()  # new connections, traced from their first message
    try:
        yield waits
    finally:
        event.remove(waits.engine, "connect", waits.trace)
        for pgconn, log in waits.traces:
            pgconn.untrace()
            log.close()


def _alone_in_a_batch(world: World, work: Callable[[], T]) -> T:
    """``work`` in a batch of its own, as the buy route runs a lone buyer's purchase: a lane
    batch on PostgreSQL, a held batch on SQLite."""
    uow: Any = world.platform.uow
    if uow.holds_lane_batches:
        batch = uow.open_lane_batch("cash")
        try:
            return batch.run(work)
        finally:
            batch.commit()
    held = uow.new_batch()
    uow.hold(held)
    try:
        return held.run(work)
    finally:
        uow.release()


@pytest.mark.parametrize("kind", DATABASES)
@pytest.mark.parametrize("drawn", [False, True], ids=["undrawn", "drawn"])
def test_a_purchase_waits_for_its_database_at_most_the_pinned_number_of_times(
    kind: str, drawn: bool, tmp_path: Path
) -> None:
    with make_world(kind, tmp_path, drawn=drawn) as world:
        player = world.player(balance_cents=1_000_00)

        def buy() -> Any:
            return tickets.buy(world.platform, player, game_name="cash", mode="auto")[0]

        world.stock("cash")
        for _ in range(3):  # caches warmed
            _alone_in_a_batch(world, buy)
        world.draw()
        with counted(world) as waits:
            # The traced connection's first purchases: psycopg prepares a statement on its
            # 5th execution (one more round trip, once).
            for _ in range(6):
                _alone_in_a_batch(world, buy)
            waits.take()
            seen = []
            for _ in range(PURCHASES):
                view = _alone_in_a_batch(world, buy)
                seen.append((waits.take(), bool(view.prize_cents)))
        world.draw()
    pinned = MOST_ROUND_TRIPS if kind == "postgres" else MOST_STATEMENTS
    most = pinned[(kind, drawn)]
    assert all(count <= most + (A_WINNERS_MORE[kind] if won else 0) for count, won in seen), seen
