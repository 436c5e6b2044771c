"""The transparency log's storage: queued entries, the append-only entries, nodes and heads.

Appends go through :meth:`SqlTransparencyLog.lock_state` (the one ``log_state`` row, locked
until the transaction ends), so that one sequencer at a time, across processes, extends the
tree; the triggers of migration 0009 make the database refuse to rewrite what was appended.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, Select, bindparam, delete, func, insert, select, tuple_, update

from grattage.adapters.driver_sql import (
    ENQUEUE_LOG,
    ENQUEUE_SIGNED,
    ENQUEUE_SIGNED_SQLITE,
    LOCK_SIGNER_TABLE,
    SIGNING_KEY,
    SIGNING_KEY_FOR_UPDATE,
    SIGNING_KEY_HELD,
)
from grattage.adapters.key_tables import log_keys, log_signer
from grattage.adapters.log_tables import log_entries, log_heads, log_nodes, log_queue, log_state
from grattage.adapters.tables import blocks, tickets
from grattage.service.model import LogEntryRow, LoggedKey, QueuedLogEntry, StoredTreeHead

_NODE_BATCH = 400
"""Nodes fetched per statement: under SQLite's and PostgreSQL's parameter limits."""

# The statements the sequencer and the drawer run many times a second, built once: a statement
# built at each call is built, keyed and looked up in the compiled cache again each time, and
# a condition of as many ORs as nodes asked for (SQLite's, before) was compiled anew for each
# count of nodes. ``(level, idx) IN`` is a row-value IN, which SQLite has had since 3.15.
_LOCK_STATE = select(log_state.c.tree_size).where(log_state.c.id == 1).with_for_update()
_QUEUED = (
    select(
        log_queue.c.id, log_queue.c.kind, log_queue.c.body, log_queue.c.block_id,
        log_queue.c.ticket_id,
    )
    .order_by(log_queue.c.id)
    .limit(bindparam("limit"))
)  # fmt: skip
_LEAVES = select(log_entries.c.idx, log_entries.c.leaf).where(
    log_entries.c.idx.in_(bindparam("indexes", expanding=True))
)
_INNER_NODES = select(log_nodes.c.level, log_nodes.c.idx, log_nodes.c.hash).where(
    tuple_(log_nodes.c.level, log_nodes.c.idx).in_(bindparam("nodes", expanding=True))
)
_APPEND_ENTRIES = insert(log_entries)
_APPEND_NODES = insert(log_nodes)
_UNQUEUE = delete(log_queue).where(log_queue.c.id.in_(bindparam("ids", expanding=True)))
_SET_TREE_SIZE = (
    update(log_state).where(log_state.c.id == 1).values(tree_size=bindparam("tree_size"))
)
_ADD_HEAD = insert(log_heads)
_HEADS = select(
    log_heads.c.tree_size, log_heads.c.timestamp_ms, log_heads.c.root, log_heads.c.key_id,
    log_heads.c.signature,
)  # fmt: skip
_LATEST_HEAD = _HEADS.order_by(log_heads.c.tree_size.desc()).limit(1)
_HEAD_OF_SIZE = _HEADS.where(log_heads.c.tree_size == bindparam("tree_size")).limit(1)
_QUEUED_COUNT = select(func.count()).select_from(log_queue)


class SqlTransparencyLog:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    # -- written in the transaction of the change ------------------------------------------
    def enqueue(
        self, kind: str, body: str, block_id: int | None = None, ticket_id: int | None = None
    ) -> None:
        # On the driver: every sale, and every draw, queues one.
        ENQUEUE_LOG(
            self.db, {"kind": kind, "body": body, "block_id": block_id, "ticket_id": ticket_id}
        )

    def enqueue_signed(
        self,
        kind: str,
        body: str,
        key_id: str | None,
        block_id: int | None = None,
        ticket_id: int | None = None,
    ) -> bool:
        """Queue an entry whose document ``key_id`` signed (None: the first key) if that key
        is still in force, and hold it in force until this transaction ends; False, writing
        nothing, if another key is in force now (a rotation committed: sign again)."""
        statement = ENQUEUE_SIGNED_SQLITE if self.db.dialect.name == "sqlite" else ENQUEUE_SIGNED
        parameters = {
            "kind": kind,
            "body": body,
            "block_id": block_id,
            "ticket_id": ticket_id,
            "key_id": key_id or "",
        }
        return statement(self.db, parameters).first() is not None

    # -- the sequencer ---------------------------------------------------------------------
    def lock_state(self) -> int:
        """The tree's size, its row locked until the transaction ends."""
        return int(self.db.execute(_LOCK_STATE).scalar_one())

    def queued(self, limit: int) -> list[QueuedLogEntry]:
        rows = self.db.execute(_QUEUED, {"limit": limit})
        return [QueuedLogEntry(*row) for row in rows]

    def integrate(
        self,
        first_index: int,
        entries: Sequence[QueuedLogEntry],
        leaves: Sequence[bytes],
        nodes: Iterable[tuple[int, int, bytes]],
    ) -> None:
        """Append ``entries`` at ``first_index…`` with their leaves and the completed nodes,
        and take them off the queue."""
        self.db.execute(
            _APPEND_ENTRIES,
            [
                {
                    "idx": first_index + offset,
                    "kind": entry.kind,
                    "body": entry.body,
                    "leaf": leaf,
                    "block_id": entry.block_id,
                    "ticket_id": entry.ticket_id,
                }
                for offset, (entry, leaf) in enumerate(zip(entries, leaves, strict=True))
            ],
        )
        node_rows = [{"level": level, "idx": idx, "hash": digest} for level, idx, digest in nodes]
        if node_rows:
            self.db.execute(_APPEND_NODES, node_rows)
        queued = [entry.id for entry in entries if entry.id is not None]
        if queued:
            self.db.execute(_UNQUEUE, {"ids": queued})
        self.db.execute(_SET_TREE_SIZE, {"tree_size": first_index + len(entries)})

    def add_head(self, head: StoredTreeHead) -> None:
        self.db.execute(
            _ADD_HEAD,
            {
                "tree_size": head.tree_size,
                "timestamp_ms": head.timestamp_ms,
                "root": head.root,
                "key_id": head.key_id,
                "signature": head.signature,
            },
        )

    def set_commitment_index(self, block_id: int, index: int) -> None:
        self.db.execute(
            update(blocks)
            .where(blocks.c.id == block_id, blocks.c.commitment_index.is_(None))
            .values(commitment_index=index)
        )

    # -- the operator key in force (migration 0011) -----------------------------------------
    def signing_key_id(self, hold: bool) -> str | None:
        """The id of the key that signs now (None: the first key). ``hold``: keep it from
        changing until this transaction ends (a share lock; SQLite's writer lock holds it)."""
        sqlite = self.db.dialect.name == "sqlite"
        statement = SIGNING_KEY_HELD if hold and not sqlite else SIGNING_KEY
        value = statement(self.db).scalar_one()
        return None if value is None else str(value)

    def lock_signing_key(self) -> str | None:
        """The key in force, locked for a rotation: once this returns, every transaction that
        signed with it has committed, and none can read it until this one ends."""
        if self.db.dialect.name == "sqlite":  # BEGIN IMMEDIATE: the one writer already
            return self.signing_key_id(hold=False)
        LOCK_SIGNER_TABLE(self.db)
        value = SIGNING_KEY_FOR_UPDATE(self.db).scalar_one()
        return None if value is None else str(value)

    def set_signing_key(self, key_id: str, keys: Sequence[LoggedKey]) -> None:
        """Put ``key_id`` in force and add ``keys`` to the history."""
        self.db.execute(update(log_signer).where(log_signer.c.id == 1).values(key_id=key_id))
        self.db.execute(
            insert(log_keys),
            [
                {
                    "key_id": key.key_id,
                    "public_key": key.public_key,
                    "from_index": key.from_index,
                    "change_index": key.change_index,
                }
                for key in keys
            ],
        )

    def key_history(self) -> list[LoggedKey]:
        """Every key since the first rotation, oldest first (empty before any rotation)."""
        rows = self.db.execute(
            select(
                log_keys.c.key_id,
                log_keys.c.public_key,
                log_keys.c.from_index,
                log_keys.c.change_index,
            ).order_by(log_keys.c.from_index)
        )
        return [
            LoggedKey(str(key), bytes(public), int(start), None if change is None else int(change))
            for key, public, start, change in rows
        ]

    # -- reads -----------------------------------------------------------------------------
    def nodes(self, wanted: Iterable[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        """The hashes of the perfect subtrees ``(level, index)`` asked for (level 0: leaves)."""
        found: dict[tuple[int, int], bytes] = {}
        wanted = sorted(set(wanted))
        leaves = [index for level, index in wanted if level == 0]
        inner = [(level, index) for level, index in wanted if level > 0]
        for start in range(0, len(leaves), _NODE_BATCH):
            some_leaves = leaves[start : start + _NODE_BATCH]
            leaf_rows = self.db.execute(_LEAVES, {"indexes": some_leaves})
            for leaf_index, leaf in leaf_rows:
                found[(0, int(leaf_index))] = bytes(leaf)
        for start in range(0, len(inner), _NODE_BATCH):
            some_nodes = inner[start : start + _NODE_BATCH]
            node_rows = self.db.execute(_INNER_NODES, {"nodes": some_nodes})
            for level, node_index, digest in node_rows:
                found[(int(level), int(node_index))] = bytes(digest)
        return found

    def entries(self, start: int, end: int) -> list[LogEntryRow]:
        """Entries ``start..end`` inclusive, in order."""
        rows = self.db.execute(
            select(
                log_entries.c.idx,
                log_entries.c.kind,
                log_entries.c.body,
                log_entries.c.block_id,
                log_entries.c.ticket_id,
            )
            .where(log_entries.c.idx >= start, log_entries.c.idx <= end)
            .order_by(log_entries.c.idx)
        )
        return [
            LogEntryRow(int(idx), kind, body, block, ticket)
            for idx, kind, body, block, ticket in rows
        ]

    def entries_of_kinds(
        self, kinds: Sequence[str], after: int, end: int, limit: int, block_id: int | None = None
    ) -> list[LogEntryRow]:
        query = select(
            log_entries.c.idx,
            log_entries.c.kind,
            log_entries.c.body,
            log_entries.c.block_id,
            log_entries.c.ticket_id,
        ).where(log_entries.c.idx > after, log_entries.c.idx <= end, log_entries.c.kind.in_(kinds))
        if block_id is not None:  # log_entries_by_block: (block_id, idx)
            query = query.where(log_entries.c.block_id == block_id)
        rows = self.db.execute(query.order_by(log_entries.c.idx).limit(limit))
        return [
            LogEntryRow(int(idx), kind, body, block, ticket)
            for idx, kind, body, block, ticket in rows
        ]

    def entries_of_ticket(self, ticket_id: int) -> list[LogEntryRow]:
        rows = self.db.execute(
            select(
                log_entries.c.idx,
                log_entries.c.kind,
                log_entries.c.body,
                log_entries.c.block_id,
                log_entries.c.ticket_id,
            )
            .where(log_entries.c.ticket_id == ticket_id)
            .order_by(log_entries.c.idx)
        )
        return [
            LogEntryRow(int(idx), kind, body, block, ticket)
            for idx, kind, body, block, ticket in rows
        ]

    def entry_at(self, index: int) -> LogEntryRow | None:
        found = self.entries(index, index)
        return found[0] if found else None

    def _head(self, statement: Select[Any], parameters: dict[str, int]) -> StoredTreeHead | None:
        row = self.db.execute(statement, parameters).first()
        if row is None:
            return None
        return StoredTreeHead(int(row[0]), int(row[1]), bytes(row[2]), str(row[3]), bytes(row[4]))

    def latest_head(self) -> StoredTreeHead | None:
        return self._head(_LATEST_HEAD, {})

    def head_of_size(self, tree_size: int) -> StoredTreeHead | None:
        return self._head(_HEAD_OF_SIZE, {"tree_size": tree_size})

    # The queue is read before the tree, each a statement of its own (a snapshot each, on
    # PostgreSQL's autocommit reads): an entry integrated between them is then found in the
    # tree. Read the other way round, one moved in between was in neither, and a published
    # draws file answered 404 between two 200s under load.
    def receipt_body(self, ticket_id: int) -> str | None:
        """The ``sale.receipt`` entry of a ticket, integrated or still queued."""
        for table in (log_queue, log_entries):
            body = self.db.execute(
                select(table.c.body)
                .where(table.c.ticket_id == ticket_id, table.c.kind == "sale.receipt")
                .limit(1)
            ).scalar()
            if body is not None:
                return str(body)
        return None

    def block_entry_body(self, block_id: int, kind: str) -> str | None:
        """The entry of ``kind`` about a block (a kind logged once a block), integrated or
        still queued."""
        for table in (log_queue, log_entries):
            body = self.db.execute(
                select(table.c.body)
                .where(table.c.block_id == block_id, table.c.kind == kind)
                .limit(1)
            ).scalar()
            if body is not None:
                return str(body)
        return None

    def sold_prizes(self, block_id: int) -> dict[int, int]:
        """Prize in cents → units of the block sold with it (what ``block.ended`` subtracts)."""
        rows = self.db.execute(
            select(tickets.c.prize_cents, func.count())
            .where(tickets.c.block_id == block_id, tickets.c.prize_cents > 0)
            .group_by(tickets.c.prize_cents)
        )
        return {int(prize): int(count) for prize, count in rows}

    def queued_count(self) -> int:
        return int(self.db.execute(_QUEUED_COUNT).scalar_one())
