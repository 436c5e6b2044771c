"""Where a purchase's time goes (issue 17, item 4), in figures that do not depend on how loaded
the machine is: ``python -m bench.purchase_cost``.

For each database (SQLite, then PostgreSQL when ``GRATTAGE_BENCH_POSTGRES_URL`` or
``GRATTAGE_TEST_DATABASE_URL`` is set, in a schema of its own dropped afterwards) and each path
(an undrawn block, and a drawn one with a witness in the process), it runs ``PURCHASES``
sequential ``auto`` purchases the way the buy route does — the session looked up, then
``tickets.buy`` — each in a batch of its own (a lane batch on PostgreSQL, a held batch on
SQLite: what a lone buyer gets), and prints per purchase:

* **statements**: every statement sent, on the driver or through SQLAlchemy, BEGIN, SAVEPOINT
  and COMMIT included;
* **round trips** (PostgreSQL): the times the client sent a request and waited for its
  answer, counted from libpq's own protocol trace (a ``Query`` or a ``Sync`` message);
* **under the block's row**: the statements from the one that locks the block's row to the
  commit, and the **lock hold time** (wall clock, from that statement to the end of the
  commit: on a shared machine, a figure to compare within one run only);
* **CPU** (``time.process_time``: this process's CPU, the database server's excluded) and wall
  time per purchase.

Counts are exact and repeatable; times are medians of the purchases, noisy on a shared machine.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import IO, Any

PURCHASES = int(os.environ.get("GRATTAGE_BENCH_PURCHASES", "300"))
WARM_UP = 20
UNITS = 400_000
BALANCE_CENTS = 100_000_000
LOCKS_THE_BLOCK_ROW = ("SELECT id FROM blocks WHERE", "UPDATE blocks SET sold")


@dataclass
class Sent:
    """What one purchase sent, and when the block's row was locked."""

    statements: list[str] = field(default_factory=list)
    round_trips: int = 0
    waits: list[str] = field(default_factory=list)
    locked_at: float | None = None
    under_lock: int = 0


class _Counter:
    """Every statement the engine's connections send, noted as the current purchase's."""

    def __init__(self) -> None:
        self.current = Sent()
        self.traces: list[tuple[Any, IO[str]]] = []

    def note(self, sql: str) -> None:
        sent = self.current
        sent.statements.append(sql)
        if sent.locked_at is None and sql.startswith(LOCKS_THE_BLOCK_ROW):
            sent.locked_at = time.perf_counter()
        if sent.locked_at is not None:
            sent.under_lock += 1

    def through_sqlalchemy(self, _c: Any, _cursor: Any, statement: str, *_: Any) -> None:
        self.note(" ".join(statement.split()))

    def on_begin(self, connection: Any) -> None:
        if connection.dialect.name != "sqlite":  # SQLite's BEGIN IMMEDIATE is a statement
            self.note("BEGIN")

    def on_commit(self, _connection: Any) -> None:
        self.note("COMMIT")

    def trace_connection(self, dbapi_connection: Any, _record: Any) -> None:
        # libpq writes every protocol message it sends or receives; the round trips are the
        # messages after which the client waits: a simple Query, or the Sync of an extended one.
        pgconn = getattr(dbapi_connection, "pgconn", None)
        if pgconn is not None:
            trace = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed by _counting)
            pgconn.trace(trace.fileno())
            self.traces.append((pgconn, trace))

    def take(self) -> Sent:
        sent = self.current
        for _pgconn, trace in self.traces:
            trace.flush()
            trace.seek(0)
            waits = [
                line
                for line in trace.read().splitlines()
                if "\tF\t" in line and ("\tQuery\t" in line or line.endswith("\tSync"))
            ]
            sent.round_trips += len(waits)
            sent.waits += waits
            trace.seek(0)
            trace.truncate()
        self.current = Sent()
        return sent


