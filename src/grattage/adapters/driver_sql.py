"""Where raw SQL lives: the hot statements, and the runner that puts them on the driver.

A purchase runs about a dozen statements. Through SQLAlchemy each costs several times what
SQLite takes to run it — even ``exec_driver_sql`` builds an execution context and a result
object per statement — so the statements of every purchase (and of every request's session
lookup) are written here once, in portable SQL with ``:name`` parameters, and run on the DBAPI
connection underneath the SQLAlchemy one (SQLite takes ``:name``, psycopg ``%(name)s``), which
SQLAlchemy documents as the way to reach the driver. They still run inside the SQLAlchemy
connection's transaction; a driver error is wrapped in SQLAlchemy's exception classes exactly
as SQLAlchemy would, and a lost connection is invalidated, so callers handle both paths alike.
Times pass through :mod:`grattage.adapters.db_time` both ways. Every other statement is
SQLAlchemy Core, in the repository that runs it: no repository holds SQL text (the engine's
PRAGMAs are in :mod:`grattage.adapters.database`, the schema's history in the migrations).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, MultipleResultsFound, NoResultFound

from grattage.service.model import LimitsRow, NewTicket

_NAMED = re.compile(r"(?<!:):(\w+)")


class DriverResult:
    """The rows a statement returned; the few of ``CursorResult``'s methods the hot path uses."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[Sequence[Any]]) -> None:
        self.rows = rows

    def __iter__(self) -> Iterator[Sequence[Any]]:
        return iter(self.rows)

    def first(self) -> Sequence[Any] | None:
        return self.rows[0] if self.rows else None

    def one(self) -> Sequence[Any]:
        if not self.rows:
            raise NoResultFound("No row was found when one was required")
        if len(self.rows) > 1:
            raise MultipleResultsFound("Multiple rows were found when exactly one was required")
        return self.rows[0]

    def scalar(self) -> Any:
        return self.rows[0][0] if self.rows else None

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalars(self) -> list[Any]:
        return [row[0] for row in self.rows]


class DriverSql:
    """One statement, prepared for both drivers' parameter styles once."""

    def __init__(
        self, sql: str, *, returns_rows: bool | None = None, deferrable: bool = False
    ) -> None:
        """``returns_rows`` None: a SELECT, or a statement with a RETURNING clause.
        ``deferrable``: its caller needs no answer, so inside a lane batch it waits to be
        sent with the next statement that does (:func:`defer_on`) — nor catches its errors,
        which that statement raises."""
        self.sql = " ".join(sql.split())
        self.deferrable = deferrable
        self._pyformat = _NAMED.sub(r"%(\1)s", self.sql.replace("%", "%%"))
        if returns_rows is None:
            returns_rows = self.sql.split(" ", 1)[0].upper() == "SELECT" or (
                " RETURNING " in self.sql.upper()
            )
        self._returns_rows = returns_rows

    def __call__(
        self, connection: Connection, parameters: dict[str, Any] | None = None
    ) -> DriverResult:
        """Run on ``connection``'s driver connection, in its current transaction."""
        sqlite = connection.dialect.name == "sqlite"
        text = self.sql if sqlite else self._pyformat
        parameters = parameters if parameters is not None else {}
        if not sqlite and (deferred := _deferred(connection)) is not None:
            if self.deferrable:
                deferred.append((text, parameters))
                return _NO_ROWS
            if deferred:
                return self._with_deferred(connection, deferred, text, parameters)
        proxied = connection.connection
        cursor = proxied.cursor()
        try:
            cursor.execute(text, parameters)
            return DriverResult(list(cursor.fetchall()) if self._returns_rows else [])
        except connection.dialect.loaded_dbapi.Error as failure:
            if connection.dialect.is_disconnect(failure, proxied.dbapi_connection, cursor):
                connection.invalidate(failure)
            raise DBAPIError.instance(
                text, parameters, failure, connection.dialect.loaded_dbapi.Error
            ) from failure
        finally:
            cursor.close()

    def _with_deferred(
        self,
        connection: Connection,
        deferred: list[tuple[str, dict[str, Any]]],
        text: str,
        parameters: dict[str, Any],
    ) -> DriverResult:
        """The statements waiting, then this one, in one pipeline: one round trip."""
        waiting = list(deferred)
        deferred.clear()
        return _pipelined(connection, [*waiting, (text, parameters)], self._returns_rows)


