"""The operator key in force and its history: rotations (docs/fairness.md, "Key rotation").

``log_signer`` is one row: the id of the key that signs now (NULL: the first key, the file
``operator-ed25519.key``). Every transaction that signs a document for the log reads it with a
share lock held to its commit; a rotation takes the table in EXCLUSIVE mode, so that no document
signed by the old key commits after the ``key.change`` that retires it
(:mod:`grattage.service.key_rotation`). ``log_keys`` lists every key with the index from which
it signs and the index of the ``key.change`` entry that brought it in; it is written by the
rotations only (the first one lists the first key too) and, like the log, never rewritten.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "log_signer",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("key_id", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute("INSERT INTO log_signer (id, key_id) VALUES (1, NULL)")
    op.create_table(
        "log_keys",
        sa.Column("key_id", sa.String(length=64), nullable=False),
        sa.Column("public_key", sa.LargeBinary(length=32), nullable=False),
        sa.Column("from_index", sa.BigInteger(), nullable=False),
        sa.Column("change_index", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("key_id"),
        sa.UniqueConstraint("from_index", name="log_keys_one_per_index"),
    )
    if op.get_bind().dialect.name == "sqlite":
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER log_keys_no_{event.lower()} BEFORE {event} ON log_keys "
                f"BEGIN SELECT RAISE(ABORT, 'the transparency log is append-only'); END"
            )
    else:  # the function of migration 0009
        op.execute(
            "CREATE TRIGGER log_keys_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON log_keys "
            "FOR EACH STATEMENT EXECUTE FUNCTION grattage_log_append_only()"
        )


def downgrade() -> None:
    op.drop_table("log_keys")
    op.drop_table("log_signer")
