"""Helpers shared by the integration and end-to-end tests: databases, small tables, players."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from grattage.adapters.database import make_engine
from grattage.adapters.migrations import migrate
from grattage.clock import ManualClock
from grattage.entrypoints.bootstrap import build_platform
from grattage.games import PrizeTable, load_table
from grattage.service import accounts
from grattage.service.context import Platform
from grattage.service.emissions import create_emission
from grattage.service.reconcile import reconcile
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


def settings_for(url: str, directory: Path, **overrides: object) -> Settings:
    return Settings(
        database_url=url,
        key_dir=directory / "keys",
        disclosure_dir=directory / "disclosures",
        run_sweeper=False,
        password_time_cost=1,  # argon2 at full cost takes ~0.5 s a hash here
        password_memory_kib=1024,
        **overrides,  # type: ignore[arg-type]
    )


@dataclass
class World:
    """A platform on a fresh database, with a clock the test moves."""

    platform: Platform
    clock: ManualClock
    settings: Settings
    check_books: bool = True

    def stock(self, game: str, blocks: int = 1, table: PrizeTable | None = None) -> None:
        create_emission(self.platform, game, blocks, table=table or tiny_table(game))

    def player(self, balance_cents: int = 0, email: str | None = None) -> int:
        email = email or f"p{secrets.token_hex(5)}@example.org"
        player_id = accounts.register(self.platform, email, PASSWORD, date(1990, 5, 17))
        while balance_cents > 0:
            step = min(balance_cents, self.platform.policy.demo_deposit_max_cents)
            accounts.deposit(self.platform, player_id, step)
            balance_cents -= step
        return player_id

    def balance(self, player_id: int) -> int:
        return accounts.balance(self.platform, player_id)


@contextmanager
def make_world(kind: str, directory: Path, **overrides: object) -> Iterator[World]:
    with database_url(kind, directory) as url:
        clock = ManualClock()
        settings = settings_for(url, directory, **overrides)
        # A SQLite database is a copy of one migrated once per run (the migrations still run
        # for real there, and on every PostgreSQL schema).
        migrated = kind == "sqlite"
        platform = build_platform(settings, clock=clock, run_migrations=not migrated)
        world = World(platform, clock, settings)
        try:
            yield world
            if world.check_books:
                report = reconcile(world.platform)
                assert report.clean, report.discrepancies
        finally:
            world.platform.uow.close()  # type: ignore[attr-defined]
