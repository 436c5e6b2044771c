"""Each emission and each block stores its price and its title: a table file is an emission's
whole definition, and a sale debits the price of the block its unit comes from.

Existing rows are backfilled from what they were sold at: the price their stored table carries,
else their game's (Cash 500, Astro 200: the prices fixed in the game classes until now); the
title their stored table carries, else the game's name.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

PRICES_BEFORE_0004 = {"cash": 500, "astro": 200}
"""The only games that could be sold before this revision, at the price their class fixed."""


def _stored_table(table_json: str) -> dict[str, Any]:
    try:
        data = json.loads(table_json)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _price(emission_id: int, game: str, table: dict[str, Any]) -> int:
    price = table.get("price_cents", PRICES_BEFORE_0004.get(game))
    if not isinstance(price, int) or isinstance(price, bool) or price <= 0:
        raise RuntimeError(
            f"emission {emission_id} of game {game!r} has no known price: "
            "set emissions.price_cents by hand, then run the migration again"
        )
    return price


def _title(game: str, table: dict[str, Any]) -> str:
    title = table.get("title")
    return title if isinstance(title, str) and title else game


def upgrade() -> None:
    # NOT NULL needs a default for the rows already there; the backfill below replaces it.
    for name in ("emissions", "blocks"):
        op.add_column(
            name, sa.Column("price_cents", sa.BigInteger(), nullable=False, server_default="0")
        )
        op.add_column(name, sa.Column("title", sa.Text(), nullable=False, server_default=""))
    bind = op.get_bind()
    emissions = bind.execute(sa.text("SELECT id, game, table_json FROM emissions")).all()
    for emission_id, game, table_json in emissions:
        table = _stored_table(table_json)
        values = {
            "id": emission_id,
            "price": _price(emission_id, game, table),
            "title": _title(game, table),
        }
        for name, key in (("emissions", "id"), ("blocks", "emission_id")):
            bind.execute(
                sa.text(
                    f"UPDATE {name} SET price_cents = :price, title = :title WHERE {key} = :id"
                ),
                values,
            )
    if bind.dialect.name != "sqlite":
        # SQLite cannot drop a column's default without rebuilding the table (which would
        # orphan the tickets pointing at its blocks); there the repository always writes both.
        for name in ("emissions", "blocks"):
            op.alter_column(name, "price_cents", server_default=None)
            op.alter_column(name, "title", server_default=None)


def downgrade() -> None:
    for name in ("blocks", "emissions"):
        with op.batch_alter_table(name) as batch:
            batch.drop_column("title")
            batch.drop_column("price_cents")
