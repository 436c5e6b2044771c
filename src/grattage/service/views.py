"""What a player is shown of a ticket: revealed zones only, the whole document once finished."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from grattage.games import Game, TicketDocument
from grattage.games.ticket_codec import (
    decode_document,
    decode_revealed,
    encode_document,
    encode_revealed,
)
from grattage.service.model import Ticket
from grattage.service.records import HistoryRow, TicketView


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")


def stored_document(document: Mapping[str, Any]) -> bytes:
    """A ticket's document as the tickets' storage keeps it: compact, read back exactly."""
    return encode_document(document)


def stored_revealed(game: Game, zones: Sequence[str]) -> bytes:
    """The revealed ``zones`` (in the game's order) as the tickets' storage keeps them."""
    return encode_revealed(game.zones, zones)


def ticket_document(ticket: Ticket) -> TicketDocument:
    """What the ticket shows: the document it was sold with (``{}`` while covered)."""
    return decode_document(ticket.document)


def revealed_zones(ticket: Ticket, game: Game) -> list[str]:
    return decode_revealed(game.zones, ticket.revealed)


def locked_zones(game: Game, revealed: set[str], finished: bool) -> list[str]:
    if finished:
        return []
    return [
        zone
        for zone in game.zones
        if zone not in revealed and not set(game.zone_prerequisites(zone)) <= revealed
    ]


def ticket_view(ticket: Ticket, game: Game) -> TicketView:
    """The API's ``Ticket``: hidden content never leaves the server."""
    finished = ticket.state == "finished"
    document = ticket_document(ticket)
    revealed = revealed_zones(ticket, game)
    shown = game.zones if finished else [zone for zone in game.zones if zone in set(revealed)]
    return TicketView(
        id=ticket.id,
        game=ticket.game,
        title=game.table.title,  # the game is bound to the ticket's block's table
        mode=ticket.mode,
        state=ticket.state,
        sign=ticket.sign,
        stake_cents=ticket.stake_cents,
        created_at=ticket.created_at,
        zones=tuple(game.zones),
        revealed={zone: game.zone_content(document, zone) for zone in shown},
        locked_zones=tuple(locked_zones(game, set(revealed), finished)),
        prize_cents=ticket.prize_cents if finished else None,
        document=_public_document(ticket, document) if finished else None,
        finished_at=ticket.finished_at,
        finished_by=ticket.finished_by,
        balance_after_cents=ticket.balance_after_cents,
    )


def _public_document(ticket: Ticket, document: dict[str, Any]) -> dict[str, Any]:
    return {
        **document,
        "ticket_id": ticket.id,
        "block": ticket.block_id,
        "position": ticket.position,
    }


def history_row(ticket: Ticket) -> HistoryRow:
    finished = ticket.state == "finished"
    return HistoryRow(
        id=ticket.id,
        game=ticket.game,
        created_at=ticket.created_at,
        finished_at=ticket.finished_at,
        state=ticket.state,
        mode=ticket.mode,
        finished_by=ticket.finished_by,
        stake_cents=ticket.stake_cents,
        prize_cents=ticket.prize_cents if finished else None,
        balance_before_cents=ticket.balance_before_cents,
        balance_after_cents=ticket.balance_after_cents,
        sign=ticket.sign,
    )
