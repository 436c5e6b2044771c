"""A ledger that fits a national volume (issue 17, item 5): each movement is one row, a transfer.

Every movement the platform writes has exactly two legs — a deposit, a stake, a prize: one
amount taken from one account and added to another — and ``entries`` spent a row (with its
primary key and its ``movement_id`` index) on each leg: 2.5 rows a sale, the largest part of
the ledger on PostgreSQL. A movement now carries its two legs itself: ``from_account_id``
(its leg is −``amount_cents``), ``to_account_id`` (+``amount_cents``), ``amount_cents`` > 0.
That is still double entry — each movement names both sides and they balance by
construction — and no fact goes: every entry is one leg of one row (the downgrade writes them
back). A movement whose entries are not one such transfer (not two legs, not balanced, a zero
leg) is refused, naming it, rather than stored as something else.

The new table's columns are in the order PostgreSQL packs without padding (8-byte ones, then
4-byte ones, then the text), its ``id`` a ``BIGINT`` (1.3 movements a sale reach 2³¹ after
1.7 billion sales — a national volume within a few years; the 8-byte id costs nothing here,
as the row's 8-byte alignment pads to it anyway), and on PostgreSQL its two indexes, only ever
appended to (no movement is updated or deleted), are filled to 100 % instead of 90 %.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

_KINDS = "kind IN ('deposit', 'stake', 'prize')"
_BY_PLAYER = ("player_id", "created_at")


def _is_postgres() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def _set_aside_movements() -> None:
    """Rename the old movements table and what names it, so the new one takes their names."""
    op.drop_index("movements_by_player", table_name="movements")
    op.rename_table("movements", "movements_old")
    if _is_postgres():
        op.execute("ALTER INDEX movements_pkey RENAME TO movements_old_pkey")
        op.execute("ALTER SEQUENCE movements_id_seq RENAME TO movements_old_id_seq")


def _by_player_index() -> None:
    op.create_index(
        "movements_by_player", "movements", list(_BY_PLAYER), postgresql_with={"fillfactor": 100}
    )


def _continue_ids(table: str) -> None:
    """After rows copied with their ids, PostgreSQL's sequence goes on from the highest."""
    if _is_postgres():
        op.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
            f"COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
        )


def _refuse_what_is_not_a_transfer() -> None:
    not_transfers = (
        op.get_bind()
        .execute(
            sa.text(
                "SELECT m.id, COUNT(e.id), COALESCE(SUM(e.amount_cents), 0), "
                "MIN(ABS(e.amount_cents)) FROM movements m "
                "LEFT JOIN entries e ON e.movement_id = m.id GROUP BY m.id "
                "HAVING COUNT(e.id) <> 2 OR SUM(e.amount_cents) <> 0 "
                "OR MIN(ABS(e.amount_cents)) = 0 "
                "ORDER BY m.id LIMIT 10"
            )
        )
        .all()
    )
    if not_transfers:
        found = ", ".join(
            f"movement {m} ({legs} legs summing to {total} cents)"
            for m, legs, total, _ in not_transfers
        )
        raise RuntimeError(
            f"these movements are not one transfer each, so 0017 keeps them as they are: {found}"
        )


def upgrade() -> None:
    _refuse_what_is_not_a_transfer()  # before anything changes
    _set_aside_movements()
    op.create_table(
        "movements",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("ticket_id", sa.Integer(), nullable=True),
        sa.Column("from_account_id", sa.Integer(), nullable=False),
        sa.Column("to_account_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.CheckConstraint(_KINDS, name="movement_kind"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.ForeignKeyConstraint(["from_account_id"], ["accounts.id"]),
        sa.ForeignKeyConstraint(["to_account_id"], ["accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute(
        "INSERT INTO movements (id, amount_cents, created_at, player_id, ticket_id, "
        "from_account_id, to_account_id, kind) "
        "SELECT m.id, gained.amount_cents, m.created_at, m.player_id, m.ticket_id, "
        "taken.account_id, gained.account_id, m.kind FROM movements_old m "
        "JOIN entries taken ON taken.movement_id = m.id AND taken.amount_cents < 0 "
        "JOIN entries gained ON gained.movement_id = m.id AND gained.amount_cents > 0 "
        "ORDER BY m.id"
    )
    _continue_ids("movements")
    op.drop_index("ix_entries_movement_id", table_name="entries")
    op.drop_table("entries")
    op.drop_table("movements_old")
    if _is_postgres():
        op.execute("ALTER INDEX movements_pkey SET (fillfactor = 100)")
        op.execute("REINDEX INDEX movements_pkey")
    _by_player_index()


def downgrade() -> None:
    _set_aside_movements()
    op.create_table(
        "movements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("player_id", sa.Integer(), nullable=True),
        sa.Column("ticket_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint(_KINDS, name="movement_kind"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("movement_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"]),
        sa.ForeignKeyConstraint(["movement_id"], ["movements.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_entries_movement_id"), "entries", ["movement_id"], unique=False)
    op.execute(
        "INSERT INTO movements (id, kind, player_id, ticket_id, created_at) "
        "SELECT id, kind, player_id, ticket_id, created_at FROM movements_old ORDER BY id"
    )
    _continue_ids("movements")
    # Each movement's two legs, the one taken first, as the stakes were written.
    op.execute(
        "INSERT INTO entries (movement_id, account_id, amount_cents) "
        "SELECT movement_id, account_id, amount_cents FROM ("
        "SELECT id AS movement_id, 0 AS leg, from_account_id AS account_id, "
        "-amount_cents AS amount_cents FROM movements_old UNION ALL "
        "SELECT id, 1, to_account_id, amount_cents FROM movements_old) AS legs "
        "ORDER BY movement_id, leg"
    )
    op.drop_table("movements_old")
    op.create_index("movements_by_player", "movements", list(_BY_PLAYER))
