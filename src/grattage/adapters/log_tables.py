"""The transparency log's tables (migration 0009; docs/fairness.md, "The transparency log"),
on the one metadata of :mod:`grattage.adapters.tables`."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
)

from grattage.adapters.tables import metadata

log_queue = Table(
    "log_queue",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("body", Text, nullable=False),
    Column("block_id", Integer, nullable=True),
    Column("ticket_id", Integer, nullable=True),
)
"""Entries written in the transaction of the change they record, waiting for the sequencer to
give them their place in the tree (deleted once integrated, like a CT log's submissions)."""

log_entries = Table(
    "log_entries",
    metadata,
    Column("idx", BigInteger, primary_key=True, autoincrement=False),
    Column("kind", String(32), nullable=False),
    Column("body", Text, nullable=False),
    Column("leaf", LargeBinary(32), nullable=False),
    Column("block_id", Integer, nullable=True),
    Column("ticket_id", Integer, nullable=True),
    Index("log_entries_by_ticket", "ticket_id"),
    Index("log_entries_by_block", "block_id", "idx"),
)
"""Append-only (database triggers refuse UPDATE and DELETE): entry ``idx`` of the log, its
canonical JSON ``body`` and its RFC 9162 leaf hash."""

log_nodes = Table(
    "log_nodes",
    metadata,
    Column("level", Integer, primary_key=True, autoincrement=False),
    Column("idx", BigInteger, primary_key=True, autoincrement=False),
    Column("hash", LargeBinary(32), nullable=False),
)
"""Append-only: the hash of every perfect subtree of level ≥ 1 the log has completed."""

log_heads = Table(
    "log_heads",
    metadata,
    Column("tree_size", BigInteger, primary_key=True, autoincrement=False),
    Column("timestamp_ms", BigInteger, nullable=False),
    Column("root", LargeBinary(32), nullable=False),
    Column("key_id", String(64), nullable=False),
    Column("signature", LargeBinary(64), nullable=False),
)
"""Append-only: every signed tree head, the newest being the log's current head."""

log_state = Table(
    "log_state",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("tree_size", BigInteger, nullable=False),
)
"""One row, locked by the sequencer: one integration at a time, across processes."""
