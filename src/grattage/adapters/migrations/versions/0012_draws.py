"""The unsteerable draw (issue 15): a sale takes an index and is drawn later.

Tickets gain their sale's index (``sequence``; every ticket sold until now took unit n at
sale n, so it is its position) and the state ``covered`` (sold, not drawn: no unit yet, so the
position may be NULL); blocks gain their receipt chain's tip; the draw's own tables
(:mod:`grattage.adapters.draw_tables`) are created.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tickets") as batch:
        batch.add_column(sa.Column("sequence", sa.Integer(), nullable=True))
        batch.alter_column("position", existing_type=sa.Integer(), nullable=True)
        batch.drop_constraint("ticket_state", type_="check")
        batch.create_check_constraint("ticket_state", "state IN ('covered', 'playing', 'finished')")
    op.execute("UPDATE tickets SET sequence = position")
    with op.batch_alter_table("tickets") as batch:
        batch.create_unique_constraint("one_sale_per_index", ["block_id", "sequence"])
    op.add_column("blocks", sa.Column("last_receipt_sha256", sa.String(length=64), nullable=True))
    op.add_column("blocks", sa.Column("last_round_ms", sa.BigInteger(), nullable=True))
    op.create_table(
        "block_draws",
        sa.Column("block_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("chain_length", sa.Integer(), nullable=False),
        sa.Column("checkpoints", sa.LargeBinary(), nullable=False),
        sa.Column("drawn", sa.Integer(), server_default="0", nullable=False),
        sa.CheckConstraint("drawn >= 0 AND drawn <= chain_length", name="drawn_within_chain"),
        sa.ForeignKeyConstraint(["block_id"], ["blocks.id"]),
        sa.PrimaryKeyConstraint("block_id"),
    )
    op.create_table(
        "draw_slots",
        sa.Column("block_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("slot", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("unit", sa.Integer(), nullable=False),
        sa.Column("set_by", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("block_id", "slot"),
    )
    op.create_table(
        "draw_queue",
        sa.Column("ticket_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("block_id", sa.Integer(), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("chain_id", sa.String(length=64), nullable=False),
        sa.Column("round", sa.BigInteger(), nullable=False),
        sa.Column("round_ms", sa.BigInteger(), nullable=False),
        sa.Column("receipt_sha256", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("ticket_id"),
        sa.UniqueConstraint("block_id", "sequence", name="one_draw_per_index"),
    )
    op.create_index("draw_queue_by_round", "draw_queue", ["round_ms"])
    op.create_table(
        "drawn_rounds",
        sa.Column("chain_id", sa.String(length=64), nullable=False),
        sa.Column("round", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("chain_id", "round"),
    )
    op.create_table(
        "logged_beacon_chains",
        sa.Column("chain_id", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("chain_id"),
    )
    op.create_table(
        "draw_lease",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("expires_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute("INSERT INTO draw_lease (id, holder, expires_ms) VALUES (1, '', 0)")


def downgrade() -> None:
    drawn = op.get_bind().execute(sa.text("SELECT COUNT(*) FROM block_draws")).scalar_one()
    if drawn:
        raise RuntimeError(
            f"{drawn} drawn blocks: their sales' indexes and draws would be lost before 0012 "
            "(a ticket's unit there is its sale's index): no downgrade"
        )
    for name in (
        "draw_lease",
        "logged_beacon_chains",
        "drawn_rounds",
        "draw_queue",
        "draw_slots",
        "block_draws",
    ):
        op.drop_table(name)
    # Not a batch: rebuilding blocks would orphan the rows that point at it (SQLite ≥ 3.35
    # drops a column in place).
    op.drop_column("blocks", "last_round_ms")
    op.drop_column("blocks", "last_receipt_sha256")
    op.execute("DELETE FROM tickets WHERE position IS NULL")
    with op.batch_alter_table("tickets") as batch:
        batch.drop_constraint("one_sale_per_index", type_="unique")
        batch.drop_constraint("ticket_state", type_="check")
        batch.create_check_constraint("ticket_state", "state IN ('playing', 'finished')")
        batch.alter_column("position", existing_type=sa.Integer(), nullable=False)
        batch.drop_column("sequence")
