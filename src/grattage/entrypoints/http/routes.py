"""The routes of docs/api.md; each one calls one service function."""

from __future__ import annotations

from functools import partial
from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response

from grattage.entrypoints.http import draw_wait
from grattage.entrypoints.http.answers import (
    ERRORS,
    Config,
    Deposited,
    GameList,
    Health,
    Me,
    PurchasedTicket,
    Registered,
    SessionOpened,
    TicketPage,
    lobby_game,
    ticket_response,
)
from grattage.entrypoints.http.auth import (
    COOKIE,
    DEVICE_COOKIE,
    current_caller,
    hashing_slot,
    keep_device,
    limit_log_ins,
    limit_sign_ups,
    platform_of,
    request_token,
    require_csrf,
    set_session_cookie,
)
from grattage.entrypoints.http.batching import Writes
from grattage.entrypoints.http.schemas import (
    BuyBody,
    DepositBody,
    LoginBody,
    RegisterBody,
    RevealBody,
)
from grattage.errors import AlreadyExists, NationallyExcluded, SelfExcluded
from grattage.service import (
    accounts,
    draw_sale,
    emissions,
    reality_checks,
    scratch_activity,
    tickets,
)
from grattage.service.model import Caller
from grattage.service.records import RealityCheck, TicketView

SIGN_UP_REFUSED = (
    "this sign-up cannot be accepted: this address or this person already has an account "
    "or cannot open one; log in, or contact support"
)

router = APIRouter(prefix="/api", responses=ERRORS)

CallerDep = Annotated[Caller, Depends(current_caller)]
TicketId = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.get("/health", tags=["system"])
def health(request: Request) -> Health:
    """Always 200 while the process answers; ``draw`` says whether the platform's draw runs
    (the lease, read at most once a second: nothing measurable)."""
    running = draw_sale.draw_running(platform_of(request))
    if running is None:
        return Health(status="ok", draw="off")
    return Health(status="ok", draw="running" if running else "stopped")


@router.get("/config", tags=["system"])
def config(request: Request) -> Config:
    policy = platform_of(request).policy
    return Config(
        inactivity_seconds=policy.inactivity_seconds,
        abandon_seconds=policy.abandon_seconds,
        demo_deposit_max_cents=policy.demo_deposit_max_cents,
    )


@router.post(
    "/players",
    status_code=201,
    tags=["account"],
    dependencies=[Depends(limit_sign_ups), Depends(hashing_slot)],
)
def register(body: RegisterBody, request: Request) -> Registered:
    platform = platform_of(request)
    try:
        player_id = accounts.register(
            platform,
            body.email,
            body.password,
            body.birth_date,
            first_name=body.first_name,
            last_name=body.last_name,
            deposit_limit_cents=body.deposit_weekly_cents,
            stake_limit_cents=body.stake_weekly_cents,
        )
    except (AlreadyExists, SelfExcluded, NationallyExcluded):
        # One answer to anyone who signs up: that a person is excluded (by themself or on
        # the national register) is not told to whoever knows a name and a birth date; the
        # person learns it at log-in, after the password (docs/platform.md, Security).
        raise AlreadyExists(SIGN_UP_REFUSED) from None
    return Registered(id=player_id, email=accounts.normalize_email(body.email))


@router.post(
    "/sessions", tags=["account"], dependencies=[Depends(limit_log_ins), Depends(hashing_slot)]
)
def log_in(body: LoginBody, request: Request, response: Response) -> SessionOpened:
    platform = platform_of(request)
    device = request.cookies.get(DEVICE_COOKIE, "")
    session = accounts.log_in(platform, body.email, body.password, device)
    set_session_cookie(request, response, COOKIE, session.token, samesite="lax")
    keep_device(request, response, DEVICE_COOKIE, "/api/sessions", session.device)
    return SessionOpened(token=session.token, expires_at=session.expires_at)


@router.delete("/sessions", status_code=204, tags=["account"])
def log_out(request: Request) -> Response:
    token, from_cookie = request_token(request)
    if token:
        require_csrf(request, from_cookie)
        accounts.log_out(platform_of(request), token)
    response = Response(status_code=204)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="lax")
    return response


