"""The transparency log: queued and integrated entries, the tree's nodes, signed heads; the
database itself refuses to update or delete what the log holds.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

APPEND_ONLY = ("log_entries", "log_nodes", "log_heads")


def _refuse_changes(table: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER {table}_no_{event.lower()} BEFORE {event} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, 'the transparency log is append-only'); END"
            )
        return
    op.execute(
        f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION grattage_log_append_only()"
    )


def upgrade() -> None:
    op.add_column("blocks", sa.Column("commitment_index", sa.BigInteger(), nullable=True))
    op.create_table(
        "log_queue",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("block_id", sa.Integer(), nullable=True),
        sa.Column("ticket_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "log_entries",
        sa.Column("idx", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("leaf", sa.LargeBinary(length=32), nullable=False),
        sa.Column("block_id", sa.Integer(), nullable=True),
        sa.Column("ticket_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("idx"),
    )
    op.create_index("log_entries_by_ticket", "log_entries", ["ticket_id"])
    op.create_index("log_entries_by_block", "log_entries", ["block_id", "idx"])
    op.create_table(
        "log_nodes",
        sa.Column("level", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("idx", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(length=32), nullable=False),
        sa.PrimaryKeyConstraint("level", "idx"),
    )
    op.create_table(
        "log_heads",
        sa.Column("tree_size", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
        sa.Column("root", sa.LargeBinary(length=32), nullable=False),
        sa.Column("key_id", sa.String(length=64), nullable=False),
        sa.Column("signature", sa.LargeBinary(length=64), nullable=False),
        sa.PrimaryKeyConstraint("tree_size"),
    )
    op.create_table(
        "log_state",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("tree_size", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute("INSERT INTO log_state (id, tree_size) VALUES (1, 0)")
    if op.get_bind().dialect.name != "sqlite":
        op.execute(
            "CREATE FUNCTION grattage_log_append_only() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'the transparency log is append-only'; END $$"
        )
    for table in APPEND_ONLY:
        _refuse_changes(table)


def downgrade() -> None:
    for table in ("log_state", "log_heads", "log_nodes", "log_entries", "log_queue"):
        op.drop_table(table)
    if op.get_bind().dialect.name != "sqlite":
        op.execute("DROP FUNCTION grattage_log_append_only()")
    op.drop_column("blocks", "commitment_index")
