"""The try mode's routes, « Essayer gratuitement » (docs/api.md, "The try mode"): each calls
one function of :mod:`grattage.service.try_mode`, which reaches play money only.

A try session rides in a cookie of its own (``grattage_try``), never the player's: a visitor
with no account has one, and a logged-in player's try session knows nothing of their account.
A write authenticated by that cookie carries ``X-Grattage-CSRF: 1``, as every cookie write of
the API does; new try sessions are rate-limited per client address and overall.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import Field, StrictStr

from grattage.entrypoints.http.answers import ERRORS, Answer, ticket_response
from grattage.entrypoints.http.auth import limit_try_starts, platform_of, require_csrf
from grattage.entrypoints.http.schemas import Body, RevealBody
from grattage.service import try_mode
from grattage.service.model import FinishedBy, Mode
from grattage.service.records import TicketView
from grattage.service.try_mode import TryAccount, TryGame

TRY_COOKIE = "grattage_try"

router = APIRouter(prefix="/api/try", responses=ERRORS, tags=["try mode"])

TryTicketId = Annotated[int, Path(ge=1, le=2**31 - 1)]


class TryBuyBody(Body):
    mode: StrictStr = Field(max_length=16)
    sign: StrictStr | None = Field(default=None, max_length=32)


class TryGames(Answer):
    games: list[TryGame]


class TryHistoryRow(Answer):
    id: int
    game: str
    mode: Mode
    state: str
    sign: str | None
    stake_cents: int
    prize_cents: int | None
    """Null while the ticket is still in play."""
    created_at: datetime
    finished_by: FinishedBy | None
    balance_after_cents: int


class TryHistory(Answer):
    tickets: list[TryHistoryRow]
    """The try session's last tickets, newest first (20 at most)."""


def _token(request: Request) -> str:
    """The try session's token; a write must carry the CSRF header (the cookie rides along
    on any request a browser makes, a cross-site form's included)."""
    require_csrf(request, from_cookie=True)
    return request.cookies.get(TRY_COOKIE, "")


@router.get("/games")
def games(request: Request) -> TryGames:
    """The games and the figures of their try blocks' table: the real game's odds."""
    return TryGames(games=try_mode.try_games(platform_of(request)))


@router.post("/sessions", status_code=201, dependencies=[Depends(limit_try_starts)])
def start(request: Request, response: Response) -> TryAccount:
    """A new try session with its play money, in the ``grattage_try`` cookie."""
    require_csrf(request, from_cookie=True)
    token, account = try_mode.start(platform_of(request))
    response.set_cookie(
        TRY_COOKIE,
        token,
        max_age=request.app.state.settings.try_session_hours * 3600,
        httponly=True,
        samesite="strict",
        secure=request.app.state.settings.secure_cookies,
        path="/api/try",
    )
    return account


@router.get("/session")
def session(request: Request) -> TryAccount:
    """The try session's play balance; 404 ``no_try_session`` when there is none."""
    return try_mode.account(platform_of(request), _token(request))


@router.post("/session/refill")
def refill(request: Request) -> TryAccount:
    """Back to the starting play money, once the balance cannot pay a ticket."""
    return try_mode.refill(platform_of(request), _token(request))


@router.post("/games/{game}/tickets", status_code=201, response_model=TicketView)
def buy(game: Annotated[str, Path(max_length=32)], body: TryBuyBody, request: Request) -> Response:
    ticket = try_mode.buy(
        platform_of(request), _token(request), game_name=game, mode=body.mode, sign=body.sign
    )
    return ticket_response(ticket, 201)


@router.post("/tickets/{ticket_id}/reveal", response_model=TicketView)
def reveal(ticket_id: TryTicketId, body: RevealBody, request: Request) -> Response:
    return ticket_response(
        try_mode.reveal(
            platform_of(request),
            _token(request),
            ticket_id,
            body.zones,
            reveal_all=body.all,
            by_inactivity=body.inactivity,
        )
    )


@router.get("/tickets/last")
def last_ticket(request: Request) -> TicketView:
    return try_mode.last_ticket(platform_of(request), _token(request))


@router.get("/tickets/{ticket_id}")
def ticket(ticket_id: TryTicketId, request: Request) -> TicketView:
    return try_mode.get_ticket(platform_of(request), _token(request), ticket_id)


@router.get("/tickets")
def history(request: Request) -> TryHistory:
    rows = [
        TryHistoryRow(
            id=row.id,
            game=row.game,
            mode=row.mode,
            state=row.state,
            sign=row.sign,
            stake_cents=row.stake_cents,
            prize_cents=row.prize_cents if row.state == "finished" else None,
            created_at=row.created_at,
            finished_by=row.finished_by,
            balance_after_cents=row.balance_after_cents,
        )
        for row in try_mode.history(platform_of(request), _token(request))
    ]
    return TryHistory(tickets=rows)
