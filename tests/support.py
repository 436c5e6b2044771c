"""Helpers shared by the integration and end-to-end tests: databases, small tables, players."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from grattage.adapters.database import make_engine
from grattage.adapters.local_witness import LocalWitness, ManualMsClock
from grattage.adapters.migrations import migrate
from grattage.adapters.witness_port import wall_clock_ms
from grattage.clock import ManualClock
from grattage.entrypoints.bootstrap import build_platform
from grattage.games import PrizeTable, load_table
from grattage.service import accounts, tickets
from grattage.service.context import Platform
from grattage.service.draw_sale import round_for_sale
from grattage.service.drawer import Drawer
from grattage.service.drawer_seen import DrawerSeen
from grattage.service.emissions import create_emission
from grattage.service.reconcile import reconcile
from grattage.service.records import TicketView
from grattage.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"
PG_URL_VARIABLE = "GRATTAGE_TEST_DATABASE_URL"
PASSWORD = "correct horse battery"

DATABASES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


def tiny_table(game: str) -> PrizeTable:
    name = f"tiny_{game}.toml"
    return load_table(game, (FIXTURES / name).read_text("utf-8"), name)


@contextmanager
def database_url(kind: str, directory: Path, *, migrated: bool = True) -> Iterator[str]:
    """A fresh database of ``kind``: a SQLite file (a copy of one migrated once per run, or an
    empty one when ``migrated`` is false), or an empty PostgreSQL schema of its own."""
    if kind == "sqlite":
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / "grattage.db"
        if migrated:
            shutil.copyfile(_migrated_sqlite_template(), target)
        yield f"sqlite:///{target}"
        return
    base = os.environ.get(PG_URL_VARIABLE)
    if not base:
        pytest.skip(f"{PG_URL_VARIABLE} is not set")
    schema = f"grattage_test_{secrets.token_hex(6)}"
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


@cache
def _migrated_sqlite_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="grattage-template-"))
    engine = make_engine(f"sqlite:///{folder / 'template.db'}")
    migrate(engine)
    engine.dispose()  # the last connection checkpoints the WAL into the file
    return folder / "template.db"


NO_RATE_LIMITS = {
    f"{action}_rate_{who}": "1000000/second"
    for action in ("log_in", "sign_up", "try_start")
    for who in ("per_client", "overall")
}
"""Tests log in and sign up far more often than one client may; the rates have tests of
their own."""


def settings_for(url: str, directory: Path, **overrides: object) -> Settings:
    return Settings(
        database_url=url,
        key_dir=directory / "keys",
        disclosure_dir=directory / "disclosures",
        run_sweeper=False,
        password_time_cost=1,  # argon2 at full cost takes ~0.5 s a hash here
        password_memory_kib=1024,
        **{**NO_RATE_LIMITS, **overrides},  # type: ignore[arg-type]
    )


def person_named_after(email: str) -> dict[str, str]:
    """Names of a person of one's own for each test address (letters only, as names are)."""
    letters = "".join(chr(ord("a") + ord(char) % 26) for char in email.partition("@")[0])
    return {"first_name": "Camille", "last_name": f"Test{letters}"}


@dataclass
class World:
    """A platform on a fresh database, with a clock the test moves; with a witness in the
    process (its own clock, moved by :meth:`draw`), its blocks are drawn."""

    platform: Platform
    clock: ManualClock
    settings: Settings
    check_books: bool = True
    witness: LocalWitness | None = None

    def draw(self) -> int:
        """Everything a drawer would do until no sale waits (:func:`draw_all`)."""
        return draw_all(self.platform)

    def stock(self, game: str, blocks: int = 1, table: PrizeTable | None = None) -> None:
        create_emission(self.platform, game, blocks, table=table or tiny_table(game))

    def player(self, balance_cents: int = 0, email: str | None = None) -> int:
        email = email or f"p{secrets.token_hex(5)}@example.org"
        player_id = accounts.register(
            self.platform, email, PASSWORD, date(1990, 5, 17), **person_named_after(email)
        )
        while balance_cents > 0:
            step = min(balance_cents, self.platform.policy.demo_deposit_max_cents)
            accounts.deposit(self.platform, player_id, step)
            balance_cents -= step
        return player_id

    def balance(self, player_id: int) -> int:
        return accounts.balance(self.platform, player_id)


