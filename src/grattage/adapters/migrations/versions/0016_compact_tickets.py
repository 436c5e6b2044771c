"""Storage that fits a national volume (issue 17, item 5): compact tickets, leaner indexes.

* ``tickets.document`` and ``tickets.revealed`` become binary: every stored ticket's JSON is
  rewritten in the compact, versioned form of :mod:`grattage.games.ticket_codec` (Cash and Astro
  in their own formats, any other game as compact JSON; revealed zones as a bit set over the
  game's zones), each row checked to read back exactly what it held. The downgrade writes the
  JSON text back.
* ``tickets_playing`` and ``tickets_playing_by_player`` only serve the look-up of *playing*
  tickets (``due_tickets``): they become partial indexes over those alone, instead of holding
  every finished ticket for good.
* The ledger's ``ix_movements_ticket_id`` and ``ix_entries_account_id`` are dropped: no query
  looks a movement up by its ticket or an entry up by its account (reconciliation and the
  reports aggregate over every row, and a player's lines are found through
  ``movements_by_player``); no column, so no fact, goes.

The codec is the live one: its formats are versioned and stay readable for good, so what this
migration wrote is read by every later version.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from grattage.errors import UnknownGame
from grattage.games import find_game
from grattage.games.ticket_codec import (
    decode_document,
    decode_revealed,
    encode_document,
    encode_revealed,
)

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_BATCH = 2_000
_PLAYING = "state = 'playing'"


def _zones(game: str) -> Sequence[str]:
    """The game's zones; none for a game this process does not know (its revealed zones then
    stay a JSON list, which any version reads)."""
    try:
        return find_game(game).zones
    except UnknownGame:
        return ()


def _compact(game: str, document: str, revealed: str) -> tuple[bytes, bytes]:
    shown, opened = json.loads(document), json.loads(revealed)
    stored = encode_document(shown), encode_revealed(_zones(game), opened)
    back = decode_document(stored[0]), decode_revealed(_zones(game), stored[1])
    if json.dumps(back) != json.dumps((shown, opened)):  # key order and types included
        raise RuntimeError(f"a {game} ticket would not read back as it was: {document}")
    return stored


def _expanded(game: str, document: bytes, revealed: bytes) -> tuple[str, str]:
    shown = json.dumps(decode_document(bytes(document)), separators=(",", ":"))
    return shown, json.dumps(decode_revealed(_zones(game), bytes(revealed)))


def _rewrite(new_type: Any, convert: Callable[[str, Any, Any], tuple[Any, Any]]) -> None:
    """Replace ``document`` and ``revealed`` by columns of ``new_type`` holding ``convert``'s."""
    with op.batch_alter_table("tickets") as batch:
        batch.add_column(sa.Column("document_new", new_type, nullable=True))
        batch.add_column(sa.Column("revealed_new", new_type, nullable=True))
    connection = op.get_bind()
    last = 0
    while True:
        rows = connection.execute(
            sa.text(
                "SELECT id, game, document, revealed FROM tickets WHERE id > :last "
                "ORDER BY id LIMIT :batch"
            ),
            {"last": last, "batch": _BATCH},
        ).all()
        if not rows:
            break
        changed = []
        for ticket_id, game, document, revealed in rows:
            new_document, new_revealed = convert(game, document, revealed)
            changed.append({"id": ticket_id, "document": new_document, "revealed": new_revealed})
        connection.execute(
            sa.text(
                "UPDATE tickets SET document_new = :document, revealed_new = :revealed "
                "WHERE id = :id"
            ).bindparams(
                sa.bindparam("document", type_=new_type), sa.bindparam("revealed", type_=new_type)
            ),
            changed,
        )
        last = rows[-1][0]
    with op.batch_alter_table("tickets") as batch:
        batch.drop_column("document")
        batch.drop_column("revealed")
        batch.alter_column(
            "document_new", new_column_name="document", existing_type=new_type, nullable=False
        )
        batch.alter_column(
            "revealed_new", new_column_name="revealed", existing_type=new_type, nullable=False
        )


def _playing_indexes(partial: bool) -> None:
    where: dict[str, Any] = {
        "sqlite_where": sa.text(_PLAYING),
        "postgresql_where": sa.text(_PLAYING),
    }
    op.drop_index("tickets_playing", table_name="tickets")
    op.drop_index("tickets_playing_by_player", table_name="tickets")
    if partial:
        op.create_index("tickets_playing", "tickets", ["last_action_at"], **where)
        op.create_index("tickets_playing_by_player", "tickets", ["player_id"], **where)
    else:
        op.create_index("tickets_playing", "tickets", ["state", "last_action_at"])
        op.create_index("tickets_playing_by_player", "tickets", ["player_id", "state"])


def upgrade() -> None:
    _rewrite(sa.LargeBinary(), _compact)
    _playing_indexes(partial=True)
    op.drop_index("ix_movements_ticket_id", table_name="movements")
    op.drop_index("ix_entries_account_id", table_name="entries")


def downgrade() -> None:
    op.create_index("ix_entries_account_id", "entries", ["account_id"])
    op.create_index("ix_movements_ticket_id", "movements", ["ticket_id"])
    _playing_indexes(partial=False)
    _rewrite(sa.Text(), _expanded)