@contextmanager
def _counting(engine: Any, traced: bool) -> Iterator[Callable[[], Sent]]:
    """Count what each purchase sends (``traced``: its round trips too, new connections)."""
    from sqlalchemy import event

    from grattage.adapters.driver_sql import DriverSql

    counter = _Counter()
    run_on_driver = DriverSql.__call__

    def on_driver(self: DriverSql, connection: Any, parameters: Any = None) -> Any:
        counter.note(self.sql)
        return run_on_driver(self, connection, parameters)

    listeners: list[tuple[str, Any]] = [
        ("before_cursor_execute", counter.through_sqlalchemy),
        ("begin", counter.on_begin),
        ("commit", counter.on_commit),
    ]
    if traced:
        listeners.append(("connect", counter.trace_connection))
    for name, listener in listeners:
        event.listen(engine, name, listener)
    if traced:
        engine.dispose()  # new connections, traced from their first message
    DriverSql.__call__ = on_driver  # type: ignore[method-assign]
    try:
        yield counter.take
    finally:
        DriverSql.__call__ = run_on_driver  # type: ignore[method-assign]
        for name, listener in listeners:
            event.remove(engine, name, listener)
        for pgconn, trace in counter.traces:
            pgconn.untrace()
            trace.close()
        if traced:
            engine.dispose()


def _table() -> Any:
    """A Cash table of ``UNITS`` units in the official table's proportions of the tiny one."""
    from grattage.games import load_table

    text = (Path(__file__).parent.parent / "tests/fixtures/tiny_cash.toml").read_text()
    lines = []
    for line in text.splitlines():
        name, sep, value = line.partition(" = ")
        big = sep and name in {"block_size", "count"}
        lines.append(f"{name} = {int(value) * UNITS // 40}" if big else line)
    return load_table("cash", "\n".join(lines) + "\n", "bench.toml")


def _platform(url: str, folder: Path, drawn: bool) -> tuple[Any, str, int]:
    """A platform with one open Cash block (drawn or not), and a logged-in rich player."""
    from grattage.adapters.local_witness import LocalWitness
    from grattage.entrypoints.bootstrap import build_platform
    from grattage.service import accounts
    from grattage.service.drawer_seen import DrawerSeen
    from grattage.service.emissions import create_emission
    from grattage.settings import Settings

    class DrawerAlwaysRunning(DrawerSeen):
        def running(self, now_ms: int, read_expiry: Callable[[], int]) -> bool:
            return True

    settings = Settings(
        database_url=url,
        key_dir=folder / "keys",
        disclosure_dir=folder / "disclosures",
        run_sweeper=False,
        demo_deposit_max_cents=BALANCE_CENTS,
        deposit_limit_default_cents=BALANCE_CENTS,
        deposit_limit_max_cents=BALANCE_CENTS,
        stake_limit_default_cents=BALANCE_CENTS,
        stake_limit_max_cents=BALANCE_CENTS,
        password_time_cost=1,
        password_memory_kib=1024,
    )
    platform = build_platform(settings)
    if drawn:
        platform.witness = LocalWitness(
            folder / "witness", platform.signer().public_key, chain_length=1000
        )
        platform.drawer_seen = DrawerAlwaysRunning()
    create_emission(platform, "cash", 1, table=_table())
    email = "cost@example.org"
    player = accounts.register(
        platform, email, "bench-password", date(1980, 1, 1), first_name="Banc", last_name="Cout"
    )
    accounts.deposit(platform, player, BALANCE_CENTS)
    token = accounts.log_in(platform, email, "bench-password").token
    return platform, token, player


def _in_a_batch(platform: Any, work: Callable[[], Any]) -> Any:
    """``work`` in a batch of its own, as the buy route runs it for a lone buyer."""
    uow = platform.uow
    if uow.holds_lane_batches:
        batch = uow.open_lane_batch("cash")
        try:
            result = batch.run(work)
        finally:
            batch.commit()
        return result
    held = uow.new_batch()
    uow.hold(held)
    try:
        return held.run(work)
    finally:
        uow.release()