# Lane batches (adapters/lane_batch.py) defer what needs no answer: a savepoint, its release,
# the week's counters, a movement's rows… and send it in one libpq pipeline with the next
# statement whose answer the purchase waits for. Every statement of a purchase then costs a
# round trip only where the service needs to know something — on PostgreSQL each is one more
# wait of every buyer of the game, whose block row the batch holds. An error in a deferred
# statement is raised by the statement it went with (or the batch's commit), in the same
# purchase's savepoint at the latest: a purchase sends what it deferred before it ends
# (LaneBatch.write), except its RELEASE, which goes with the next purchase's first statement.
_DEFERRED = "grattage_deferred_statements"
_NO_ROWS = DriverResult([])


def _deferred(connection: Connection) -> list[tuple[str, dict[str, Any]]] | None:
    if connection.invalidated:
        return None
    found: list[tuple[str, dict[str, Any]]] | None = connection.info.get(_DEFERRED)
    return found


def defer_on(connection: Connection) -> None:
    """From now on, deferrable statements on ``connection`` wait for the next that is not
    (PostgreSQL with pipelines; else nothing changes). Ended by :func:`stop_deferring`."""
    if connection.dialect.name != "sqlite" and _pipelines_supported():
        connection.info[_DEFERRED] = []


def stop_deferring(connection: Connection) -> None:
    """Forget what waits (the transaction ends: rolled back, or flushed by its commit)."""
    if not connection.invalidated and not connection.closed:  # else its info went with it
        connection.info.pop(_DEFERRED, None)


def flush_deferred(connection: Connection) -> None:
    """Send what waits, now (before a commit, or a statement that does not come from here)."""
    deferred = _deferred(connection)
    if deferred:
        waiting = list(deferred)
        deferred.clear()
        _pipelined(connection, waiting, returns_rows=False)


@cache
def _pipelines_supported() -> bool:
    import psycopg

    return bool(psycopg.Pipeline.is_supported())


def _pipelined(
    connection: Connection, statements: list[tuple[str, dict[str, Any]]], returns_rows: bool
) -> DriverResult:
    """``statements`` in one pipeline; the last one's rows."""
    proxied = connection.connection
    driver: Any = proxied.driver_connection
    cursors = [driver.cursor() for _ in statements]
    text = "; ".join(sql for sql, _ in statements)
    try:
        with driver.pipeline():
            for cursor, (sql, parameters) in zip(cursors, statements, strict=True):
                cursor.execute(sql, parameters)
        return DriverResult(list(cursors[-1].fetchall()) if returns_rows else [])
    except connection.dialect.loaded_dbapi.Error as failure:
        if connection.dialect.is_disconnect(failure, proxied.dbapi_connection, None):
            connection.invalidate(failure)
        raise DBAPIError.instance(
            text, statements[-1][1], failure, connection.dialect.loaded_dbapi.Error
        ) from failure
    finally:
        for cursor in cursors:
            cursor.close()


# A lane batch's turn: its game's rows, taken first (adapters/lane_batch.py), the wait for them
# bounded as a whole by the lock timeout (which PostgreSQL counts for each lock of a row: a
# row's tuple lock, then its holder's transaction).
LOCK_WAIT_AS_STATEMENT_LIMIT = DriverSql(
    "SELECT set_config('statement_timeout', current_setting('lock_timeout'), true)",
    deferrable=True,
)
STATEMENT_LIMIT_RESET = DriverSql(
    "SET LOCAL statement_timeout TO DEFAULT", returns_rows=False, deferrable=True
)
# NO KEY UPDATE, the lock a sale's own UPDATE of the row takes: FOR UPDATE also waited for the
# drawer's foreign-key checks (FOR KEY SHARE) while the drawer held winners' wallets — a
# deadlock with a batch that held the row and waited for one of those wallets.
LOCK_OPEN_BLOCKS = DriverSql(
    "SELECT id FROM blocks WHERE game = :game AND state = 'open' ORDER BY id FOR NO KEY UPDATE"
)
# The group committer's savepoints (SQLAlchemy's nested transactions cost more than a sale).
SAVEPOINT = DriverSql("SAVEPOINT grattage_write", deferrable=True)
ROLLBACK_TO_SAVEPOINT = DriverSql("ROLLBACK TO SAVEPOINT grattage_write")
RELEASE_SAVEPOINT = DriverSql("RELEASE SAVEPOINT grattage_write", deferrable=True)

# Sessions: every authenticated request.
FIND_SESSION = DriverSql(
    """SELECT sessions.id, sessions.player_id, players.email, sessions.last_seen_at,
              sessions.created_at, player_limits.reality_checked_at
       FROM sessions JOIN players ON players.id = sessions.player_id
       LEFT JOIN player_limits ON player_limits.player_id = sessions.player_id
       WHERE sessions.token_hash = :token_hash"""
)

