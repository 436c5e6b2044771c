"""The transparency log's tables refuse an insert onto a row they already hold (SQLite), and
its size never goes down (both databases).

SQLite's ``INSERT OR REPLACE`` (and ``REPLACE``) resolves a key collision by deleting the old
row, and that implicit delete fires no ``DELETE`` trigger unless ``recursive_triggers`` is on:
an outsider rewrote a logged receipt, and a signed head, through the triggers of migrations
0009 and 0011. A ``BEFORE INSERT`` trigger runs before the conflict is resolved, so it refuses
any insert whose key is already there. PostgreSQL has no ``REPLACE``, and its ``ON CONFLICT DO
UPDATE`` fires the ``UPDATE`` statement trigger that refuses every change.

``log_state`` holds the tree's size, which each merge raises: the same outsider lowered it, so
that the next merge collided with the entries already there (refused, but every purchase batch
merging the log then failed). Its size may now only grow.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

KEYS = {
    "log_entries": "idx = NEW.idx",
    "log_nodes": "level = NEW.level AND idx = NEW.idx",
    "log_heads": "tree_size = NEW.tree_size",
    "log_keys": "key_id = NEW.key_id OR from_index = NEW.from_index",
    "log_state": "id = NEW.id",
}
"""Each append-only table's keys (primary and unique): a collision on any of them is refused."""


SIZE_ONLY_GROWS = "the transparency log only grows"


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.execute(
            "CREATE FUNCTION grattage_log_size_only_grows() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN IF NEW.tree_size < OLD.tree_size THEN "
            f"RAISE EXCEPTION '{SIZE_ONLY_GROWS}'; END IF; RETURN NEW; END $$"
        )
        op.execute(
            "CREATE TRIGGER log_state_size_only_grows BEFORE UPDATE ON log_state "
            "FOR EACH ROW EXECUTE FUNCTION grattage_log_size_only_grows()"
        )
        return
    op.execute(
        "CREATE TRIGGER log_state_size_only_grows BEFORE UPDATE ON log_state "
        "WHEN NEW.tree_size < OLD.tree_size "
        f"BEGIN SELECT RAISE(ABORT, '{SIZE_ONLY_GROWS}'); END"
    )
    for table, same_key in KEYS.items():
        op.execute(
            f"CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} "
            f"WHEN EXISTS (SELECT 1 FROM {table} WHERE {same_key}) "
            "BEGIN SELECT RAISE(ABORT, 'the transparency log is append-only'); END"
        )


def downgrade() -> None:
    op.execute("DROP TRIGGER log_state_size_only_grows" + ("" if _sqlite() else " ON log_state"))
    if not _sqlite():
        op.execute("DROP FUNCTION grattage_log_size_only_grows()")
        return
    for table in KEYS:
        op.execute(f"DROP TRIGGER {table}_no_replace")


def _sqlite() -> bool:
    return bool(op.get_bind().dialect.name == "sqlite")
