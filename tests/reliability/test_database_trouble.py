"""Scenario 5, database trouble under load: the database goes away, turns read-only, or its
disk fills up while clients buy. Purchases are refused with 503 and a clear JSON message (never
a 500, never a hang), nothing refused is half-recorded, sales resume by themselves once the
database is back (no restart), and the books reconcile."""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

from grattage.adapters.tables import idempotency_keys
from support import PG_URL_VARIABLE, World, make_world

from .harness import (
    PLAY_WITHOUT_LIMITS,
    Server,
    big_table,
    log_in,
    player_balance_matches_tickets,
    read_books,
    record,
    scaled,
    server_env,
)
from .trouble import PurchaseLoad, TcpProxy, fill, tmpfs, wait_for_refusals, wait_for_sales

CLIENTS = 4
DEPOSIT = 1_000_000
SWEEP_FAILED = "sweep failed; retrying"
"""What the server's sweeper logs, with its traceback, when the database is away: it retries."""
_CHAINED = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)


def unexpected_tracebacks(log: str) -> list[str]:
    """The line introducing each traceback of ``log`` that is not the sweeper's retry notice.

    A traceback chained to the one before (``raise … from``, an error while handling another)
    belongs to that one's record; every other traceback starts a record of its own, introduced
    by the line before it — which must be :data:`SWEEP_FAILED`.
    """
    lines = log.splitlines()
    unexpected = []
    for index, line in enumerate(lines):
        if "Traceback" not in line:
            continue
        before = [text for text in lines[max(0, index - 2) : index] if text.strip()]
        if before and before[-1].strip(" |") in _CHAINED:
            continue
        introduction = before[-1] if before else "(the log's first line)"
        if not introduction.endswith(SWEEP_FAILED):
            unexpected.append(f"{introduction!r} then {line!r}")
    return unexpected


@contextmanager
def loaded_server(world: World, log: Path, database_url: str | None = None) -> Iterator[Server]:
    env = server_env(world, abandon_seconds=600, inactivity_seconds=600)
    if database_url is not None:
        env["GRATTAGE_DATABASE_URL"] = database_url
    server = Server(env, log)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def run_trouble(
    world: World,
    server: Server,
    label: str,
    trouble: Callable[[], None],
    recover: Callable[[], None],
    refusals: int = 10,
) -> None:
    emails = [f"trouble{i}@example.org" for i in range(CLIENTS)]
    players = [world.player(DEPOSIT, email=email) for email in emails]
    tokens = [log_in(server.base, email) for email in emails]
    episodes = scaled(2, 8)
    recoveries: list[float] = []
    with PurchaseLoad(server.base, tokens) as load:
        wait_for_sales(load, 20, within=30)
        for _ in range(episodes):
            trouble()
            wait_for_refusals(load, refusals, within=30)
            time.sleep(0.5)
            recover()
            recoveries.append(wait_for_sales(load, 10, within=30))
        time.sleep(0.3)
    log = load.log
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        recorded = dict(
            db.execute(select(idempotency_keys.c.key, idempotency_keys.c.ticket_id)).all()
        )
    books = read_books(world)
    # A connection cut between the COMMIT and its acknowledgement leaves the client a 503 for a
    # purchase that did commit, whole: the same Idempotency-Key then answers with its ticket.
    # Half-recorded would be a key kept without its complete ticket.
    committed_unseen = [key for key in log.refused_keys if key in recorded]
    half_recorded = [key for key in committed_unseen if recorded[key] not in books.ticket_ids]
    lost = set(log.acknowledged) - books.ticket_ids
    record(
        f"database trouble [{label}]",
        episodes=episodes,
        purchases_acknowledged=len(log.acknowledged),
        refused_503=log.statuses[503],
        other_statuses={k: v for k, v in log.statuses.items() if k not in (201, 503)},
        answered_503_but_committed_whole=len(committed_unseen),
        half_recorded=len(half_recorded),
        unexpected=len(log.unexpected),
        slowest_recovery_seconds=round(max(recoveries), 2),
        lost=len(lost),
        reconcile_discrepancies=len(books.reconcile_discrepancies),
    )
    assert log.unexpected == [], log.unexpected[:5]
    assert log.unclear_503 == [], log.unclear_503[:3]
    assert half_recorded == []
    assert lost == set()
    assert books.reconcile_discrepancies == []
    assert books.units_sold_twice == 0 and books.stakes_without_ticket == 0
    assert all(player_balance_matches_tickets(world, p, DEPOSIT) for p in players)
    assert unexpected_tracebacks(server.log()) == []


