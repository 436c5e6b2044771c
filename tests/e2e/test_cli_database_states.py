"""Whatever state the database is in, a command answers one line on stderr with a documented
exit code (2 bad input, 5 unavailable), never a traceback; only ``migrate`` and ``demo`` ever
create a database."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy.engine import make_url

from grattage.entrypoints.cli import cli
from support import PG_URL_VARIABLE, database_url

EXIT_BAD_INPUT = 2  # the documented exit codes (grattage.entrypoints.cli)
EXIT_UNAVAILABLE = 5
GRATTAGE = str(Path(sys.executable).parent / "grattage")

COMMANDS_THAT_NEED_A_DATABASE = [
    ("block", "list"),
    ("block", "close", "1"),
    ("emission", "create", "cash"),
    ("sweep",),
    ("reconcile",),
    ("report", "blocks"),
    ("audit", "verify"),
    ("operator", "create", "op@example.org", "--password-stdin"),
    ("serve", "--port", "8765"),
]


def run(url: str, tmp_path: Path, *args: str) -> Result:
    env = {
        "GRATTAGE_DATABASE_URL": url,
        "GRATTAGE_KEY_DIR": str(tmp_path / "keys"),
        "GRATTAGE_DISCLOSURE_DIR": str(tmp_path / "disclosures"),
        "GRATTAGE_PASSWORD_TIME_COST": "1",
        "GRATTAGE_PASSWORD_MEMORY_KIB": "1024",
    }
    return CliRunner().invoke(
        cli, list(args), env=env, input="correct horse battery\n", catch_exceptions=False
    )


def assert_one_line(result: Result, code: int, fragment: str) -> None:
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("grattage: error: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in result.output


def test_a_command_run_from_another_folder_says_there_is_no_database_and_creates_none(
    tmp_path: Path,
) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GRATTAGE_")}
    done = subprocess.run(
        [GRATTAGE, "block", "list"], cwd=tmp_path, env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert done.stderr == (
        f"grattage: error: no database at 'var/grattage.db' ({tmp_path}/var/grattage.db); "
        "run `grattage migrate` first\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", COMMANDS_THAT_NEED_A_DATABASE, ids=" ".join)
def test_a_command_other_than_migrate_refuses_a_missing_sqlite_file_and_leaves_none(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    missing = tmp_path / "nowhere" / "grattage.db"
    result = run(f"sqlite:///{missing}", tmp_path, *command)
    assert_one_line(result, EXIT_BAD_INPUT, f"no database at '{missing}'; run `grattage migrate`")
    assert not missing.parent.exists()


def test_migrate_creates_the_missing_sqlite_database_and_then_commands_work(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'grattage.db'}"
    assert run(url, tmp_path, "migrate").exit_code == 0
    listed = run(url, tmp_path, "block", "list")
    assert (listed.exit_code, listed.stdout) == (0, "")


def test_a_sqlite_file_never_migrated_is_refused_with_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "grattage.db"
    sqlite3.connect(empty).close()
    result = run(f"sqlite:///{empty}", tmp_path, "block", "list")
    assert_one_line(result, EXIT_BAD_INPUT, "is not migrated; run `grattage migrate` first")


@pytest.mark.parametrize("command", [("block", "list"), ("migrate",)], ids=" ".join)
def test_a_directory_in_place_of_the_database_file_is_exit_2(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    (tmp_path / "grattage.db").mkdir()
    result = run(f"sqlite:///{tmp_path / 'grattage.db'}", tmp_path, *command)
    assert_one_line(result, EXIT_BAD_INPUT, "it is not a file")


def test_a_file_that_is_not_a_database_is_exit_2(tmp_path: Path) -> None:
    garbage = tmp_path / "grattage.db"
    garbage.write_bytes(b"not a database, " * 512)
    result = run(f"sqlite:///{garbage}", tmp_path, "block", "list")
    assert_one_line(result, EXIT_BAD_INPUT, "the file is not a SQLite database")


def test_a_locked_sqlite_database_is_unavailable_exit_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grattage.adapters.database

    monkeypatch.setattr(grattage.adapters.database, "SQLITE_BUSY_TIMEOUT_MS", 200)
    with database_url("sqlite", tmp_path) as url:
        holder = sqlite3.connect(make_url(url).database or "", isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            result = run(url, tmp_path, "block", "close", "1")
        finally:
            holder.rollback()
            holder.close()
    assert_one_line(result, EXIT_UNAVAILABLE, "the database is locked by another writer")


@contextmanager
def read_only_folder(folder: Path) -> Iterator[None]:
    """``folder`` turned read-only: a read-only remount of a tmpfs (root ignores file modes),
    or the modes of the folder and its files for anyone else."""
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in [folder, *folder.iterdir()]}
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    if subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=False).returncode:
        pytest.skip("cannot remount the tmpfs read-only here")
    try:
        yield
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(folder)], check=True)


@contextmanager
def scratch_folder(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "db"
    folder.mkdir()
    if os.geteuid() != 0:
        yield folder
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_a_read_only_sqlite_database_is_unavailable_exit_5(tmp_path: Path) -> None:
    with scratch_folder(tmp_path) as folder, database_url("sqlite", folder) as url:
        with read_only_folder(folder):
            result = run(url, tmp_path, "block", "close", "1")
        assert_one_line(result, EXIT_UNAVAILABLE, "the database is unavailable right now (")
        assert "read-only" in result.stderr or "cannot be opened" in result.stderr


def test_postgres_down_is_unavailable_exit_5(tmp_path: Path) -> None:
    url = "postgresql+psycopg://postgres@127.0.0.1:1/grattage"
    for command in (("block", "list"), ("migrate",)):
        result = run(url, tmp_path, *command)
        assert_one_line(result, EXIT_UNAVAILABLE, "lost or refused")


def postgres_url(**parts: str) -> str:
    base = os.environ.get(PG_URL_VARIABLE)
    if not base:
        pytest.skip(f"{PG_URL_VARIABLE} is not set")
    return make_url(base).set(**parts).render_as_string(hide_password=False)  # type: ignore[arg-type]


@pytest.mark.postgres
@pytest.mark.parametrize("command", [("block", "list"), ("migrate",)], ids=" ".join)
def test_a_postgres_database_that_does_not_exist_is_exit_2(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    result = run(postgres_url(database="grattage_no_such_database"), tmp_path, *command)
    assert_one_line(result, EXIT_BAD_INPUT, "no database at '")
    assert "grattage_no_such_database" in result.stderr


@pytest.mark.postgres
def test_postgres_refusing_the_role_is_unavailable_exit_5(tmp_path: Path) -> None:
    result = run(postgres_url(username="grattage_no_such_role"), tmp_path, "block", "list")
    assert_one_line(result, EXIT_UNAVAILABLE, "lost or refused")


@pytest.mark.postgres
def test_a_postgres_schema_never_migrated_is_refused_and_left_empty(tmp_path: Path) -> None:
    with database_url("postgres", tmp_path, migrated=False) as url:
        result = run(url, tmp_path, "block", "list")
        assert_one_line(result, EXIT_BAD_INPUT, "is not migrated; run `grattage migrate` first")
        assert run(url, tmp_path, "migrate").exit_code == 0
        assert run(url, tmp_path, "block", "list").exit_code == 0
