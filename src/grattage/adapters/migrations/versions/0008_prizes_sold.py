"""Prizes sold: per block and winning amount, the tickets sold, kept by each sale.

Existing blocks are counted from their tickets, so the counters start exact.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "block_prizes_sold",
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("prize_cents", sa.BigInteger(), nullable=False),
        sa.Column("sold", sa.Integer(), nullable=False),
        sa.CheckConstraint("sold > 0", name="prize_sold_counted"),
        sa.ForeignKeyConstraint(["block_id"], ["blocks.id"]),
        sa.PrimaryKeyConstraint("block_id", "prize_cents"),
    )
    op.execute(
        "INSERT INTO block_prizes_sold (block_id, prize_cents, sold) "
        "SELECT block_id, prize_cents, COUNT(*) FROM tickets WHERE prize_cents > 0 "
        "GROUP BY block_id, prize_cents"
    )


def downgrade() -> None:
    op.drop_table("block_prizes_sold")
