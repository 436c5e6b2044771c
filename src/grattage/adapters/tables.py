"""The schema, as SQLAlchemy Core tables (the Alembic migrations create exactly this).

Money is ``BigInteger`` cents. Times are naive UTC in the database, so SQLite and PostgreSQL
compare them the same way (the codec: :mod:`grattage.adapters.db_time`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)

from grattage.adapters.db_time import UtcDateTime

metadata = MetaData()


def _account_table(name: str, *own: Column[Any]) -> Table:
    """An account that logs in (a player, an operator): a unique e-mail address, a password
    hash, then its ``own`` columns (the lock-out counts attempts in ``login_attempts``)."""
    return Table(
        name,
        metadata,
        Column("id", Integer, primary_key=True),
        Column("email", String(254), nullable=False, unique=True),
        Column("password_hash", String(255), nullable=False),
        *own,
        Column("created_at", UtcDateTime, nullable=False),
    )


def _session_table(name: str, owner_id: str, owner: Table) -> Table:
    """The log-in sessions of one kind of account (``owner``, referred to by ``owner_id``):
    a token's hash, the account, when it opened and when it was last used."""
    return Table(
        name,
        metadata,
        Column("id", Integer, primary_key=True),
        Column("token_hash", String(64), nullable=False, unique=True),
        Column(owner_id, Integer, ForeignKey(owner.c.id), nullable=False),
        Column("created_at", UtcDateTime, nullable=False),
        Column("last_seen_at", UtcDateTime, nullable=False),
    )


players = _account_table("players", Column("birth_date", Date, nullable=False))

sessions = _session_table("sessions", "player_id", players)

accounts = Table(
    "accounts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("player_id", Integer, ForeignKey("players.id"), nullable=True, unique=True),
    Column("balance_cents", BigInteger, nullable=False, server_default="0"),
    CheckConstraint("kind IN ('player', 'house')", name="account_kind"),
    CheckConstraint("kind = 'house' OR balance_cents >= 0", name="player_balance_not_negative"),
)

