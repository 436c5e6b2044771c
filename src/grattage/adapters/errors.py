"""Database and driver errors into the one exception tree, here and nowhere else.

As httpx turns its transports' errors into its own tree, the adapters turn SQLAlchemy's,
sqlite3's and psycopg's into :mod:`grattage.errors`; the entry points then map only that tree.

    raised by SQLAlchemy or the driver                          becomes
    DataError (a NUL in a text, a number out of range) ...... UnstorableValue (InvalidInput)
    "database … does not exist" (PostgreSQL, on connect) .... NoDatabase (InvalidInput)
    "file is not a database" (SQLite, opening the settings') NoDatabase (InvalidInput)
    OperationalError, InterfaceError, InternalError, any
    other DatabaseError, the pool's TimeoutError ............ Unavailable
    IntegrityError, ProgrammingError, NotSupportedError,
    SQLite's generic SQLITE_ERROR (a syntax error) .......... left alone: a bug (500, traceback)

Unavailable covers a database that is down, locked too long, read-only, full, dropped the
connection or broke a deadlock: the transaction was rolled back, a retry is safe. An
IntegrityError that is an expected business fact (an e-mail already registered) is handled by
the repository that expects it, before it gets here.

Messages never carry the driver's text, which can hold SQL and parameters: they name a reason
picked from the driver's error code (sqlite3's ``sqlite_errorname``, PostgreSQL's SQLSTATE),
and the driver's exception stays attached as ``__cause__`` for the logs of whoever needs it.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import sqlalchemy.exc
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from grattage.errors import GrattageError, NoDatabase, Unavailable, UnstorableValue

_SQLITE_REASONS = (
    ("SQLITE_BUSY", "the database is locked by another writer"),
    ("SQLITE_LOCKED", "the database is locked by another writer"),
    ("SQLITE_READONLY", "the database is read-only"),
    ("SQLITE_FULL", "the disk is full"),
    ("SQLITE_CANTOPEN", "the database file cannot be opened"),
    ("SQLITE_IOERR", "the disk failed to read or write"),
    ("SQLITE_NOTADB", "the file is not a SQLite database"),
    ("SQLITE_CORRUPT", "the database file is damaged"),
)

_POSTGRES_REASONS = (
    ("25006", "the database is read-only"),
    ("40P01", "a deadlock was broken"),
    ("40001", "a concurrent transaction conflicted"),
    ("53100", "the database's disk is full"),
    ("53200", "the database is out of memory"),
    ("53300", "the database has no connection to spare"),
    ("55P03", "a lock could not be had in time"),
    ("57014", "a statement took too long and was cancelled"),
    ("57P", "the database server is shutting down or starting"),
    ("08", "the connection to the database was lost or refused"),
)

_POSTGRES_DATA_REASONS = (
    ("22021", "a text holds a character the database cannot store (a NUL)"),
    ("22003", "a number is out of range"),
    ("22001", "a text is too long"),
)

_NO_SUCH_DATABASE = re.compile(r'database "[^"]*" does not exist')

UNAVAILABLE = "the database is unavailable right now ({reason}); retry in a moment"
UNSTORABLE = "a value cannot be stored: {reason}"


@contextmanager
def database_errors_mapped(where: str | None = None) -> Iterator[None]:
    """Turn a database or driver error raised in the block into its :mod:`grattage.errors`
    branch (see the module's table); ``where`` names the database in a NoDatabase message."""
    try:
        yield
    except _mapped_types() as raised:
        mapped = mapped_error(raised, where)
        if mapped is None:
            raise
        raise mapped from raised


def _mapped_types() -> tuple[type[BaseException], ...]:
    # psycopg's own errors (raw, when not wrapped by SQLAlchemy) only if psycopg was loaded.
    psycopg = sys.modules.get("psycopg")
    raw = (sqlite3.Error,) if psycopg is None else (sqlite3.Error, psycopg.Error)
    return (DBAPIError, PoolTimeout, *raw)


def mapped_error(error: BaseException, where: str | None = None) -> GrattageError | None:
    """The :mod:`grattage.errors` error ``error`` stands for; None when it is a bug."""
    if isinstance(error, PoolTimeout):
        return Unavailable(UNAVAILABLE.format(reason="no database connection is free"))
    # SQLAlchemy's wrappers mirror the DB-API classes of the driver's error they carry.
    family = sqlalchemy.exc if isinstance(error, DBAPIError) else _driver_module(error)
    if family is None:
        return None
    driver_error: BaseException = (error.orig or error) if isinstance(error, DBAPIError) else error
    if isinstance(error, family.DataError):
        return UnstorableValue(UNSTORABLE.format(reason=_data_reason(driver_error)))
    bugs = (family.IntegrityError, family.ProgrammingError, family.NotSupportedError)
    if isinstance(error, bugs) or not isinstance(
        error, (family.DatabaseError, family.InterfaceError)
    ):
        return None
    if _sqlite_name(driver_error) == "SQLITE_ERROR":
        # sqlite3 raises its generic error (a syntax error, no such table) as an
        # OperationalError: a bug in a statement, not a database in trouble.
        return None
    return _trouble(driver_error, where)


def is_lock_not_available(error: BaseException) -> bool:
    """Whether ``error`` is PostgreSQL's 55P03: a lock not had (``NOWAIT``, or its timeout)."""
    driver_error = (error.orig or error) if isinstance(error, DBAPIError) else error
    return _sqlstate(driver_error) == "55P03"


def _trouble(driver_error: BaseException, where: str | None) -> NoDatabase | Unavailable:
    place = f" at {where}" if where else ""
    if _NO_SUCH_DATABASE.search(str(driver_error)) and _sqlstate(driver_error) in (None, "3D000"):
        return NoDatabase(f"no database{place}; create it, then run `grattage migrate`")
    if where is not None and _sqlite_name(driver_error).startswith("SQLITE_NOTADB"):
        # Opening the database named by the settings: a wrong file, not a passing trouble.
        return NoDatabase(f"no database{place}: the file is not a SQLite database")
    return Unavailable(UNAVAILABLE.format(reason=_reason(driver_error)))


def _driver_module(error: BaseException) -> ModuleType | None:
    if isinstance(error, sqlite3.Error):
        return sqlite3
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None and isinstance(error, psycopg.Error):
        return psycopg
    return None


def _sqlite_name(error: BaseException) -> str:
    name = getattr(error, "sqlite_errorname", None) if isinstance(error, sqlite3.Error) else None
    return name if isinstance(name, str) else ""


def _sqlstate(error: BaseException) -> str | None:
    state = getattr(error, "sqlstate", None)
    return state if isinstance(state, str) else None


def _reason(error: BaseException) -> str:
    if isinstance(error, sqlite3.Error):
        name = _sqlite_name(error)
        for prefix, reason in _SQLITE_REASONS:
            if name.startswith(prefix):
                return reason
        return "the database failed"
    if _driver_module(error) is None:
        return "the database failed"
    state = _sqlstate(error)
    if state is None:
        # psycopg raises connection failures and lost connections without a SQLSTATE.
        return "the connection to the database was lost or refused"
    for prefix, reason in _POSTGRES_REASONS:
        if state.startswith(prefix):
            return reason
    return "the database failed"


def _data_reason(error: BaseException) -> str:
    state = _sqlstate(error) or ""
    for prefix, reason in _POSTGRES_DATA_REASONS:
        if state.startswith(prefix):
            return reason
    if "NUL" in str(error):
        # psycopg refuses a NUL before sending anything, without a SQLSTATE.
        return _POSTGRES_DATA_REASONS[0][1]
    return "the database refused one of its values"
