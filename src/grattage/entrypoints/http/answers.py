"""The API's answers, as /openapi.json documents them and docs/api.md describes them.

Most answers are the service's records themselves (frozen dataclasses of
:mod:`grattage.service.records`: pydantic reads them, so each shape is declared once); the
models here are the shapes only HTTP has: envelopes, sessions, errors, page links.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date, datetime
from typing import Any, Literal

from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from grattage.service.records import (
    ActivityDay,
    ActivityTotals,
    AuditRecord,
    BlockReportRow,
    BlockSummary,
    DayReportRow,
    GameListing,
    HistoryRow,
    PublicBlock,
    RealityCheck,
    TicketView,
)


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True)


class ErrorAnswer(Answer):
    """Every error: the code of :mod:`grattage.errors` and a sentence for people."""

    error: str
    message: str


ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorAnswer, "description": meaning}
    for status, meaning in (
        (401, "no credentials, or they expired"),
        (403, "forbidden (self-excluded, or not an operator)"),
        (404, "unknown, or not the caller's"),
        (409, "conflict (balance, sold out, not on sale, state, idempotency, limit)"),
        (422, "invalid input"),
        (503, "the database is unavailable; nothing was recorded"),
    )
}
"""The error answers every route may give, for the OpenAPI document."""


class Health(Answer):
    status: Literal["ok"]


class Config(Answer):
    inactivity_seconds: int
    abandon_seconds: int
    demo_deposit_max_cents: int


class Registered(Answer):
    id: int
    email: str


class SessionOpened(Answer):
    token: str
    expires_at: datetime


class Me(Answer):
    email: str
    balance_cents: int
    reality_check: RealityCheck | None = None
    """Present only when a reality check is due."""


class Deposited(Answer):
    balance_cents: int
    demo: bool
    max_cents: int


@dataclass(frozen=True, slots=True)
class LobbyGame(GameListing):
    page: str
    """The game's page: where the lobby links it."""


class GameList(Answer):
    games: list[LobbyGame]


def _values(record: object) -> dict[str, Any]:
    """A record's fields, shallow (``dataclasses.asdict`` would copy every nested record)."""
    return {field.name: getattr(record, field.name) for field in fields(record)}  # type: ignore[arg-type]


def game_page(name: str) -> str:
    """Each game's page is named after it (entrypoints/web/static/<name>.html)."""
    return f"/{name}.html"


def lobby_game(listing: GameListing) -> LobbyGame:
    return LobbyGame(**_values(listing), page=game_page(listing.name))


@dataclass(frozen=True, slots=True)
class PurchasedTicket(TicketView):
    reality_check: RealityCheck | None = None
    """Present only when a reality check is due."""


class TicketPage(Answer):
    tickets: list[HistoryRow]
    next: int | None
    """The ``before`` of the next (older) page; null on the last one."""


class ActivityAnswer(Answer):
    from_: date = Field(serialization_alias="from")
    to: date
    days: list[ActivityDay]
    totals: ActivityTotals


# The two hottest routes (buy, reveal) answer a Ticket about 1 500 times a second on two
# cores. FastAPI's response_model path would copy the record to a dict (dataclasses.asdict),
# validate it back and then serialize it: 38 to 51 µs per answer built and sent, against 16
# to 38 µs this way. pydantic-core serializes the frozen record straight to JSON bytes in
# Rust: 3.6 to 4.7 µs, half the json.dumps of the dict it replaced, with the same bytes
# (timeit, 10 000 answers, a finished Astro and a playing Cash ticket). The routes declare
# the model for /openapi.json; test_answers.py checks the fields sent against it.
_TICKET_JSON = TypeAdapter(TicketView)
_PURCHASED_JSON = TypeAdapter(PurchasedTicket)


def ticket_response(
    ticket: TicketView, status_code: int = 200, reality_check: RealityCheck | None = None
) -> Response:
    """A Ticket answer; with ``reality_check`` (only when one is due) the field is added."""
    if reality_check is None:
        body = _TICKET_JSON.dump_json(ticket)
    else:
        purchased = PurchasedTicket(**_values(ticket), reality_check=reality_check)
        body = _PURCHASED_JSON.dump_json(purchased)
    return Response(body, status_code=status_code, media_type="application/json")


class OperatorMe(Answer):
    email: str
    role: Literal["operator"]


class EmissionAnswer(Answer):
    emission_id: int
    blocks: list[int]
    opened: list[int]
    """The blocks this emission put on sale (none if a block of the game already was)."""


class BlockList(Answer):
    blocks: list[BlockSummary]


class ReportAnswer(Answer):
    report: Literal["blocks", "days"]
    rows: list[BlockReportRow] | list[DayReportRow]


class AuditLog(Answer):
    entries: list[AuditRecord]


class AuditVerification(Answer):
    clean: bool
    entries: int
    first_bad: int | None
    problem: str | None


class PublicBlockList(Answer):
    blocks: list[PublicBlock]


class Commitment(Answer):
    """A block's commitment (format ``grattage-commitment/1``, docs/fairness.md)."""

    format: str
    block_id: str
    game: str
    rules_version: str
    size: int
    root: str
    table: dict[str, Any]
    table_sha256: str
    created_at: str


class TicketProof(Answer):
    """A finished ticket's proof (format ``grattage-ticket-proof/1``)."""

    format: str
    commitment: Commitment
    position: int
    tier: int
    prize_cents: int
    salt: str
    choice: str | None
    path: list[str]
    ticket: dict[str, Any]


class Disclosure(Answer):
    """An ended block's key and tiers (format ``grattage-disclosure/1``)."""

    format: str
    commitment: Commitment
    key: str
    tiers: str
    """Base64 of one byte per unit: its tier, in sale order."""
