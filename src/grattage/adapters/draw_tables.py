"""The draw's tables (migration 0012; docs/draw.md, "The draw in the platform"), on the one
metadata of :mod:`grattage.adapters.tables`."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    UniqueConstraint,
)

from grattage.adapters.tables import metadata

block_draws = Table(
    "block_draws",
    metadata,
    Column("block_id", Integer, ForeignKey("blocks.id"), primary_key=True, autoincrement=False),
    Column("chain_length", Integer, nullable=False),
    Column("checkpoints", LargeBinary, nullable=False),
    Column("drawn", Integer, nullable=False, server_default="0"),
    CheckConstraint("drawn >= 0 AND drawn <= chain_length", name="drawn_within_chain"),
)
"""A drawn block: its operator chain's sealed checkpoints, and its draw cursor (the sales
drawn, 0, 1, 2 … in index order), advanced by a conditional write in each draw's transaction."""

draw_slots = Table(
    "draw_slots",
    metadata,
    Column("block_id", Integer, primary_key=True, autoincrement=False),
    Column("slot", Integer, primary_key=True, autoincrement=False),
    Column("unit", Integer, nullable=False),
    Column("set_by", Integer, nullable=False),
)
"""The block's slot → unit permutation where a draw set it (every other slot holds its own
unit), and the index of the draw that set it; a slot's row goes once its sale is drawn (a
drawn slot never changes again)."""

draw_queue = Table(
    "draw_queue",
    metadata,
    Column("ticket_id", Integer, primary_key=True, autoincrement=False),
    Column("block_id", Integer, nullable=False),
    Column("sequence", Integer, nullable=False),
    Column("chain_id", String(64), nullable=False),
    Column("round", BigInteger, nullable=False),
    Column("round_ms", BigInteger, nullable=False),
    Column("receipt_sha256", String(64), nullable=False),
    UniqueConstraint("block_id", "sequence", name="one_draw_per_index"),
    Index("draw_queue_by_round", "round_ms"),
)
"""The sales sold and not yet drawn, with their receipt's round (and its time) and hash;
a sale's row goes in the transaction that draws it."""

drawn_rounds = Table(
    "drawn_rounds",
    metadata,
    Column("chain_id", String(64), primary_key=True),
    Column("round", BigInteger, primary_key=True, autoincrement=False),
)
"""The rounds whose ``draw.round`` entry is logged (once each)."""

logged_beacon_chains = Table(
    "logged_beacon_chains",
    metadata,
    Column("chain_id", String(64), primary_key=True),
)
"""The witness's chains whose ``beacon.chain`` entry is logged (once each)."""

draw_lease = Table(
    "draw_lease",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("holder", String(64), nullable=False),
    Column("expires_ms", BigInteger, nullable=False),
)
"""One row: which process cosigns and draws (the leader), until when."""
