"""A stand-in for the HTTP API of docs/api.md, in memory, for the browser tests only.

It exists because the pages were built before the real API landed; it follows the contract
(shapes, statuses, error codes, cookie + CSRF header, idempotency keys, locked zones) and uses
the real game rules to design tickets, so a page that works here works against the contract.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from itertools import count
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from grattage.entrypoints.web import mount_pages
from grattage.games.astro import PHASE_ONE_ZONES
from grattage.games.randomness import SystemRandomness
from grattage.games.registry import find_game

COOKIE = "grattage_session"
PRIZE_CYCLES = {"cash": [1000, 0, 500, 0, 2000, 500], "astro": [1200, 0, 400, 0, 200]}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ApiFailure(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class Player:
    id: int
    email: str
    password: str
    balance_cents: int = 0
    ticket_ids: list[int] = field(default_factory=list)


@dataclass
class Ticket:
    id: int
    player: Player
    game: str
    mode: str
    sign: str | None
    document: dict[str, Any]
    balance_before_cents: int
    balance_after_cents: int
    created_at: str = field(default_factory=_now)
    revealed: set[str] = field(default_factory=set)
    finished_at: str | None = None
    finished_by: str | None = None


def create_fake_app(inactivity_seconds: int = 10, deposit_max_cents: int = 10_000) -> FastAPI:
    app = FastAPI()
    players: dict[str, Player] = {}
    sessions: dict[str, Player] = {}
    tickets: dict[int, Ticket] = {}
    purchases: dict[tuple[int, str], int] = {}
    ids = count(1)
    sold = {"cash": 0, "astro": 0}
    rng = SystemRandomness()
    app.state.tickets = tickets

    @app.exception_handler(ApiFailure)
    async def _failure(_: Request, exc: ApiFailure) -> JSONResponse:
        return JSONResponse({"error": exc.code, "message": exc.message}, status_code=exc.status)

    def player_of(request: Request, *, write: bool = False) -> Player:
        token = request.cookies.get(COOKIE)
        auth = request.headers.get("authorization", "")
        if auth.startswith("Bearer "):
            token = auth.removeprefix("Bearer ")
        elif write and request.headers.get("x-grattage-csrf") != "1":
            raise ApiFailure(403, "forbidden", "missing X-Grattage-CSRF header")
        if not token or token not in sessions:
            raise ApiFailure(401, "unauthorized", "log in first")
        return sessions[token]

    def view(ticket: Ticket) -> dict[str, Any]:
        game = find_game(ticket.game)
        finished = ticket.finished_at is not None
        locked = [
            z
            for z in game.zones
            if z not in ticket.revealed
            and any(p not in ticket.revealed for p in game.zone_prerequisites(z))
        ]
        return {
            "id": ticket.id,
            "game": ticket.game,
            "mode": ticket.mode,
            "state": "finished" if finished else "playing",
            "sign": ticket.sign,
            "stake_cents": game.price_cents,
            "created_at": ticket.created_at,
            "zones": list(game.zones),
            "revealed": {
                z: game.zone_content(ticket.document, z) for z in game.zones if z in ticket.revealed
            },
            "locked_zones": locked,
            "prize_cents": ticket.document["prize_cents"] if finished else None,
            "document": ticket.document if finished else None,
            "finished_at": ticket.finished_at,
            "finished_by": ticket.finished_by,
            "balance_after_cents": ticket.balance_after_cents,
        }

    def reveal(ticket: Ticket, zones: list[str], by: str) -> None:
        game = find_game(ticket.game)
        for zone in zones:
            if zone not in game.zones:
                raise ApiFailure(422, "invalid_zone", f"no zone {zone!r}")
            if any(p not in ticket.revealed for p in game.zone_prerequisites(zone)):
                raise ApiFailure(422, "zone_not_revealable", f"{zone!r} is locked")
            ticket.revealed.add(zone)
        if ticket.finished_at is None and set(game.zones) <= ticket.revealed:
            ticket.finished_at, ticket.finished_by = _now(), by
            ticket.player.balance_cents += ticket.document["prize_cents"]
            ticket.balance_after_cents = ticket.player.balance_cents

    @app.post("/api/players", status_code=201)
    async def sign_up(request: Request) -> dict[str, Any]:
        body = await request.json()
        born = date.fromisoformat(body["birth_date"])
        today = date.today()
        if (today.year - born.year) - ((today.month, today.day) < (born.month, born.day)) < 18:
            raise ApiFailure(422, "invalid_input", "players must be 18")
        if body["email"] in players:
            raise ApiFailure(409, "already_exists", "email taken")
        player = Player(len(players) + 1, body["email"], body["password"])
        players[player.email] = player
        return {"id": player.id, "email": player.email}

    @app.post("/api/sessions")
    async def log_in(request: Request) -> JSONResponse:
        body = await request.json()
        player = players.get(body.get("email", ""))
        if player is None or player.password != body.get("password"):
            raise ApiFailure(401, "unauthorized", "bad credentials")
        token = secrets.token_urlsafe(16)
        sessions[token] = player
        response = JSONResponse({"token": token, "expires_at": "2099-01-01T00:00:00Z"})
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    @app.delete("/api/sessions", status_code=204)
    async def log_out(request: Request) -> Response:
        sessions.pop(request.cookies.get(COOKIE, ""), None)
        response = Response(status_code=204)
        response.delete_cookie(COOKIE)
        return response

    @app.get("/api/me")
    async def me(request: Request) -> dict[str, Any]:
        player = player_of(request)
        return {"email": player.email, "balance_cents": player.balance_cents}

    @app.post("/api/me/deposits", status_code=201)
    async def deposit(request: Request) -> dict[str, Any]:
        player = player_of(request, write=True)
        amount = (await request.json()).get("amount_cents")
        if not isinstance(amount, int) or not 0 < amount <= deposit_max_cents:
            raise ApiFailure(422, "invalid_input", "bad amount")
        player.balance_cents += amount
        return {"balance_cents": player.balance_cents, "demo": True, "max_cents": deposit_max_cents}

    @app.get("/api/config")
    async def config() -> dict[str, Any]:
        return {
            "inactivity_seconds": inactivity_seconds,
            "abandon_seconds": 900,
            "demo_deposit_max_cents": deposit_max_cents,
        }

    @app.get("/api/games")
    async def games() -> dict[str, Any]:
        answer = []
        for name in ("cash", "astro"):
            game = find_game(name)
            answer.append(
                {
                    "name": name,
                    "title": game.title,
                    "price_cents": game.price_cents,
                    "block_size": game.table.block_size,
                    "top_prize_cents": max(t.prize_cents for t in game.table.tiers),
                    "odds": "1 in 3.83" if name == "cash" else "1 in 3.61",
                    "payout_percent": "75.000" if name == "cash" else "60.005",
                    "reconstruction": game.table.reconstruction,
                    "choices": list(game.choices),
                    "zones": list(game.zones),
                    "prize_table": [
                        {"prize_cents": t.prize_cents, "count": t.count} for t in game.table.tiers
                    ],
                    "on_sale": True,
                }
            )
        return {"games": answer}

    @app.post("/api/games/{name}/tickets", status_code=201)
    async def buy(name: str, request: Request) -> JSONResponse:
        player = player_of(request, write=True)
        key = request.headers.get("idempotency-key")
        if key and (player.id, key) in purchases:
            return JSONResponse(view(tickets[purchases[(player.id, key)]]), status_code=200)
        body = await request.json()
        game = find_game(name)
        sign = game.check_choice(body.get("sign"))
        if player.balance_cents < game.price_cents:
            raise ApiFailure(409, "insufficient_balance", "balance too low")
        cycle = PRIZE_CYCLES[name]
        prize = cycle[sold[name] % len(cycle)]
        sold[name] += 1
        document = game.design(prize, rng, sign)
        before = player.balance_cents
        player.balance_cents -= game.price_cents
        ticket = Ticket(
            next(ids), player, name, body["mode"], sign, document, before, player.balance_cents
        )
        tickets[ticket.id] = ticket
        player.ticket_ids.append(ticket.id)
        if key:
            purchases[(player.id, key)] = ticket.id
        if ticket.mode == "auto":
            reveal(ticket, [*PHASE_ONE_ZONES, "banner"] if name == "astro" else [*game.zones], "auto")
        return JSONResponse(view(ticket), status_code=201)

    def owned(request: Request, ticket_id: int, *, write: bool = False) -> Ticket:
        player = player_of(request, write=write)
        ticket = tickets.get(ticket_id)
        if ticket is None or ticket.player is not player:
            raise ApiFailure(404, "not_found", "no such ticket")
        return ticket

    @app.post("/api/tickets/{ticket_id}/reveal")
    async def reveal_zones(ticket_id: int, request: Request) -> dict[str, Any]:
        ticket = owned(request, ticket_id, write=True)
        body = await request.json()
        if ticket.finished_at is None:
            if body.get("all"):
                game = find_game(ticket.game)
                reveal(ticket, [z for z in game.zones if z not in ticket.revealed], "player")
            else:
                reveal(ticket, list(body.get("zones", [])), "player")
        return view(ticket)

    @app.get("/api/tickets/{ticket_id}")
    async def get_ticket(ticket_id: int, request: Request) -> dict[str, Any]:
        return view(owned(request, ticket_id))

    @app.get("/api/me/tickets/last")
    async def last(request: Request) -> dict[str, Any]:
        player = player_of(request)
        if not player.ticket_ids:
            raise ApiFailure(404, "not_found", "no ticket yet")
        return view(tickets[player.ticket_ids[-1]])

    @app.get("/api/me/tickets")
    async def history(request: Request, limit: int = 20, before: int | None = None) -> Any:
        player = player_of(request)
        ids_ = [i for i in reversed(player.ticket_ids) if before is None or i < before]
        page = ids_[:limit]
        rows = []
        for ticket_id in page:
            t = tickets[ticket_id]
            rows.append(
                {
                    "id": t.id,
                    "game": t.game,
                    "created_at": t.created_at,
                    "finished_at": t.finished_at,
                    "state": "finished" if t.finished_at else "playing",
                    "stake_cents": find_game(t.game).price_cents,
                    "prize_cents": t.document["prize_cents"] if t.finished_at else None,
                    "balance_before_cents": t.balance_before_cents,
                    "balance_after_cents": t.balance_after_cents,
                    "sign": t.sign,
                }
            )
        return {"tickets": rows, "next": page[-1] if len(ids_) > limit else None}

    mount_pages(app)
    return app
