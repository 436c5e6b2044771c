"""An operator may suspend a player's account: ``player_suspensions`` holds one row per
suspended account, with when, by whom and why (the audit log keeps the history).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "player_suspensions",
        sa.Column("player_id", sa.Integer(), nullable=False),
        sa.Column("suspended_at", sa.DateTime(), nullable=False),
        sa.Column("suspended_by", sa.String(length=300), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("player_id"),
    )


def downgrade() -> None:
    op.drop_table("player_suspensions")
