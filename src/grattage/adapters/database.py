"""Engines for SQLite and PostgreSQL behind one code path.

SQLite: WAL with ``synchronous=FULL`` (a committed purchase survives a crash of the process or
the machine), a busy timeout, and ``BEGIN IMMEDIATE`` for write transactions so two writers
never deadlock upgrading a read lock; the writers of one process share commits
(:mod:`grattage.adapters.group_commit`). PostgreSQL: plain READ COMMITTED; the
repositories use atomic ``UPDATE … RETURNING`` and ``SELECT … FOR UPDATE`` where it matters.

Every PostgreSQL connection carries three time limits (:class:`PostgresTimeouts`, from the
settings), sent as startup options so they hold from the first statement: ``lock_timeout`` (a
row held by a stuck transaction costs a purchase at most this long, then 55P03 →
``Unavailable``), ``statement_timeout`` (57014 → ``Unavailable``) and
``idle_in_transaction_session_timeout`` (the server ends a session that opened a transaction
and went silent — a hung client — so its row locks do not outlive it). A limit of 0 turns
that limit off, as in PostgreSQL.

Those three are the server's: none of them helps a client whose link to the server is cut,
which would otherwise wait in the kernel's retransmissions (15 minutes on Linux) — and the
server's end of that connection, its row locks held, as long. So every connection also has a
**TCP time limit** on both ends: libpq's ``connect_timeout`` (a connection that cannot be
opened), ``tcp_user_timeout`` (data sent and not acknowledged) and keepalives (a silent
peer), and the server's own ``tcp_user_timeout`` and ``tcp_keepalives_*`` for the backend's
socket (sent with the three limits above), so that a cut connection fails on the app's side
(``Unavailable``, 503) and ends on the database's (its transaction rolled back, its locks
released) within about that limit.

Only ``grattage migrate`` and ``grattage demo`` may create a SQLite file: for every other use
an engine is made with ``create=False`` and opens the file read-write without ever creating it
(a command run from another folder must not leave an empty ``var/grattage.db`` behind).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import QueuePool

from grattage.adapters.driver_sql import flush_deferred
from grattage.errors import InvalidInput, NoDatabase

WRITE_OPTION = "grattage_write"
SQLITE_BUSY_TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class PostgresTimeouts:
    """Milliseconds; 0 is no limit (PostgreSQL's own default for all three)."""

    lock_ms: int = 2_000
    statement_ms: int = 5_000
    idle_in_transaction_ms: int = 30_000
    connect_s: int = 3
    """libpq's ``connect_timeout`` (seconds; it counts 1 as 2)."""
    tcp_ms: int = 5_000
    """A connection whose peer acknowledged nothing this long is closed, on both ends."""

    def startup_options(self) -> str:
        """The ``options`` connection parameter: ``-c name=value`` for each server limit."""
        options = (
            f"-c lock_timeout={self.lock_ms} -c statement_timeout={self.statement_ms} "
            f"-c idle_in_transaction_session_timeout={self.idle_in_transaction_ms}"
        )
        if self.tcp_ms:
            idle, interval, count = self._keepalives()
            options += (
                f" -c tcp_user_timeout={self.tcp_ms} -c tcp_keepalives_idle={idle}"
                f" -c tcp_keepalives_interval={interval} -c tcp_keepalives_count={count}"
            )
        return options

    def client_parameters(self) -> dict[str, int]:
        """libpq's connection parameters for the client's end of the socket."""
        parameters = {"connect_timeout": self.connect_s}
        if self.tcp_ms:
            idle, interval, count = self._keepalives()
            parameters |= {
                "tcp_user_timeout": self.tcp_ms,
                "keepalives": 1,
                "keepalives_idle": idle,
                "keepalives_interval": interval,
                "keepalives_count": count,
            }
        return parameters

    def _keepalives(self) -> tuple[int, int, int]:
        # A silent peer is probed after half the limit, then every second: declared dead
        # about the limit after its last word (tcp_user_timeout then bounds the probes too).
        half = max(1, -(-self.tcp_ms // 2000))
        return half, 1, half


NO_TIMEOUTS = PostgresTimeouts(0, 0, 0, 0, 0)


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def parse_database_url(url: str) -> URL:
    """``url`` read by SQLAlchemy; one that it cannot read, or whose database kind it does not
    know, is bad input — said without the URL, which may hold a password."""
    try:
        parsed = make_url(url)
        parsed.get_dialect()  # an unknown kind (``mysq://``) fails here, not at first use
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise InvalidInput(
            "GRATTAGE_DATABASE_URL is not a database URL SQLAlchemy reads (sqlite:///PATH or "
            "postgresql+psycopg://USER@HOST:PORT/NAME)"
        ) from None
    return parsed


def describe_database(url: str) -> str:
    """The database of ``url`` for a message: a SQLite file's path (made absolute, for a
    command run from another folder), or the URL without its password."""
    parsed = parse_database_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ":memory:"
        if database == ":memory:":
            return "':memory:'"
        absolute = Path(database).absolute()
        return repr(database) if str(absolute) == database else f"{database!r} ({absolute})"
    return repr(parsed.render_as_string(hide_password=True))


def make_engine(
    url: str,
    schema: str | None = None,
    create: bool = True,
    timeouts: PostgresTimeouts | None = None,
) -> Engine:
    """An engine for ``url``; ``schema`` (PostgreSQL) puts every table in that schema, and
    ``timeouts`` (PostgreSQL; the defaults of :class:`PostgresTimeouts` if None) bound every
    connection's waits.

    With ``create`` false a SQLite file that does not exist is refused (:class:`NoDatabase`),
    never created. (A PostgreSQL database is never created here: the server refuses a
    connection to one that does not exist.)
    """
    parsed = parse_database_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, create)
    limits = timeouts or PostgresTimeouts()
    options = limits.startup_options()
    # ``options`` given in the URL (a search_path, say) would be replaced by connect_args':
    # keep them, after ours, so that they win on a clash.
    in_url = parsed.query.get("options")
    for given in (in_url,) if isinstance(in_url, str) else in_url or ():
        options += f" {given}"
    if schema:
        options += f" -csearch_path={schema}"
    connect_args: dict[str, Any] = {"options": options, **limits.client_parameters()}
    engine = create_engine(
        url, connect_args=connect_args, pool_size=10, max_overflow=40, pool_pre_ping=True
    )

    @event.listens_for(engine, "before_cursor_execute")
    def _deferred_first(connection: Connection, *_: Any) -> None:
        # A lane batch's deferred statements come before any statement of SQLAlchemy's.
        flush_deferred(connection)

    return engine


def _sqlite_engine(url: str, create: bool) -> Engine:
    database = make_url(url).database
    timeout = SQLITE_BUSY_TIMEOUT_MS / 1000
    options: dict[str, Any] = {}
    if database and database != ":memory:":
        path = Path(database)
        if path.exists() and not path.is_file():
            raise NoDatabase(f"no database at {describe_database(url)}: it is not a file")
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.exists():
            raise NoDatabase(
                f"no database at {describe_database(url)}; run `grattage migrate` first"
            )
        else:
            # mode=rw: should the file vanish from now on, opening it fails; never a new one.
            uri = f"{path.absolute().as_uri()}?mode=rw"

            def _open_existing() -> sqlite3.Connection:
                return sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=timeout)

            options["creator"] = _open_existing
    engine = create_engine(
        url,
        **options,
        poolclass=QueuePool,
        # Above the server's 40 request threads: a connection beyond pool_size is opened and
        # configured per checkout and closed after, which cost more than the reads it served.
        pool_size=48,
        max_overflow=16,
        connect_args={"check_same_thread": False, "timeout": timeout},
    )

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event (below) issue BEGIN, not the driver.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, True)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine
