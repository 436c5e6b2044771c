"""Scenario 3, replays: one Idempotency-Key sent 50 times at once, then again after the server
is killed and restarted → one debit, the same answer every time; the key with another body →
409."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from support import World

from .harness import Server, kind, log_in, record, scaled, server_env

CONCURRENT = 50


@pytest.mark.parametrize("mode", ["auto", "play"])
def test_one_key_sent_50_times_and_after_a_restart_debits_once(
    world: World, tmp_path: Path, mode: str
) -> None:
    world.stock("cash", blocks=2)
    world.stock("astro", blocks=2)
    keys = scaled(2, 10)
    email = f"replay-{mode}@example.org"
    player = world.player(keys * 500, email=email)
    server = Server(
        server_env(world, abandon_seconds=600, inactivity_seconds=600), tmp_path / "server.log"
    )
    server.start()
    try:
        token = log_in(server.base, email)
        headers = {"Authorization": f"Bearer {token}"}
        client = httpx.Client(base_url=server.base, headers=headers, timeout=30)
        answers: list[tuple[int, dict]] = []
        for index in range(keys):
            key = f"{mode}-purchase-{index}"
            start = threading.Barrier(CONCURRENT)

            def send(_: int, key: str = key, start: threading.Barrier = start) -> tuple[int, dict]:
                start.wait()
                response = client.post(
                    "/api/games/cash/tickets", json={"mode": mode}, headers={"Idempotency-Key": key}
                )
                return response.status_code, response.json()

            with ThreadPoolExecutor(max_workers=CONCURRENT) as pool:
                burst = list(pool.map(send, range(CONCURRENT)))
            statuses = sorted(status for status, _ in burst)
            assert statuses == [200] * (CONCURRENT - 1) + [201], statuses
            assert all(body == burst[0][1] for _, body in burst), "replays answered differently"
            answers.append(burst[0])
        server.kill()
        server.start()
        for index, (_, first) in enumerate(answers):
            key = f"{mode}-purchase-{index}"
            again = client.post(
                "/api/games/cash/tickets", json={"mode": mode}, headers={"Idempotency-Key": key}
            )
            assert (again.status_code, again.json()) == (200, first)
            other = client.post(
                "/api/games/astro/tickets",
                json={"mode": mode, "sign": "leo"},
                headers={"Idempotency-Key": key},
            )
            assert other.status_code == 409, other.text
            assert other.json()["error"] == "idempotency_conflict"
            other_mode = client.post(
                "/api/games/cash/tickets",
                json={"mode": "auto" if mode == "play" else "play"},
                headers={"Idempotency-Key": key},
            )
            assert other_mode.status_code == 409, other_mode.text
        history = client.get("/api/me/tickets", params={"limit": 100}).json()["tickets"]
        client.close()
    finally:
        server.stop()
    assert len(history) == keys
    stakes = keys * 500
    prizes = sum(t["prize_cents"] for _, t in answers) if mode == "auto" else 0
    assert world.balance(player) == keys * 500 - stakes + prizes
    record(
        f"replays [{kind(world)}, {mode}]",
        keys=keys,
        sends_per_key=CONCURRENT + 1,
        restarts=1,
        debits=len(history),
        different_answers=0,
        other_body_refused=2 * keys,
    )
