"""A sale is never taken that no drawer will draw (outsider finding 2), on SQLite and
PostgreSQL, with real processes: a witness (rounds of 0.1 s) and ``grattage serve``, whose
drawer is a process of its own. SIGKILLed, the drawer is started again by ``serve`` and draws
the sales it left waiting; with no drawer at all, a purchase answers 503 and debits nothing,
and ``GET /api/health`` says the draw is stopped."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
from sqlalchemy import select

from grattage.adapters.draw_tables import draw_queue
from grattage.adapters.witness_client import WitnessClient
from grattage.adapters.witness_port import HttpWitness
from support import World

from .harness import Server, big_table, child_of_serve, log_in, server_env, wait_for
from .test_drawn_crash import witness_for

DEPOSIT = 100_000


def _drawer_of(server: Server) -> int | None:
    return child_of_serve(server, "draw")


def _health(base: str) -> dict[str, str]:
    answer = httpx.get(f"{base}/api/health", timeout=10)
    assert answer.status_code == 200
    return dict(answer.json())


def _waiting(world: World) -> int:
    with world.platform.uow.read() as repos:
        return len(repos.connection.execute(select(draw_queue.c.ticket_id)).all())  # type: ignore[attr-defined]


def _drawn_server(
    world: World, tmp_path: Path, witness_url: str, key: bytes, **extra: object
) -> Server:
    world.platform.witness = HttpWitness(WitnessClient(witness_url, key))
    world.platform.witness.poll()
    world.stock("cash", table=big_table("cash"))  # a drawn block: the commitment names key
    world.player(DEPOSIT, email="liveness@example.org")
    env = server_env(world, witness_url=witness_url, witness_public_key=key.hex(), **extra)
    return Server(env, tmp_path / "server.log")


def test_a_drawer_killed_under_serve_comes_back_and_draws_the_waiting_sales(
    world: World, tmp_path: Path
) -> None:
    with witness_for(world, tmp_path / "witness-process") as (witness, key):
        server = _drawn_server(world, tmp_path, witness.url, key)
        server.start()
        try:
            token = log_in(server.base, "liveness@example.org")
            headers = {"Authorization": f"Bearer {token}"}
            wait_for(lambda: _health(server.base)["draw"] == "running", 30, "no draw running")
            first = _drawer_of(server)
            assert first is not None
            os.kill(first, signal.SIGKILL)
            bought = []  # its lease still runs for up to 3 s: these sales wait for a drawer
            for _ in range(5):
                answer = httpx.post(
                    f"{server.base}/api/games/cash/tickets",
                    json={"mode": "auto"},
                    headers=headers,
                    timeout=30,
                )
                if answer.status_code == 201:
                    bought.append(answer.json()["id"])
                else:
                    assert (answer.status_code, answer.json()["error"]) == (503, "unavailable")
            assert bought, "no sale taken while the dead drawer's lease still ran"
            wait_for(lambda: _drawer_of(server) not in (None, first), 30, "never restarted")
            wait_for(lambda: _waiting(world) == 0, 30, f"sales never drawn:\n{server.log()}")
            for ticket in bought:
                got = httpx.get(f"{server.base}/api/tickets/{ticket}", headers=headers, timeout=30)
                assert got.json()["state"] == "finished"
            wait_for(lambda: _health(server.base)["draw"] == "running", 30, "draw not back")
            assert "the drawer (pid" in server.log() and "exited with code -9" in server.log()
            second = _drawer_of(server)
        finally:
            server.stop()
        assert second is not None  # stopped with the server, not restarted
        wait_for(lambda: not Path(f"/proc/{second}").exists(), 15, "the drawer outlived serve")


def test_with_no_drawer_at_all_a_purchase_answers_503_and_debits_nothing(
    world: World, tmp_path: Path
) -> None:
    with witness_for(world, tmp_path / "witness-process") as (witness, key):
        server = _drawn_server(world, tmp_path, witness.url, key, run_drawer=False)
        server.start()
        try:
            token = log_in(server.base, "liveness@example.org")
            headers = {"Authorization": f"Bearer {token}"}
            assert _drawer_of(server) is None
            assert _health(server.base) == {"status": "ok", "draw": "stopped"}
            answer = httpx.post(
                f"{server.base}/api/games/cash/tickets",
                json={"mode": "auto"},
                headers=headers,
                timeout=30,
            )
            assert (answer.status_code, answer.json()["error"]) == (503, "unavailable")
            assert "no drawer" in answer.json()["message"]
            me = httpx.get(f"{server.base}/api/me", headers=headers, timeout=30).json()
            assert me["balance_cents"] == DEPOSIT
            assert _waiting(world) == 0
        finally:
            server.stop()
