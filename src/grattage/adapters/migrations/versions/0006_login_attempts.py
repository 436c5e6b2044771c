"""The lock-out counts attempts before it checks a password: the ``login_attempts`` table
replaces the players' and operators' ``failed_logins`` and ``locked_until`` columns, which
were read before the check and written after it (a crowd of guesses all got through).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_ACCOUNT_TABLES = ("players", "operators")


def upgrade() -> None:
    op.create_table(
        "login_attempts",
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("subject", sa.String(length=254), nullable=False),
        sa.Column("window_start", sa.DateTime(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("scope", "subject"),
    )
    op.create_index("login_attempts_by_age", "login_attempts", ["window_start"])
    bind = op.get_bind()
    for table in _ACCOUNT_TABLES:
        # Both databases drop a plain column in place (SQLite since 3.35), so the tables that
        # refer to players and operators are left alone.
        bind.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN failed_logins")
        bind.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN locked_until")


def downgrade() -> None:
    for table in _ACCOUNT_TABLES:
        op.add_column(
            table,
            sa.Column("failed_logins", sa.Integer(), server_default="0", nullable=False),
        )
        op.add_column(table, sa.Column("locked_until", sa.DateTime(), nullable=True))
    op.drop_index("login_attempts_by_age", table_name="login_attempts")
    op.drop_table("login_attempts")