def _measure(label: str, url: str, drawn: bool) -> dict[str, float]:
    """Three passes over the same platform: the counts (libpq traced), the CPU and wall time
    (nothing hooked), the row's hold time (only the statements' times noted)."""
    from grattage.service import accounts, reality_checks, tickets

    with tempfile.TemporaryDirectory() as folder:
        platform, token, _player = _platform(url, Path(folder), drawn)

        def purchase() -> None:
            caller = accounts.authenticate(platform, token)
            tickets.buy(platform, caller.player_id, game_name="cash", mode="auto")
            reality_checks.reality_check(platform, caller)

        try:
            for _ in range(WARM_UP):
                _in_a_batch(platform, purchase)
            with _counting(platform.uow.engine, traced=True) as take:
                for _ in range(WARM_UP):  # the new (traced) connections warm up too
                    _in_a_batch(platform, purchase)
                take()
                counted = []
                for _ in range(PURCHASES):
                    _in_a_batch(platform, purchase)
                    counted.append(take())
            for _ in range(WARM_UP):
                _in_a_batch(platform, purchase)
            cpu, wall = [], []
            for _ in range(PURCHASES):
                cpu_before, wall_before = time.process_time(), time.perf_counter()
                _in_a_batch(platform, purchase)
                cpu.append(time.process_time() - cpu_before)
                wall.append(time.perf_counter() - wall_before)
            held = []
            with _counting(platform.uow.engine, traced=False) as take:
                for _ in range(WARM_UP):
                    _in_a_batch(platform, purchase)
                take()
                for _ in range(PURCHASES):
                    _in_a_batch(platform, purchase)
                    done = time.perf_counter()
                    sent = take()
                    assert sent.locked_at is not None
                    held.append(done - sent.locked_at)
        finally:
            platform.uow.close()
    counts = [len(sent.statements) for sent in counted]
    trips = [sent.round_trips for sent in counted]
    under = [sent.under_lock for sent in counted]
    result = {
        "statements": statistics.median(counts),
        "round_trips": statistics.median(trips),
        "under_lock": statistics.median(under),
        "cpu_us": statistics.median(cpu) * 1e6,
        "wall_us": statistics.median(wall) * 1e6,
        "held_us": statistics.median(held) * 1e6,
    }
    postgres = "postgres" in url
    trips_text = f"{result['round_trips']:.0f} ({min(trips)}-{max(trips)})" if postgres else "-"
    print(
        f"  {label:<20} statements {result['statements']:>3.0f} ({min(counts)}-{max(counts)})"
        f"   round trips {trips_text:>10}   under the block row {result['under_lock']:>3.0f}"
        f"   row held {result['held_us']:>5.0f} µs   CPU {result['cpu_us']:>5.0f} µs"
        f"   wall {result['wall_us']:>5.0f} µs"
    )
    if os.environ.get("GRATTAGE_BENCH_SHOW_STATEMENTS"):
        last = counted[-1]
        for sql in last.statements:
            print(f"      {sql[:140]}")
        for wait in last.waits:
            print(f"      > {wait[:140]}")
    return result


@contextmanager
def _postgres_schema(base: str) -> Iterator[str]:
    from sqlalchemy import create_engine, text

    schema = f"grattage_cost_{os.getpid()}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in base else "?"
    try:
        yield f"{base}{separator}options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def main() -> None:
    print(f"Purchase cost: {PURCHASES} sequential auto purchases, each in a batch of its own")
    postgres = os.environ.get("GRATTAGE_BENCH_POSTGRES_URL") or os.environ.get(
        "GRATTAGE_TEST_DATABASE_URL"
    )
    for drawn in (False, True):
        path = "drawn" if drawn else "undrawn"
        with tempfile.TemporaryDirectory() as folder:
            _measure(f"SQLite, {path}", f"sqlite:///{folder}/cost.db", drawn)
        if postgres:
            with _postgres_schema(postgres) as url:
                _measure(f"PostgreSQL, {path}", url, drawn)
    if not postgres:
        print("PostgreSQL: skipped (set GRATTAGE_BENCH_POSTGRES_URL to measure it too)")


if __name__ == "__main__":
    main()
