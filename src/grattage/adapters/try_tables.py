"""The try mode's tables (migration 0015; docs/games.md, « Essayer gratuitement »), on the one
metadata of :mod:`grattage.adapters.tables`.

None of them refers to a player, a wallet, the ledger or a real block, and no real table refers
to them: play money lives and dies here, and a try session's rows go with it when it expires.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from grattage.adapters.db_time import UtcDateTime
from grattage.adapters.tables import metadata

try_sessions = Table(
    "try_sessions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("token_sha256", String(64), nullable=False),
    Column("balance_cents", BigInteger, nullable=False),
    Column("tickets_bought", Integer, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("expires_at", UtcDateTime, nullable=False),
    UniqueConstraint("token_sha256", name="try_sessions_token_unique"),
    CheckConstraint("balance_cents >= 0", name="try_sessions_balance_not_negative"),
    Index("try_sessions_by_expiry", "expires_at"),
)
"""An anonymous visitor's try: its play balance, found by its cookie's token (hashed)."""

try_blocks = Table(
    "try_blocks",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("game", String(32), nullable=False),
    Column("table_digest", String(64), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("sold", BigInteger, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    CheckConstraint("sold >= 0 AND sold <= size", name="try_blocks_sold_within_size"),
    Index("try_blocks_by_game", "game", "table_digest"),
)
"""A try block: the game's table at its real size, dealt one sale at a time (try_deal)."""

try_block_slots = Table(
    "try_block_slots",
    metadata,
    Column("block_id", Integer, ForeignKey("try_blocks.id"), primary_key=True),
    Column("slot", BigInteger, primary_key=True, autoincrement=False),
    Column("tier", Integer, nullable=False),
)
"""The unsold slots of a try block whose unit a sale moved; the others hold their ordered unit."""

try_tickets = Table(
    "try_tickets",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("session_id", Integer, ForeignKey("try_sessions.id"), nullable=False),
    Column("game", String(32), nullable=False),
    Column("block_id", Integer, nullable=False),
    Column("position", BigInteger, nullable=False),
    Column("mode", String(8), nullable=False),
    Column("sign", String(32)),
    Column("stake_cents", BigInteger, nullable=False),
    Column("prize_cents", BigInteger, nullable=False),
    Column("document", Text, nullable=False),
    Column("revealed", Text, nullable=False),
    Column("state", String(16), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("finished_at", UtcDateTime),
    Column("finished_by", String(16)),
    Column("balance_before_cents", BigInteger, nullable=False),
    Column("balance_after_cents", BigInteger, nullable=False),
    Index("try_tickets_by_session", "session_id", "id"),
)
"""The try tickets; ``block_id`` names a try block (kept without a key: a sold-out try block
may go while its tickets stay in their sessions' histories)."""

try_movements = Table(
    "try_movements",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("session_id", Integer, ForeignKey("try_sessions.id"), nullable=False),
    Column("ticket_id", Integer),
    Column("kind", String(16), nullable=False),
    Column("amount_cents", BigInteger, nullable=False),
    Column("balance_after_cents", BigInteger, nullable=False),
    Column("at", UtcDateTime, nullable=False),
    Index("try_movements_by_session", "session_id", "id"),
)
"""The play money's own ledger: each start, refill, stake and prize of a try session."""
