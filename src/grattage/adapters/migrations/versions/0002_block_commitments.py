"""Block commitments: the public Merkle commitment of each block and its chunk roots.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "block_commitments",
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("commitment", sa.Text(), nullable=False),
        sa.Column("chunk_roots", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["block_id"], ["blocks.id"]),
        sa.PrimaryKeyConstraint("block_id"),
    )


def downgrade() -> None:
    op.drop_table("block_commitments")