# The ledger.
PLAYER_ACCOUNT = DriverSql("SELECT id, balance_cents FROM accounts WHERE player_id = :player_id")
# Every purchase and deposit asks, after locking the wallet (service/suspensions.py).
PLAYER_SUSPENDED = DriverSql("SELECT 1 FROM player_suspensions WHERE player_id = :player_id")
LOCK_ACCOUNT = DriverSql("SELECT id FROM accounts WHERE id = :account_id FOR UPDATE")
LOCK_ACCOUNT_NOWAIT = DriverSql("SELECT id FROM accounts WHERE id = :account_id FOR UPDATE NOWAIT")
LOCK_ACCOUNT_OF_PLAYER = DriverSql(
    "SELECT id FROM accounts WHERE player_id = :player_id FOR UPDATE"
)
CHANGE_PLAYER_BALANCE = DriverSql(
    """UPDATE accounts SET balance_cents = balance_cents + :amount
       WHERE id = :account_id AND kind = 'player' AND balance_cents + :amount >= 0
       RETURNING balance_cents"""
)
# A movement is one row carrying its two legs (migration 0017): one INSERT on both databases,
# answering nothing, so a lane batch sends it with the next statement that does.
INSERT_MOVEMENT = DriverSql(
    """INSERT INTO movements (amount_cents, created_at, player_id, ticket_id,
                              from_account_id, to_account_id, kind)
       VALUES (:amount, :created_at, :player_id, :ticket_id, :from_account, :to_account, :kind)""",
    deferrable=True,
)


# Blocks.
OPEN_BLOCK_IDS = DriverSql(
    """SELECT id FROM blocks WHERE game = :game AND state = 'open' AND sold < size
       ORDER BY id LIMIT 16"""
)
# With a drawn block's receipt chain tip (docs/draw.md), read on the row this locks.
TAKE_UNIT = DriverSql(
    """UPDATE blocks SET sold = sold + 1
       WHERE id = :block_id AND state = 'open' AND sold < size
       RETURNING sold, size, price_cents, last_receipt_sha256, last_round_ms"""
)
SET_CHAIN_TIP = DriverSql(
    """UPDATE blocks SET last_receipt_sha256 = :receipt_sha256, last_round_ms = :round_ms
       WHERE id = :block_id"""
)
QUEUE_DRAW = DriverSql(
    """INSERT INTO draw_queue
       (ticket_id, block_id, sequence, chain_id, round, round_ms, receipt_sha256)
       VALUES (:ticket_id, :block_id, :sequence, :chain_id, :round, :round_ms, :receipt_sha256)"""
)
PLACE_TICKET = DriverSql(
    "UPDATE tickets SET block_id = :block_id, sequence = :sequence WHERE id = :ticket_id"
)
# The three above in one round trip, on PostgreSQL (data-modifying WITH, which SQLite lacks):
# a drawn sale runs them while it holds its block's row, which every sale of the game waits
# for — on PostgreSQL each statement there is a round trip added to every sale's wait.
QUEUE_DRAW_PLACE_TICKET_AND_SET_CHAIN_TIP = DriverSql(
    """WITH queued AS (
           INSERT INTO draw_queue
           (ticket_id, block_id, sequence, chain_id, round, round_ms, receipt_sha256)
           VALUES (:ticket_id, :block_id, :sequence, :chain_id, :round, :round_ms,
                   :receipt_sha256)),
       placed AS (
           UPDATE tickets SET block_id = :block_id, sequence = :sequence
           WHERE id = :ticket_id)
       UPDATE blocks SET last_receipt_sha256 = :receipt_sha256, last_round_ms = :round_ms
       WHERE id = :block_id""",
    returns_rows=False,  # not deferrable: its caller tells a sale index taken (a 500) apart
)
# The drawer's statements: each draw runs them (docs/draw.md).
SLOT = DriverSql(
    "SELECT slot, unit, set_by FROM draw_slots WHERE block_id = :block_id AND slot = :slot"
)
SLOTS_FROM = DriverSql(
    """SELECT slot, unit, set_by FROM draw_slots
       WHERE block_id = :block_id AND slot >= :low AND slot < :high"""
)
SET_SLOT = DriverSql(
    """INSERT INTO draw_slots (block_id, slot, unit, set_by)
       VALUES (:block_id, :slot, :unit, :set_by)
       ON CONFLICT (block_id, slot) DO UPDATE SET unit = excluded.unit, set_by = excluded.set_by"""
)
DROP_SLOT = DriverSql("DELETE FROM draw_slots WHERE block_id = :block_id AND slot = :slot")
DEQUEUE_DRAW = DriverSql("DELETE FROM draw_queue WHERE ticket_id = :ticket_id")
RESOLVE_TICKET = DriverSql(
    """UPDATE tickets SET position = :position, prize_cents = :prize_cents,
              document = :document, revealed = :revealed, state = :state,
              last_action_at = :last_action_at, finished_at = :finished_at,
              finished_by = :finished_by, balance_after_cents = :balance_after_cents
       WHERE id = :ticket_id AND state = 'covered' RETURNING id"""
)
ENQUEUE_LOG = DriverSql(
    """INSERT INTO log_queue (kind, body, block_id, ticket_id)
       VALUES (:kind, :body, :block_id, :ticket_id)"""
)
SEALED_CHUNK = DriverSql(
    "SELECT sealed_tiers FROM block_chunks WHERE block_id = :block_id AND chunk = :chunk"
)
# A winning sale counts its prize (the first of an amount inserts its row); how many of that
# amount the block has sold, with this one.
COUNT_PRIZE_SOLD = DriverSql(
    """INSERT INTO block_prizes_sold (block_id, prize_cents, sold)
       VALUES (:block_id, :prize_cents, 1)
       ON CONFLICT (block_id, prize_cents) DO UPDATE SET sold = block_prizes_sold.sold + 1
       RETURNING sold"""
)

