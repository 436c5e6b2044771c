"""The one map from database and driver errors to the error tree, fed with errors the real
drivers raise: trouble becomes Unavailable with a reason and never the driver's text, refused
values UnstorableValue, a missing database NoDatabase, and bugs stay what they are."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, InterfaceError, InternalError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from grattage.adapters.database import make_engine
from grattage.adapters.errors import database_errors_mapped
from grattage.errors import GrattageError, NoDatabase, Unavailable, UnstorableValue
from support import PG_URL_VARIABLE

SECRET = "s3cret-parameter"


def mapped(raising: Callable[[], object], where: str | None = None) -> GrattageError:
    with pytest.raises(GrattageError) as caught, database_errors_mapped(where):
        raising()
    assert caught.value.__cause__ is not None, "the driver's error stays attached"
    return caught.value


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "t.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
        connection.execute("INSERT INTO t (name) VALUES ('taken')")
    return path


def test_a_locked_sqlite_database_is_unavailable(database: Path) -> None:
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(database, timeout=0, isolation_level=None)
    try:
        error = mapped(lambda: other.execute("BEGIN IMMEDIATE"))
    finally:
        holder.rollback()
    assert isinstance(error, Unavailable)
    assert "(the database is locked by another writer)" in error.message


def test_a_read_only_sqlite_database_is_unavailable(database: Path) -> None:
    reader = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    error = mapped(lambda: reader.execute("INSERT INTO t (name) VALUES (?)", (SECRET,)))
    assert isinstance(error, Unavailable)
    assert "(the database is read-only)" in error.message
    assert SECRET not in error.message and "INSERT" not in error.message


def test_a_file_that_is_not_a_database_is_no_database_when_opened_from_the_settings(
    tmp_path: Path,
) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"x" * 4096)

    def read() -> object:
        return sqlite3.connect(garbage).execute("SELECT * FROM sqlite_master").fetchall()

    assert isinstance(mapped(read, where="'garbage.db'"), NoDatabase)
    # Later, under a running server, it is trouble of the moment: retry.
    assert "(the file is not a SQLite database)" in mapped(read).message


def test_sqlalchemys_wrappers_are_mapped_by_the_class_they_mirror(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grattage.adapters.database

    monkeypatch.setattr(grattage.adapters.database, "SQLITE_BUSY_TIMEOUT_MS", 0)
    engine = make_engine(f"sqlite:///{database}", create=False)
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")

    def write() -> None:
        with engine.connect() as connection:
            connection.execute(text("UPDATE t SET name = :name"), {"name": SECRET})

    try:
        error = mapped(write)
    finally:
        holder.rollback()
        engine.dispose()
    assert isinstance(error, Unavailable) and "locked" in error.message
    assert isinstance(error.__cause__, OperationalError)


@pytest.mark.parametrize(
    "trouble",
    [
        OperationalError(f"UPDATE blocks SET x = '{SECRET}'", {}, Exception("locked")),
        InterfaceError(f"SELECT '{SECRET}'", {}, Exception("connection closed")),
        InternalError(f"SELECT '{SECRET}'", {}, Exception("read-only transaction")),
        PoolTimeout("QueuePool limit of size 10 overflow 40 reached"),
    ],
    ids=type,
)
def test_every_kind_of_database_trouble_is_unavailable_without_the_drivers_text(
    trouble: Exception,
) -> None:
    def fail() -> None:
        raise trouble

    error = mapped(fail)
    assert isinstance(error, Unavailable)
    assert SECRET not in error.message and "SELECT" not in error.message


def test_integrity_and_programming_errors_are_bugs_left_as_they_are(database: Path) -> None:
    connection = sqlite3.connect(database)
    with pytest.raises(sqlite3.IntegrityError), database_errors_mapped():
        connection.execute("INSERT INTO t (name) VALUES ('taken')")
    with pytest.raises(sqlite3.OperationalError, match="syntax error"), database_errors_mapped():
        connection.execute("SELEC 1")
    wrapped = IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed"))

    def fail() -> None:
        raise wrapped

    with pytest.raises(IntegrityError), database_errors_mapped():
        fail()


@pytest.fixture
def postgres() -> Iterator[str]:
    base = os.environ.get(PG_URL_VARIABLE)
    if not base:
        pytest.skip(f"{PG_URL_VARIABLE} is not set")
    yield make_url(base).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.mark.postgres
def test_postgres_refused_missing_read_only_and_refused_values(postgres: str) -> None:
    import psycopg

    def connect(url: str) -> Callable[[], object]:
        return lambda: psycopg.connect(url, connect_timeout=5)

    closed_port = make_url(postgres).set(port=1).render_as_string(hide_password=False)
    down = mapped(connect(closed_port))
    assert isinstance(down, Unavailable) and "lost or refused" in down.message
    nowhere = make_url(postgres).set(database="grattage_no_such_db")
    missing = mapped(connect(nowhere.render_as_string(hide_password=False)), where="'there'")
    assert isinstance(missing, NoDatabase) and "no database at 'there'" in missing.message
    with psycopg.connect(postgres) as connection:
        connection.execute("SET TRANSACTION READ ONLY")
        read_only = mapped(lambda: connection.execute("CREATE TABLE grattage_never (x int)"))
        assert isinstance(read_only, Unavailable) and "read-only" in read_only.message
    with psycopg.connect(postgres) as connection:
        nul = mapped(lambda: connection.execute("SELECT %s::text", [f"{SECRET}\x00"]))
        assert isinstance(nul, UnstorableValue) and "NUL" in nul.message
    with psycopg.connect(postgres) as connection:
        big = mapped(lambda: connection.execute("SELECT %s::int4", [2**31]))
        assert isinstance(big, UnstorableValue) and "out of range" in big.message
        assert SECRET not in nul.message + big.message


@pytest.mark.postgres
def test_postgres_errors_through_sqlalchemy_are_mapped_alike(postgres: str) -> None:
    engine = make_engine(make_url(postgres).set(drivername="postgresql+psycopg").render_as_string(
        hide_password=False
    ))  # fmt: skip
    try:
        with engine.connect() as connection:
            query = text("SELECT CAST(:value AS text)")
            error = mapped(lambda: connection.execute(query, {"value": f"{SECRET}\x00"}))
    finally:
        engine.dispose()
    assert isinstance(error, UnstorableValue) and SECRET not in error.message
