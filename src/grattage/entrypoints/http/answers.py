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

from grattage.service.player_records import PlayerMatch
from grattage.service.records import (
    ActivityDay,
    ActivityTotals,
    AuditRecord,
    BlockReportRow,
    BlockSummary,
    DayReportRow,
    EmissionJobRecord,
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
    details: dict[str, Any] | None = None
    """Only on ``limit_reached`` from the weekly limits: ``limit`` ("deposit" or "stake"),
    ``limit_cents``, ``used_cents`` (this week), ``remaining_cents`` and ``resets_at`` (next
    Monday 00:00 in the operator's time zone, Paris, written in UTC)."""


ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorAnswer, "description": meaning}
    for status, meaning in (
        (401, "no credentials, or they expired"),
        (403, "forbidden (self-excluded, or not an operator)"),
        (404, "unknown, or not the caller's"),
        (409, "conflict (balance, sold out, not on sale, state, idempotency, limit)"),
        (422, "invalid input"),
        (500, "internal_error (a bug) or internal_inconsistency; nothing was changed"),
        (503, "the database, or a drawn game's witness, is unavailable; nothing was recorded"),
    )
}
"""The error answers every route may give, for the OpenAPI document."""


class Health(Answer):
    status: Literal["ok"]
    draw: Literal["running", "stopped", "off"]
    """running: a drawer holds the draw's lease; stopped: none does, and drawn sales are
    refused (503) until one does; off: no witness, nothing is drawn."""


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
    session_started_at: datetime
    """When this log-in began: the pages' session clock counts from it."""
    next_reality_check_at: datetime
    """When the next reality check is due: a page left open asks ``/api/me`` again then."""
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
    rules_page: str
    """The game's « Règles du jeu » page, public: where the log-in page, the lobby and the game
    page link it."""


class GameList(Answer):
    games: list[LobbyGame]


def _values(record: object) -> dict[str, Any]:
    """A record's fields, shallow (``dataclasses.asdict`` would copy every nested record)."""
    return {field.name: getattr(record, field.name) for field in fields(record)}  # type: ignore[arg-type]


def game_page(name: str) -> str:
    """Each game's page is named after it (entrypoints/web/static/<name>.html)."""
    return f"/{name}.html"


def rules_page(name: str) -> str:
    """Each game's rules page is named after it (entrypoints/web/templates/<name>_rules.html)."""
    return f"/regles/{name}"


def lobby_game(listing: GameListing) -> LobbyGame:
    return LobbyGame(
        **_values(listing), page=game_page(listing.name), rules_page=rules_page(listing.name)
    )


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


class JobStarted(Answer):
    """An emission accepted: it is made in the background (``GET location`` follows it)."""

    job_id: int
    location: str


class BlockList(Answer):
    blocks: list[BlockSummary]


class JobList(Answer):
    jobs: list[EmissionJobRecord]
    """The latest emission jobs, newest first."""


class ReportAnswer(Answer):
    report: Literal["blocks", "days"]
    rows: list[BlockReportRow] | list[DayReportRow]


class PlayerSearch(Answer):
    players: list[PlayerMatch]
    next_offset: int | None
    """The ``offset`` of the next page; None: this is the last."""


class AuditLog(Answer):
    entries: list[AuditRecord]


class AuditVerification(Answer):
    clean: bool
    entries: int
    first_bad: int | None
    problem: str | None


class PublicBlockList(Answer):
    blocks: list[PublicBlock]


# The transparency log (docs/fairness.md, "The transparency log").


class LogKeyPeriod(Answer):
    """One key of the operator's history and the log indexes it signs."""

    key_id: str
    public_key: str
    from_index: int
    change_index: int | None


class LogKey(Answer):
    """The operator's signing key in force, and every key since the log began."""

    algorithm: Literal["Ed25519"]
    public_key: str
    key_id: str
    keys: list[LogKeyPeriod]


class SignedTreeHead(Answer):
    """A signed tree head (format ``grattage-sth/1``)."""

    format: str
    tree_size: int
    timestamp: int
    root_hash: str
    key_id: str
    signature: str


class LogEntry(Answer):
    index: int
    entry: dict[str, Any]


class LogEntries(Answer):
    entries: list[LogEntry]


class DrawRule(Answer):
    """What the round a drawn sale names depends on, besides its time (docs/draw.md, "The
    round of a sale"): with it, a monitor checks each receipt's round exactly."""

    draw_margin_ms: int


class InclusionProof(Answer):
    index: int
    tree_size: int
    leaf_hash: str
    path: list[str]


class ConsistencyProof(Answer):
    first: int
    second: int
    proof: list[str]
