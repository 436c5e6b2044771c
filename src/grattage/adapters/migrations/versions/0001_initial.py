"""The initial schema: players, sessions, the double-entry ledger, blocks, tickets.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

HOUSE_ACCOUNTS = ("house:deposits", "house:stakes", "house:prizes")


def upgrade() -> None:
    op.create_table(
        "emissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("table_json", sa.Text(), nullable=False),
        sa.Column("table_digest", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("birth_date", sa.Date(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("failed_logins", sa.Integer(), server_default="0", nullable=False),
        sa.Column("locked_until", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("email"),
    )
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("balance_cents", sa.BigInteger(), server_default="0", nullable=False),
        sa.CheckConstraint(
            "kind = 'house' OR balance_cents >= 0", name="player_balance_not_negative"
        ),
        sa.CheckConstraint("kind IN ('player', 'house')", name="account_kind"),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sa.UniqueConstraint("player_id"),
    )
    op.create_table(
        "blocks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("emission_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("key_id", sa.String(length=32), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sold", sa.Integer(), server_default="0", nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("chunk_units", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint(
            "state IN ('pending', 'open', 'exhausted', 'closed')", name="block_state"
        ),
        sa.CheckConstraint("sold >= 0 AND sold <= size", name="sold_within_size"),
        sa.ForeignKeyConstraint(
            ["emission_id"],
            ["emissions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key_id"),
    )
    op.create_index("blocks_by_game_state", "blocks", ["game", "state", "id"], unique=False)
    op.create_table(
        "idempotency_keys",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("ticket_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("player_id", "key"),
    )
    op.create_table(
        "movements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("ticket_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint("kind IN ('deposit', 'stake', 'prize')", name="movement_kind"),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_movements_ticket_id"), "movements", ["ticket_id"], unique=False)
    op.create_table(
        "sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "block_chunks",
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("chunk", sa.Integer(), nullable=False),
        sa.Column("sealed_tiers", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["block_id"],
            ["blocks.id"],
        ),
        sa.PrimaryKeyConstraint("block_id", "chunk"),
    )
    op.create_table(
        "entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("movement_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
        ),
        sa.ForeignKeyConstraint(
            ["movement_id"],
            ["movements.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_entries_account_id"), "entries", ["account_id"], unique=False)
    op.create_index(op.f("ix_entries_movement_id"), "entries", ["movement_id"], unique=False)
    op.create_table(
        "tickets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.Column("sign", sa.String(length=16), nullable=True),
        sa.Column("stake_cents", sa.BigInteger(), nullable=False),
        sa.Column("prize_cents", sa.BigInteger(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("revealed", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_action_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("finished_by", sa.String(length=16), nullable=True),
        sa.Column("balance_before_cents", sa.BigInteger(), nullable=False),
        sa.Column("balance_after_cents", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("mode IN ('play', 'auto')", name="ticket_mode"),
        sa.CheckConstraint("state IN ('playing', 'finished')", name="ticket_state"),
        sa.ForeignKeyConstraint(
            ["block_id"],
            ["blocks.id"],
        ),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("block_id", "position", name="one_sale_per_unit"),
    )
    op.create_index("tickets_by_player", "tickets", ["player_id", "id"], unique=False)
    op.create_index("tickets_playing", "tickets", ["state", "last_action_at"], unique=False)
    op.create_index("tickets_playing_by_player", "tickets", ["player_id", "state"], unique=False)
    accounts = sa.table(
        "accounts",
        sa.column("name", sa.String),
        sa.column("kind", sa.String),
        sa.column("balance_cents", sa.BigInteger),
    )
    op.bulk_insert(
        accounts, [{"name": name, "kind": "house", "balance_cents": 0} for name in HOUSE_ACCOUNTS]
    )


def downgrade() -> None:
    op.drop_index("tickets_playing_by_player", table_name="tickets")
    op.drop_index("tickets_playing", table_name="tickets")
    op.drop_index("tickets_by_player", table_name="tickets")
    op.drop_table("tickets")
    op.drop_index(op.f("ix_entries_movement_id"), table_name="entries")
    op.drop_index(op.f("ix_entries_account_id"), table_name="entries")
    op.drop_table("entries")
    op.drop_table("block_chunks")
    op.drop_table("sessions")
    op.drop_index(op.f("ix_movements_ticket_id"), table_name="movements")
    op.drop_table("movements")
    op.drop_table("idempotency_keys")
    op.drop_index("blocks_by_game_state", table_name="blocks")
    op.drop_table("blocks")
    op.drop_table("accounts")
    op.drop_table("players")
    op.drop_table("emissions")
