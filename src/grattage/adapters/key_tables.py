"""The operator keys' tables (migration 0011; docs/fairness.md, "Key rotation"), on the one
metadata of :mod:`grattage.adapters.tables`."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Integer, LargeBinary, String, Table, UniqueConstraint

from grattage.adapters.tables import metadata

log_signer = Table(  # one row (0011): the key signing now, NULL the first; held by signers
    "log_signer", metadata, Column("id", Integer, primary_key=True, autoincrement=False),
    Column("key_id", String(64), nullable=True),
)  # fmt: skip
log_keys = Table(  # append-only: every operator key since the first rotation
    "log_keys",
    metadata,
    Column("key_id", String(64), primary_key=True),
    Column("public_key", LargeBinary(32), nullable=False),
    Column("from_index", BigInteger, nullable=False),
    Column("change_index", BigInteger, nullable=True),
    UniqueConstraint("from_index", name="log_keys_one_per_index"),
)
