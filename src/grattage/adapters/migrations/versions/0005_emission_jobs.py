"""Emission jobs: an emission created in the background, its stage, progress and heartbeat.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "emission_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("actor", sa.String(300), nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("blocks", sa.Integer(), nullable=False),
        sa.Column("table_digest", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("stage", sa.String(16), nullable=False),
        sa.Column("block", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("done", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("total", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("emission_id", sa.Integer(), nullable=True),
        sa.Column("opened", sa.Text(), nullable=False, server_default="[]"),
        sa.Column("runner", sa.String(64), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.CheckConstraint(
            "state IN ('running', 'succeeded', 'failed')", name="emission_job_state"
        ),
        sa.ForeignKeyConstraint(["emission_id"], ["emissions.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("emission_jobs_running", "emission_jobs", ["state", "heartbeat_at"])


def downgrade() -> None:
    op.drop_index("emission_jobs_running", table_name="emission_jobs")
    op.drop_table("emission_jobs")
