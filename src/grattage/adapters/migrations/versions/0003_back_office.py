"""Operator back-office and responsible gaming: operators and their sessions, the hash-chained
audit log, players' limits and self-exclusions, and the ``suspended`` block state.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_STATES_BEFORE = "state IN ('pending', 'open', 'exhausted', 'closed')"
_STATES_AFTER = "state IN ('pending', 'open', 'suspended', 'exhausted', 'closed')"


def _block_states(before: str, after: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        # Rebuilding the table would orphan the tickets pointing at it. Widening a CHECK
        # changes nothing on disk, so edit the schema text in place, as SQLite documents for
        # such changes (https://sqlite.org/lang_altertable.html#otheralter).
        bind = op.get_bind()
        version = bind.exec_driver_sql("PRAGMA schema_version").scalar_one()
        bind.exec_driver_sql("PRAGMA writable_schema = ON")
        bind.exec_driver_sql(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = ?",
            (before, after, "blocks"),
        )
        bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")
        return
    op.drop_constraint("block_state", "blocks", type_="check")
    op.create_check_constraint("block_state", "blocks", after)


def upgrade() -> None:
    _block_states(_STATES_BEFORE, _STATES_AFTER)
    op.create_table(
        "operators",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("failed_logins", sa.Integer(), server_default="0", nullable=False),
        sa.Column("locked_until", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("email"),
    )
    op.create_table(
        "operator_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("operator_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["operator_id"], ["operators.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("created_at", sa.String(length=32), nullable=False),
        sa.Column("actor", sa.String(length=300), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.String(length=64), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    head = op.create_table(
        "audit_head",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("last_id", sa.Integer(), nullable=False),
        sa.Column("last_hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(head, [{"id": 1, "last_id": 0, "last_hash": "0" * 64}])
    op.create_table(
        "player_limits",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("deposit_limit_cents", sa.BigInteger(), nullable=True),
        sa.Column("deposit_pending_cents", sa.BigInteger(), nullable=True),
        sa.Column("deposit_pending_at", sa.DateTime(), nullable=True),
        sa.Column("stake_limit_cents", sa.BigInteger(), nullable=True),
        sa.Column("stake_pending_cents", sa.BigInteger(), nullable=True),
        sa.Column("stake_pending_at", sa.DateTime(), nullable=True),
        sa.Column("week_start", sa.Date(), nullable=True),
        sa.Column("week_deposits_cents", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("week_stakes_cents", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("excluded_until", sa.DateTime(), nullable=True),
        sa.Column("excluded_forever", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("reality_checked_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("player_id"),
    )
    op.create_index("movements_by_player", "movements", ["player_id", "created_at"])


def downgrade() -> None:
    op.drop_index("movements_by_player", table_name="movements")
    op.drop_table("player_limits")
    op.drop_table("audit_head")
    op.drop_table("audit_log")
    op.drop_table("operator_sessions")
    op.drop_table("operators")
    op.execute("UPDATE blocks SET state = 'open' WHERE state = 'suspended'")
    _block_states(_STATES_AFTER, _STATES_BEFORE)