class DrawerAlwaysRunning(DrawerSeen):
    """A world on a clock the test moves: the test draws (:meth:`World.draw`), as a drawer
    holding the lease would, so a sale never finds the draw stopped."""

    def running(self, now_ms: int, read_expiry: Callable[[], int]) -> bool:
        return True


def draw_all(platform: Platform) -> int:
    """Everything a drawer would do until no sale waits: have the heads cosigned, let the
    in-process witness's clock reach the rounds the sales name, draw them — what a player's
    page waits for after a purchase. How many were drawn."""
    witness = platform.witness
    if not isinstance(witness, LocalWitness) or not isinstance(witness.clock, ManualMsClock):
        return 0
    drawer = Drawer(platform)
    total = 0
    for _ in range(20):
        drawer.cosign()
        with platform.uow.read() as repos:
            rounds = repos.draws.pending_rounds(2**62)
        if not rounds:
            return total
        clock = witness.clock
        target = max(round_ms for _, _, round_ms in rounds)
        if target <= clock():  # late sales: the next round, which was just cosigned for
            target = round_for_sale(witness.chains(), clock(), 1, None)[2]
        clock.set(target)
        total += drawer.draw()
    raise AssertionError("sales still wait for their draw after 20 turns")


def bought(world: World, player: int, **purchase: Any) -> tuple[TicketView, bool]:
    """``tickets.buy`` and then its draw, as the player's page waits for it: the ticket as
    drawn (a drawn block's sale answers ``covered`` at once) and whether it was a replay."""
    view, replayed = tickets.buy(world.platform, player, **purchase)
    if view.state == "covered":
        world.draw()
        view = tickets.get_ticket(world.platform, player, view.id)
    return view, replayed


def drawn_answer(client: Any, answer: dict[str, Any]) -> dict[str, Any]:
    """A purchase's answer over HTTP and then its draw: the ticket as ``GET`` shows it once
    drawn, as the page's long poll would."""
    if answer.get("state") != "covered":
        return answer
    draw_all(client.app.state.platform)
    fetched: dict[str, Any] = client.get(f"/api/tickets/{answer['id']}").json()
    return fetched


@contextmanager
def make_world(
    kind: str,
    directory: Path,
    *,
    drawn: bool = True,
    beacon_ms: int | None = None,
    **overrides: object,
) -> Iterator[World]:
    """``drawn``: with a witness in the process, on a clock :meth:`World.draw` moves; with
    ``beacon_ms`` too, on the wall clock, a round every ``beacon_ms`` (a server's drawer then
    draws by itself)."""
    with database_url(kind, directory) as url:
        clock = ManualClock()
        settings = settings_for(url, directory, **overrides)
        # A SQLite database is a copy of one migrated once per run (the migrations still run
        # for real there, and on every PostgreSQL schema).
        migrated = kind == "sqlite"
        platform = build_platform(settings, clock=clock, run_migrations=not migrated)
        witness = None
        if drawn:
            witness = LocalWitness(
                directory / "witness",
                platform.signer().public_key,
                period_ms=beacon_ms or 1000,
                chain_length=20_000,
                clock=None if beacon_ms is None else wall_clock_ms,
            )
            platform.witness = witness
            if beacon_ms is None:  # the test is the drawer (World.draw): one always runs
                platform.drawer_seen = DrawerAlwaysRunning()
        world = World(platform, clock, settings, witness=witness)
        try:
            yield world
            if world.check_books:
                report = reconcile(world.platform)
                assert report.clean, report.discrepancies
        finally:
            world.platform.uow.close()  # type: ignore[attr-defined]
