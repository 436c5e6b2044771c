"""The players' suspensions (migration 0014; docs/back-office.md, "Players"), on the one
metadata of :mod:`grattage.adapters.tables`."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Integer, String, Table, Text

from grattage.adapters.db_time import UtcDateTime
from grattage.adapters.tables import metadata

player_suspensions = Table(
    "player_suspensions",
    metadata,
    Column("player_id", Integer, ForeignKey("players.id"), primary_key=True),
    Column("suspended_at", UtcDateTime, nullable=False),
    Column("suspended_by", String(300), nullable=False),
    Column("reason", Text, nullable=False),
)
"""One row per suspended account, removed when the suspension is lifted (the audit log keeps
every suspension and lift, with who, when and why)."""
