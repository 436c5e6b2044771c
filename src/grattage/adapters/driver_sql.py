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

    def __init__(self, sql: str, *, returns_rows: bool | None = None) -> None:
        """``returns_rows`` None: a SELECT, or a statement with a RETURNING clause."""
        self.sql = " ".join(sql.split())
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


# A lane batch's turn: its game's rows, taken first (adapters/lane_batch.py), the wait for them
# bounded as a whole by the lock timeout (which PostgreSQL counts for each lock of a row: a
# row's tuple lock, then its holder's transaction).
LOCK_WAIT_AS_STATEMENT_LIMIT = DriverSql(
    "SELECT set_config('statement_timeout', current_setting('lock_timeout'), true)"
)
STATEMENT_LIMIT_RESET = DriverSql("SET LOCAL statement_timeout TO DEFAULT", returns_rows=False)
# NO KEY UPDATE, the lock a sale's own UPDATE of the row takes: FOR UPDATE also waited for the
# drawer's foreign-key checks (FOR KEY SHARE) while the drawer held winners' wallets — a
# deadlock with a batch that held the row and waited for one of those wallets.
LOCK_OPEN_BLOCKS = DriverSql(
    "SELECT id FROM blocks WHERE game = :game AND state = 'open' ORDER BY id FOR NO KEY UPDATE"
)
# The group committer's savepoints (SQLAlchemy's nested transactions cost more than a sale).
SAVEPOINT = DriverSql("SAVEPOINT grattage_write")
ROLLBACK_TO_SAVEPOINT = DriverSql("ROLLBACK TO SAVEPOINT grattage_write")
RELEASE_SAVEPOINT = DriverSql("RELEASE SAVEPOINT grattage_write")

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
INSERT_MOVEMENT = DriverSql(
    """INSERT INTO movements (kind, player_id, ticket_id, created_at)
       VALUES (:kind, :player_id, :ticket_id, :created_at) RETURNING id"""
)


@cache
def insert_entries(legs: int) -> DriverSql:
    """One INSERT for all the legs of a movement (an executemany costs one call per row)."""
    rows = ", ".join(f"(:movement_id, :account{leg}, :amount{leg})" for leg in range(legs))
    return DriverSql(f"INSERT INTO entries (movement_id, account_id, amount_cents) VALUES {rows}")


@cache
def insert_movement_with_entries(legs: int) -> DriverSql:
    """A movement and all its legs in one statement (PostgreSQL only: SQLite's ``WITH`` takes
    no INSERT), the legs in order: one round trip where :data:`INSERT_MOVEMENT` and
    :func:`insert_entries` take two, while the sale holds its block's row."""
    rows = ", ".join(f"({leg}, :account{leg}, :amount{leg})" for leg in range(legs))
    return DriverSql(
        f"""WITH movement AS (
              INSERT INTO movements (kind, player_id, ticket_id, created_at)
              VALUES (:kind, :player_id, :ticket_id, :created_at) RETURNING id)
            INSERT INTO entries (movement_id, account_id, amount_cents)
            SELECT movement.id, leg.account_id, leg.amount_cents
            FROM movement, (VALUES {rows}) AS leg (n, account_id, amount_cents)
            ORDER BY leg.n""",
        returns_rows=False,  # the RETURNING is the inner INSERT's
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
    returns_rows=False,
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
       WHERE player_id = :player_id"""
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