# Tickets.
TICKET_COLUMNS = tuple(NewTicket.__dataclass_fields__)
INSERT_TICKET = DriverSql(
    f"INSERT INTO tickets ({', '.join(TICKET_COLUMNS)}) "
    f"VALUES ({', '.join(':' + name for name in TICKET_COLUMNS)}) RETURNING id"
)


@cache
def due_tickets(games: int, of_one_player: bool) -> DriverSql:
    """The playing tickets overdue: idle past ``:abandon_cutoff``, or past
    ``:inactivity_cutoff`` in one of ``games`` games (``:game0``…), lowest ids first; of
    ``:player_id`` only (every purchase asks) or of everyone (the sweeper)."""
    games_in = ", ".join(f":game{index}" for index in range(games)) or "NULL"
    player = "player_id = :player_id AND " if of_one_player else ""
    return DriverSql(
        f"""SELECT id FROM tickets
            WHERE {player}state = 'playing'
              AND (last_action_at <= :abandon_cutoff
                   OR (last_action_at <= :inactivity_cutoff AND game IN ({games_in})))
            ORDER BY id LIMIT :limit"""
    )


# Responsible gaming: the player's limits, read and locked on every purchase.
LIMITS_COLUMNS = tuple(LimitsRow.__dataclass_fields__)
_LIMITS = f"SELECT {', '.join(LIMITS_COLUMNS)} FROM player_limits WHERE player_id = :player_id"
LIMITS = DriverSql(_LIMITS)
LIMITS_FOR_UPDATE = DriverSql(_LIMITS + " FOR UPDATE")
SET_WEEK_COUNTERS = DriverSql(
    """UPDATE player_limits
       SET week_start = :week, week_deposits_cents = :deposits, week_stakes_cents = :stakes
       WHERE player_id = :player_id""",
    deferrable=True,
)


# The operator key in force (docs/fairness.md, "Key rotation"), held by every transaction that
# signs for the log until it commits: FOR KEY SHARE on its one row (which also takes the table
# in ROW SHARE mode; signers never wait for each other). A rotation takes the table in EXCLUSIVE
# mode, which conflicts with ROW SHARE and queues the signers that come after it (a row lock
# alone would let a stream of share lockers overtake it). A sale queues its receipt only if the
# key it signed with is still in force, in the same statement: no statement more per sale.
SIGNING_KEY = DriverSql("SELECT key_id FROM log_signer WHERE id = 1")
SIGNING_KEY_HELD = DriverSql("SELECT key_id FROM log_signer WHERE id = 1 FOR KEY SHARE")
LOCK_SIGNER_TABLE = DriverSql("LOCK TABLE log_signer IN EXCLUSIVE MODE")
SIGNING_KEY_FOR_UPDATE = DriverSql("SELECT key_id FROM log_signer WHERE id = 1 FOR UPDATE")
_ENQUEUE_SIGNED = """INSERT INTO log_queue (kind, body, block_id, ticket_id)
    SELECT :kind, :body, CAST(:block_id AS INTEGER), CAST(:ticket_id AS INTEGER)
    FROM log_signer WHERE id = 1 AND COALESCE(key_id, '') = :key_id"""
ENQUEUE_SIGNED = DriverSql(f"{_ENQUEUE_SIGNED} FOR KEY SHARE RETURNING id")
ENQUEUE_SIGNED_SQLITE = DriverSql(f"{_ENQUEUE_SIGNED} RETURNING id")  # its writer lock holds it
