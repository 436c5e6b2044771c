"""Scenario 4, interrupted games: the client vanishes after paying, after revealing some zones,
or in the middle of an ``auto`` purchase. The server's own sweeper (no request of the player)
finishes each ticket within its delay, credits its prize once, and the player finds it in
``GET /api/me/tickets/last``."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from grattage.adapters.tables import tickets as tickets_table
from support import World

from .harness import (
    kind,
    log_in,
    player_balance_matches_tickets,
    record,
    running_server,
    scaled,
)

INACTIVITY = 1
ABANDON = 2
SWEEP = 0.2
DEPOSIT = 2_000  # per round: 1 700 cents of stakes


def _stored(world: World, ticket_id: int) -> Any:
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        return db.execute(select(tickets_table).where(tickets_table.c.id == ticket_id)).one()


def _wait_finished(world: World, ticket_id: int, within: float) -> float:
    """Seconds until the system finished the ticket (asserts it happens within ``within``)."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        if _stored(world, ticket_id).state == "finished":
            return time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"ticket {ticket_id} not finished within {within} s")


def _vanish_mid_request(base: str, token: str, path: str, body: dict[str, Any]) -> None:
    """Send a request and hang up before reading a byte of the answer."""
    host, port = base.removeprefix("http://").split(":")
    payload = json.dumps(body).encode()
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + payload
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(request)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def test_vanished_clients_tickets_are_finished_by_the_system(world: World, tmp_path: Path) -> None:
    world.stock("cash", blocks=2)
    world.stock("astro", blocks=2)
    rounds = scaled(2, 10)
    email = "vanishing@example.org"
    player = world.player(DEPOSIT * rounds, email=email)
    finish_times: list[float] = []
    checked = 0
    with running_server(
        world,
        tmp_path,
        inactivity_seconds=INACTIVITY,
        abandon_seconds=ABANDON,
        sweep_interval_seconds=SWEEP,
    ) as server:
        token = log_in(server.base, email)
        headers = {"Authorization": f"Bearer {token}"}
        for _ in range(rounds):
            cases: list[tuple[str, int, str]] = []
            with httpx.Client(base_url=server.base, headers=headers, timeout=30) as client:
                paid = client.post("/api/games/cash/tickets", json={"mode": "play"}).json()
                cases.append(("paid, then gone", paid["id"], "inactivity"))
                astro = client.post(
                    "/api/games/astro/tickets", json={"mode": "play", "sign": "leo"}
                ).json()
                part = client.post(
                    f"/api/tickets/{astro['id']}/reveal", json={"zones": ["symbols/0", "gain"]}
                )
                assert part.status_code == 200 and part.json()["state"] == "playing"
                cases.append(("some zones revealed, then gone", astro["id"], "abandon"))
                cash = client.post("/api/games/cash/tickets", json={"mode": "play"}).json()
                client.post(f"/api/tickets/{cash['id']}/reveal", json={"zones": [cash["zones"][0]]})
                cases.append(("cash zone revealed, then gone", cash["id"], "inactivity"))
                last_id = client.get("/api/me/tickets/last").json()["id"]
            _vanish_mid_request(server.base, token, "/api/games/cash/tickets", {"mode": "auto"})
            deadline = time.monotonic() + 10
            while (newest := _stored_last(world, player)) == last_id:
                assert time.monotonic() < deadline, "the abandoned auto purchase never landed"
                time.sleep(0.05)
            cases.append(("gone during auto", newest, "auto"))
            left_at = time.monotonic()
            for _, ticket_id, _ in cases:
                _wait_finished(world, ticket_id, ABANDON + 5)
                finish_times.append(time.monotonic() - left_at)
            with httpx.Client(base_url=server.base, headers=headers, timeout=30) as client:
                last = client.get("/api/me/tickets/last").json()
                assert last["id"] == cases[-1][1] and last["state"] == "finished"
                for label, ticket_id, finished_by in cases:
                    seen = client.get(f"/api/tickets/{ticket_id}").json()
                    stored = _stored(world, ticket_id)
                    assert seen["state"] == "finished", label
                    assert seen["finished_by"] == finished_by, (label, seen["finished_by"])
                    assert seen["prize_cents"] == stored.prize_cents, label
                    with world.platform.uow.read() as repos:
                        game = world.platform.loaded_block(repos, stored.block_id).game
                    assert game.evaluate(seen["document"]) == seen["prize_cents"], label
                    checked += 1
    assert player_balance_matches_tickets(world, player, DEPOSIT * rounds)
    record(
        f"interrupted games [{kind(world)}]",
        tickets_abandoned=checked,
        finished_by_the_system=checked,
        finished_within_seconds_of_leaving=round(max(finish_times), 2),
        timeouts=f"inactivity {INACTIVITY} s, abandon {ABANDON} s, sweep every {SWEEP} s",
    )


def _stored_last(world: World, player: int) -> int:
    with world.platform.uow.read() as repos:
        ticket = repos.tickets.last(player)
        assert ticket is not None
        return ticket.id