def test_sqlite_disk_full_refuses_with_503_and_resumes(tmp_path: Path) -> None:
    # (A read-only remount of the file system is refused while the server holds the database
    # open for writing, and root ignores file modes: read-only is exercised on PostgreSQL.)
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    with (
        tmpfs(tmp_path / "db") as directory,
        make_world("sqlite", directory, drawn=False, **PLAY_WITHOUT_LIMITS) as world,
    ):
        world.stock("cash", blocks=3, table=big_table("cash"))
        filler: list[Path] = []

        def full() -> None:
            filler.append(fill(directory))

        def room() -> None:
            filler.pop().unlink()

        with loaded_server(world, tmp_path / "server.log") as server:
            run_trouble(world, server, "sqlite, disk full", full, room)


@contextmanager
def pg_admin() -> Iterator[Callable[[str], None]]:
    base = os.environ.get(PG_URL_VARIABLE)
    if not base:
        pytest.skip(f"{PG_URL_VARIABLE} is not set")
    engine = create_engine(base, isolation_level="AUTOCOMMIT")

    def run(sql: str) -> None:
        with engine.connect() as connection:
            connection.execute(text(sql))

    try:
        yield run
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("trouble", ["down", "backends terminated", "read-only"])
def test_postgres_down_or_read_only_refuses_with_503_and_resumes(
    tmp_path: Path, trouble: str
) -> None:
    with (
        pg_admin() as admin,
        make_world("postgres", tmp_path, drawn=False, **PLAY_WITHOUT_LIMITS) as world,
    ):
        world.stock("cash", blocks=3, table=big_table("cash"))
        url = make_url(world.settings.database_url)
        label = f"postgres, {trouble}"
        if trouble == "down":
            proxy = TcpProxy((url.host or "127.0.0.1", url.port or 5432))
            try:
                proxied = url.set(port=proxy.port).render_as_string(hide_password=False)
                with loaded_server(world, tmp_path / "server.log", proxied) as server:
                    run_trouble(world, server, label, proxy.cut, proxy.restore)
            finally:
                proxy.close()
            return
        role = f"grattage_rel_{secrets.token_hex(4)}"
        admin(f'CREATE ROLE "{role}" LOGIN SUPERUSER')
        as_role = url.set(username=role).render_as_string(hide_password=False)
        terminate = (
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE usename = '{role}' AND pid <> pg_backend_pid()"
        )
        try:
            with loaded_server(world, tmp_path / "server.log", as_role) as server:
                if trouble == "backends terminated":
                    stop = threading.Event()
                    killers: list[threading.Thread] = []

                    def keep_killing() -> None:
                        # Idle connections are replaced unseen (pre-ping); those caught in a
                        # transaction fail it.
                        while not stop.wait(0.05):
                            admin(terminate)

                    def start_killing() -> None:
                        stop.clear()
                        killers.append(threading.Thread(target=keep_killing, daemon=True))
                        killers[-1].start()

                    def stop_killing() -> None:
                        stop.set()
                        killers.pop().join()

                    run_trouble(world, server, label, start_killing, stop_killing, refusals=3)
                else:

                    def read_only() -> None:
                        admin(f'ALTER ROLE "{role}" SET default_transaction_read_only = on')
                        admin(terminate)

                    def writable() -> None:
                        admin(f'ALTER ROLE "{role}" RESET default_transaction_read_only')
                        admin(terminate)

                    run_trouble(world, server, label, read_only, writable)
        finally:
            admin(terminate)
            admin(f'DROP ROLE IF EXISTS "{role}"')


SWEEPER_RETRY = """INFO:     127.0.0.1:5000 - "POST /api/games/cash/tickets HTTP/1.1" 503
sweep failed; retrying
Traceback (most recent call last):
  File "psycopg/connection.py", line 119, in connect
psycopg.OperationalError: connection failed: Connection refused
	Is the server running on that host and accepting TCP/IP connections?

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "grattage/entrypoints/http/__init__.py", line 35, in _sweep_forever
sqlalchemy.exc.OperationalError: (psycopg.OperationalError) connection failed
"""
REQUEST_CRASH = """ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi
KeyError: 'ticket'
"""


def test_the_log_check_spares_the_sweepers_retries_and_nothing_else() -> None:
    assert unexpected_tracebacks(SWEEPER_RETRY * 3) == []
    found = unexpected_tracebacks(SWEEPER_RETRY + REQUEST_CRASH + SWEEPER_RETRY)
    assert found == [
        "'ERROR:    Exception in ASGI application' then 'Traceback (most recent call last):'"
    ]
