"""Alembic migrations shipped in the package; :func:`migrate` brings a database up to date."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

MIGRATIONS_DIR = Path(__file__).parent


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def migrate(engine: Engine) -> None:
    """Upgrade the database behind ``engine`` to the latest schema (idempotent)."""
    command.upgrade(alembic_config(engine), "head")


def schema_revision(engine: Engine) -> str | None:
    """The schema revision of the database behind ``engine``; None when it was never migrated."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