@router.get("/me", tags=["account"], response_model_exclude_none=True)
def me(caller: CallerDep, request: Request) -> Me:
    platform = platform_of(request)
    tickets.settle_due(platform, caller.player_id)
    check = reality_checks.reality_check(platform, caller)
    return Me(
        email=caller.email,
        balance_cents=accounts.balance(platform, caller.player_id),
        session_started_at=caller.session_started_at,
        next_reality_check_at=reality_checks.next_reality_check_at(platform, caller, bool(check)),
        reality_check=check,  # only when one is due (else absent): time played and net spend
    )


@router.post("/me/deposits", status_code=201, tags=["account"])
def deposit(body: DepositBody, caller: CallerDep, request: Request) -> Deposited:
    platform = platform_of(request)
    new_balance = accounts.deposit(platform, caller.player_id, body.amount_cents)
    return Deposited(
        balance_cents=new_balance, demo=True, max_cents=platform.policy.demo_deposit_max_cents
    )


@router.get("/games", tags=["games"])
def games(request: Request) -> GameList:
    return GameList(games=[lobby_game(game) for game in emissions.catalogue(platform_of(request))])


# The two ticket routes build their answer themselves (answers.ticket_response: why) and
# declare its model for /openapi.json only.
@router.post(
    "/games/{game}/tickets",
    status_code=201,
    tags=["tickets"],
    response_model=PurchasedTicket,
    responses={200: {"model": PurchasedTicket, "description": "a replay: the same ticket"}},
)
async def buy(
    game: Annotated[str, Path(max_length=32)],
    body: BuyBody,
    request: Request,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> Response:
    # The hottest route: its work runs where batching.py says (in batches on SQLite).
    writes: Writes = request.app.state.writes
    # Each game in a lane of its own: a stuck block row delays only its own game's sales.
    ticket, replayed, check = await writes.run(
        partial(_buy, game, body, request, idempotency_key), lane=game
    )
    # Shaped once the purchase is done: on SQLite the batch holds the database's one write
    # lock until every purchase in it is, and the JSON of the answer needs no lock.
    return ticket_response(ticket, 200 if replayed else 201, check)


def _buy(
    game: str, body: BuyBody, request: Request, idempotency_key: str | None
) -> tuple[TicketView, bool, RealityCheck | None]:
    # Authenticated here rather than by a dependency: FastAPI runs a sync dependency on a
    # thread of its own, and the hop costs a noticeable share of the hottest route.
    caller = current_caller(request)
    ticket, replayed = tickets.buy(
        platform_of(request),
        caller.player_id,
        game_name=game,
        mode=body.mode,
        sign=body.sign,
        idempotency_key=idempotency_key,
        client_seed=body.client_seed,
    )
    # only when one is due, so the Ticket keeps its shape otherwise
    return ticket, replayed, reality_checks.reality_check(platform_of(request), caller)


@router.post("/tickets/{ticket_id}/reveal", tags=["tickets"], response_model=TicketView)
def reveal(ticket_id: TicketId, body: RevealBody, caller: CallerDep, request: Request) -> Response:
    return ticket_response(
        tickets.reveal(
            platform_of(request),
            caller.player_id,
            ticket_id,
            body.zones,
            reveal_all=body.all,
            by_inactivity=body.inactivity,
        )
    )


@router.post("/tickets/{ticket_id}/activity", status_code=204, tags=["tickets"])
def activity(ticket_id: TicketId, caller: CallerDep, request: Request) -> Response:
    """The player is scratching: the ticket's inactivity delay runs from now. 204 whether or
    not it moved (a finished ticket, a report a moment after the last): the page need not care."""
    scratch_activity.report_activity(platform_of(request), caller.player_id, ticket_id)
    return Response(status_code=204)


@router.get("/tickets/{ticket_id}", tags=["tickets"])
async def ticket(
    ticket_id: TicketId,
    caller: CallerDep,
    request: Request,
    wait: Annotated[bool, Query(description="hold a covered ticket until it is drawn")] = False,
) -> TicketView:
    platform = platform_of(request)
    view = await anyio.to_thread.run_sync(tickets.get_ticket, platform, caller.player_id, ticket_id)
    if wait and view.state == "covered":
        view = await draw_wait.until_drawn(platform, caller.player_id, view)
    return view


@router.get("/me/tickets/last", tags=["tickets"])
def last_ticket(caller: CallerDep, request: Request) -> TicketView:
    return tickets.last_ticket(platform_of(request), caller.player_id)


@router.get("/me/tickets", tags=["tickets"])
def history(
    caller: CallerDep,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> TicketPage:
    rows, following = tickets.history(platform_of(request), caller.player_id, limit, before)
    return TicketPage(tickets=rows, next=following)
