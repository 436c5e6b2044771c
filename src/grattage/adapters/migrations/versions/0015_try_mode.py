"""The try mode (« Essayer gratuitement », issue 16): play money in tables of its own.

Try sessions, try blocks and their moved slots, try tickets and the play money's movements
(:mod:`grattage.adapters.try_tables`). Nothing here refers to a player, a wallet, the ledger or
a real block, and nothing real refers to them.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "try_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("balance_cents", sa.BigInteger(), nullable=False),
        sa.Column("tickets_bought", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint("balance_cents >= 0", name="try_sessions_balance_not_negative"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_sha256", name="try_sessions_token_unique"),
    )
    op.create_index("try_sessions_by_expiry", "try_sessions", ["expires_at"])
    op.create_table(
        "try_blocks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("table_digest", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sold", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint("sold >= 0 AND sold <= size", name="try_blocks_sold_within_size"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("try_blocks_by_game", "try_blocks", ["game", "table_digest"])
    op.create_table(
        "try_block_slots",
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("slot", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("tier", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["block_id"], ["try_blocks.id"]),
        sa.PrimaryKeyConstraint("block_id", "slot"),
    )
    op.create_table(
        "try_tickets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.Column("sign", sa.String(length=32), nullable=True),
        sa.Column("stake_cents", sa.BigInteger(), nullable=False),
        sa.Column("prize_cents", sa.BigInteger(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("revealed", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("finished_by", sa.String(length=16), nullable=True),
        sa.Column("balance_before_cents", sa.BigInteger(), nullable=False),
        sa.Column("balance_after_cents", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["try_sessions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("try_tickets_by_session", "try_tickets", ["session_id", "id"])
    op.create_table(
        "try_movements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("ticket_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("balance_after_cents", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["try_sessions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("try_movements_by_session", "try_movements", ["session_id", "id"])


def downgrade() -> None:
    op.drop_index("try_movements_by_session", table_name="try_movements")
    op.drop_table("try_movements")
    op.drop_index("try_tickets_by_session", table_name="try_tickets")
    op.drop_table("try_tickets")
    op.drop_table("try_block_slots")
    op.drop_index("try_blocks_by_game", table_name="try_blocks")
    op.drop_table("try_blocks")
    op.drop_index("try_sessions_by_expiry", table_name="try_sessions")
    op.drop_table("try_sessions")