movements = Table(
    "movements",
    metadata,
    # One row per movement, carrying its two legs (0017): ``amount_cents`` (> 0) taken from
    # ``from_account_id`` and added to ``to_account_id`` — every movement is such a transfer
    # (a deposit, a stake, a prize), so a row per leg would only repeat it. 8-byte columns
    # first, then 4-byte ones, then the text: PostgreSQL pads each column to its width.
    # The id is 64-bit (1.3 movements a sale pass 2^31 at a national volume within years).
    Column("id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True),
    Column("amount_cents", BigInteger, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("player_id", Integer, ForeignKey("players.id"), nullable=True),
    Column("ticket_id", Integer, nullable=True),  # not indexed: never looked up (0016)
    Column("from_account_id", Integer, ForeignKey("accounts.id"), nullable=False),
    Column("to_account_id", Integer, ForeignKey("accounts.id"), nullable=False),
    Column("kind", String(16), nullable=False),
    CheckConstraint("kind IN ('deposit', 'stake', 'prize')", name="movement_kind"),
)
"""On PostgreSQL its indexes are filled to 100 % (0017): no movement is updated or deleted."""

emissions = Table(
    "emissions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("game", String(32), nullable=False),
    Column("table_json", Text, nullable=False),
    Column("table_digest", String(64), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("price_cents", BigInteger, nullable=False),
    Column("title", Text, nullable=False),
)

blocks = Table(
    "blocks",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("emission_id", Integer, ForeignKey("emissions.id"), nullable=False),
    Column("game", String(32), nullable=False),
    Column("key_id", String(32), nullable=False, unique=True),
    Column("size", Integer, nullable=False),
    Column("sold", Integer, nullable=False, server_default="0"),
    Column("state", String(16), nullable=False),
    Column("chunk_units", Integer, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    # The emission's price and title, copied so that a sale reads its price from the block
    # row it locks anyway (TAKE_UNIT … RETURNING) and the lobby its title without a join.
    Column("price_cents", BigInteger, nullable=False),
    Column("title", Text, nullable=False),
    Column("commitment_index", BigInteger, nullable=True),
    # A drawn block's receipt chain (migration 0012): the hash of its last receipt (of its
    # commitment before the first sale) and the time of that receipt's beacon round.
    Column("last_receipt_sha256", String(64), nullable=True),
    Column("last_round_ms", BigInteger, nullable=True),
    CheckConstraint("sold >= 0 AND sold <= size", name="sold_within_size"),
    CheckConstraint(
        "state IN ('pending', 'open', 'suspended', 'exhausted', 'closed')", name="block_state"
    ),
    Index("blocks_by_game_state", "game", "state", "id"),
)

block_chunks = Table(
    "block_chunks",
    metadata,
    Column("block_id", Integer, ForeignKey("blocks.id"), primary_key=True),
    Column("chunk", Integer, primary_key=True),
    Column("sealed_tiers", LargeBinary, nullable=False),
)

block_commitments = Table(
    "block_commitments",
    metadata,
    Column("block_id", Integer, ForeignKey("blocks.id"), primary_key=True),
    Column("commitment", Text, nullable=False),
    Column("chunk_roots", LargeBinary, nullable=False),
)
"""A block's public commitment (fixed at creation, before it opens) and the roots of its
1 024-unit Merkle chunks, from which a ticket's proof is answered."""

block_prizes_sold = Table(
    "block_prizes_sold",
    metadata,
    Column("block_id", Integer, ForeignKey("blocks.id"), primary_key=True),
    Column("prize_cents", BigInteger, primary_key=True),
    Column("sold", Integer, nullable=False),
    CheckConstraint("sold > 0", name="prize_sold_counted"),
)
"""How many tickets of each winning amount a block has sold: kept by the sale that sells
one, in its transaction (one upsert, only for a winning ticket), so the prizes left are the
table minus these rows without counting tickets; reconciliation checks them against the
tickets."""

_PLAYING_ONLY: Any = dict.fromkeys(("sqlite_where", "postgresql_where"), text("state = 'playing'"))

tickets = Table(
    "tickets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("player_id", Integer, ForeignKey("players.id"), nullable=False),
    Column("game", String(32), nullable=False),
    Column("block_id", Integer, ForeignKey("blocks.id"), nullable=False),
    Column("position", Integer, nullable=True),  # NULL while a drawn sale is covered
    Column("sequence", Integer, nullable=True),  # the sale's index n in its block
    Column("mode", String(8), nullable=False),
    Column("sign", String(16), nullable=True),
    Column("stake_cents", BigInteger, nullable=False),
    Column("prize_cents", BigInteger, nullable=False),
    Column("document", LargeBinary, nullable=False),  # compact (games/ticket_codec.py, 0016)
    Column("revealed", LargeBinary, nullable=False),
    Column("state", String(16), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("last_action_at", UtcDateTime, nullable=False),
    Column("finished_at", UtcDateTime, nullable=True),
    Column("finished_by", String(16), nullable=True),
    Column("balance_before_cents", BigInteger, nullable=False),
    Column("balance_after_cents", BigInteger, nullable=False),
    UniqueConstraint("block_id", "position", name="one_sale_per_unit"),
    UniqueConstraint("block_id", "sequence", name="one_sale_per_index"),
    CheckConstraint("mode IN ('play', 'auto')", name="ticket_mode"),
    CheckConstraint("state IN ('covered', 'playing', 'finished')", name="ticket_state"),
    Index("tickets_by_player", "player_id", "id"),
    Index("tickets_playing", "last_action_at", **_PLAYING_ONLY),  # partial: only playing
    Index("tickets_playing_by_player", "player_id", **_PLAYING_ONLY),  # tickets are due (0016)
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("player_id", Integer, ForeignKey("players.id"), primary_key=True),
    Column("key", String(255), primary_key=True),
    Column("request_hash", String(64), nullable=False),
    Column("ticket_id", Integer, nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
)


# Operator back-office and responsible gaming (migration 0003).

operators = _account_table("operators")
"""The operator's staff: a role of its own, never a player."""

operator_sessions = _session_table("operator_sessions", "operator_id", operators)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("created_at", String(32), nullable=False),
    Column("actor", String(300), nullable=False),
    Column("action", String(64), nullable=False),
    Column("subject", String(64), nullable=False),
    Column("details", Text, nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
)
"""Append-only: entry ``n`` carries the SHA-256 of entry ``n - 1`` (a hash chain); the code
inserts entries, never updates or deletes one. ``created_at`` is the ISO text that was hashed."""

audit_head = Table(
    "audit_head",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("last_id", Integer, nullable=False),
    Column("last_hash", String(64), nullable=False),
)
"""One row: the last entry of the audit log. Appending locks it, so appends form one chain, and
it lets ``audit verify`` notice entries cut off the end."""

player_limits = Table(
    "player_limits",
    metadata,
    Column("player_id", Integer, ForeignKey("players.id"), primary_key=True),
    Column("deposit_limit_cents", BigInteger, nullable=True),
    Column("deposit_pending_cents", BigInteger, nullable=True),
    Column("deposit_pending_at", UtcDateTime, nullable=True),
    Column("stake_limit_cents", BigInteger, nullable=True),
    Column("stake_pending_cents", BigInteger, nullable=True),
    Column("stake_pending_at", UtcDateTime, nullable=True),
    Column("week_start", Date, nullable=True),
    Column("week_deposits_cents", BigInteger, nullable=False, server_default="0"),
    Column("week_stakes_cents", BigInteger, nullable=False, server_default="0"),
    Column("excluded_until", UtcDateTime, nullable=True),
    Column("excluded_forever", Boolean, nullable=False, server_default=false()),
    Column("reality_checked_at", UtcDateTime, nullable=True),
)
"""A player's weekly limits (NULL: the current default of the settings), a raise waiting for
its cooling-off, this week's counters (checked and raised in the purchase's or the deposit's
transaction) and a self-exclusion."""

movements_by_player = Index(
    "movements_by_player",
    movements.c.player_id,
    movements.c.created_at,
    postgresql_with={"fillfactor": 100},
)

player_identities = Table(
    "player_identities",
    metadata,
    Column("player_id", Integer, ForeignKey("players.id"), primary_key=True),
    Column("mailbox_key", String(254), nullable=False, index=True),
    Column("person_key", String(255), nullable=True, index=True),
    Column("first_name", String(100), nullable=True),
    Column("last_name", String(100), nullable=True),
)
"""Who is behind an account: its e-mail's mailbox (the address without its ``+tag``) and its
person (normalised names and birth date, :mod:`grattage.service.identity`). Accounts opened
before names were asked have no person: they are known by their mailbox only."""

identity_exclusions = Table(
    "identity_exclusions",
    metadata,
    Column("key", String(300), primary_key=True),
    Column("excluded_until", UtcDateTime, nullable=True),
    Column("excluded_forever", Boolean, nullable=False, server_default=false()),
)
"""Self-exclusions per mailbox (``mailbox:<key>``) and per person (``person:<key>``): a sign-up
locks its two rows and is refused while either is excluded."""

# Emission jobs (migration 0005).

emission_jobs = Table(
    "emission_jobs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("actor", String(300), nullable=False),
    Column("game", String(32), nullable=False),
    Column("blocks", Integer, nullable=False),
    Column("table_digest", String(64), nullable=False),
    Column("state", String(16), nullable=False),
    Column("stage", String(16), nullable=False),
    Column("block", Integer, nullable=False, server_default="0"),
    Column("done", BigInteger, nullable=False, server_default="0"),
    Column("total", BigInteger, nullable=False, server_default="0"),
    Column("error", Text, nullable=True),
    Column("emission_id", Integer, ForeignKey("emissions.id"), nullable=True),
    Column("opened", Text, nullable=False, server_default="[]"),
    Column("runner", String(64), nullable=False),
    Column("heartbeat_at", UtcDateTime, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("finished_at", UtcDateTime, nullable=True),
    CheckConstraint("state IN ('running', 'succeeded', 'failed')", name="emission_job_state"),
    Index("emission_jobs_running", "state", "heartbeat_at"),
)
"""An emission created in the background: who asked, the stage it is at and how far, written
by the one process (``runner``) that runs it, which touches ``heartbeat_at`` while it lives;
a running job whose heartbeat is stale had its process die, and is marked failed."""

# The lock-out's counters (migration 0006).

login_attempts = Table(
    "login_attempts",
    metadata,
    Column("scope", String(16), primary_key=True),
    Column("subject", String(254), primary_key=True),
    Column("window_start", UtcDateTime, nullable=False),
    Column("attempts", Integer, nullable=False),
)
"""Log-in attempts counted before any password is checked, per ``subject`` of a ``scope``:
an address tried as a player's or an operator's (known or not, so that counting tells nothing
about who has an account), or a device trusted by a past success (its digest). A row's
window opens at ``window_start``; a new one opens when it has passed."""

login_attempts_by_age = Index("login_attempts_by_age", login_attempts.c.window_start)

APPEND_ONLY_TABLES = ("log_entries", "log_nodes", "log_heads", "log_keys")

# Declared on this metadata in their own modules: the transparency log's tables (migration
# 0009), the operator keys' (0011), the draw's (0012), the suspensions (0014), the try mode's.
from grattage.adapters import (  # noqa: E402, F401
    draw_tables,
    key_tables,
    log_tables,
    player_tables,
    try_tables,
)
