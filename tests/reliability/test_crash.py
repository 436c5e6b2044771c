"""Scenario 1, crash under load: clients buy and reveal while the server is SIGKILLed.

Each client retries a request whose answer it did not get (the connection died with the
server) with the same Idempotency-Key until the restarted server answers: the answer is either
the purchase the dead server had committed (a replay, 200) or a fresh one (201). Afterwards
every acknowledged purchase must exist, every stake have its ticket, every win be credited once
and the books reconcile.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from support import World

from .harness import (
    SOAK,
    Server,
    big_table,
    cli,
    kind,
    log_in,
    player_balance_matches_tickets,
    read_books,
    record,
    scaled,
    server_env,
)

CLIENTS = 6
DEPOSIT = 400_000
SIGNS = ("aries", "leo", "virgo", "pisces")


@dataclass
class ClientLog:
    acknowledged: dict[int, dict[str, Any]] = field(default_factory=dict)
    replays_after_crash: int = 0
    transport_errors: int = 0
    unavailable: int = 0
    given_up: int = 0
    reveals: int = 0
    refusals: list[str] = field(default_factory=list)


def persist(
    log: ClientLog,
    client: httpx.Client,
    path: str,
    body: dict[str, Any],
    deadline: float,
    headers: dict[str, str] | None = None,
) -> httpx.Response | None:
    """POST until the server answers for real (not a dead socket, not a 503)."""
    while time.monotonic() < deadline:
        try:
            response = client.post(path, json=body, headers=headers)
        except httpx.TransportError:
            log.transport_errors += 1
            time.sleep(0.05)
            continue
        if response.status_code == 503:
            log.unavailable += 1
            time.sleep(0.05)
            continue
        return response
    log.given_up += 1
    return None


def play(base: str, token: str, stop: threading.Event, seed: int) -> ClientLog:
    log = ClientLog()
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        while not stop.is_set():
            deadline = time.monotonic() + 90
            game = rng.choice(("cash", "astro"))
            body: dict[str, Any] = {"mode": rng.choice(("play", "auto"))}
            if game == "astro":
                body["sign"] = rng.choice(SIGNS)
            key = str(uuid.uuid4())
            errors_before = log.transport_errors
            response = persist(
                log,
                client,
                f"/api/games/{game}/tickets",
                body,
                deadline,
                headers={"Idempotency-Key": key},
            )
            if response is None:
                continue
            if response.status_code not in (200, 201):
                log.refusals.append(response.text)
                return log
            ticket = response.json()
            if response.status_code == 200 and log.transport_errors > errors_before:
                log.replays_after_crash += 1
            log.acknowledged[ticket["id"]] = ticket
            if body["mode"] == "auto":
                continue
            zones = [z for z in ticket["zones"] if z not in ticket["locked_zones"]]
            for _ in range(rng.randint(0, 3)):
                chosen = rng.sample(zones, k=min(len(zones), rng.randint(1, 2)))
                revealed = persist(
                    log, client, f"/api/tickets/{ticket['id']}/reveal", {"zones": chosen}, deadline
                )
                log.reveals += 1
                if revealed is not None and revealed.status_code != 200:
                    log.refusals.append(revealed.text)
            if rng.random() < 0.6:  # else walk away: the sweeper finishes it
                persist(log, client, f"/api/tickets/{ticket['id']}/reveal", {"all": True}, deadline)
                log.reveals += 1
    return log


def test_sigkill_under_load_loses_nothing_and_pays_once(world: World, tmp_path: Path) -> None:
    world.stock("cash", blocks=2, table=big_table("cash"))
    world.stock("astro", blocks=2, table=big_table("astro"))
    emails = [f"crash{i}@example.org" for i in range(CLIENTS)]
    players = [world.player(DEPOSIT, email=email) for email in emails]
    kills = scaled(3, 25)
    server = Server(
        server_env(world, abandon_seconds=3, inactivity_seconds=2, sweep_interval_seconds=0.5),
        tmp_path / "server.log",
    )
    server.start()
    rng = random.Random(7)
    stop = threading.Event()
    started = time.monotonic()
    try:
        tokens = [log_in(server.base, email) for email in emails]
        with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
            runs = [
                pool.submit(play, server.base, token, stop, seed)
                for seed, token in enumerate(tokens)
            ]
            for _ in range(kills):
                time.sleep(rng.uniform(0.3, 1.5))
                server.kill()
                time.sleep(rng.uniform(0.0, 0.3))
                server.start()
            time.sleep(1.0)
            stop.set()
            logs = [run.result() for run in runs]
    finally:
        stop.set()
        server.stop()
    elapsed = time.monotonic() - started
    time.sleep(1.1)
    swept = cli(world, "sweep", abandon_seconds=1, inactivity_seconds=1)
    assert swept.returncode == 0, swept.stderr
    reconciled = cli(world, "reconcile")

    acknowledged = {tid: t for log in logs for tid, t in log.acknowledged.items()}
    books = read_books(world)
    lost = sorted(set(acknowledged) - books.ticket_ids)
    balances_ok = [player_balance_matches_tickets(world, player, DEPOSIT) for player in players]
    record(
        f"crash under load [{kind(world)}]",
        kills_survived=kills,
        seconds=round(elapsed, 1),
        purchases_acknowledged=len(acknowledged),
        reveals=sum(log.reveals for log in logs),
        answers_lost_to_a_kill_then_replayed=sum(log.replays_after_crash for log in logs),
        lost=len(lost),
        double_credits=books.double_credits,
        units_sold_twice=books.units_sold_twice,
        stakes_without_ticket=books.stakes_without_ticket,
        reconcile_discrepancies=len(books.reconcile_discrepancies),
        soak=SOAK,
    )
    assert reconciled.returncode == 0, reconciled.stdout
    assert not [r for log in logs for r in log.refusals], "unexpected refusals"
    assert sum(log.given_up for log in logs) == 0
    assert lost == []
    assert books.double_credits == 0
    assert books.units_sold_twice == 0
    assert books.stakes_without_ticket == 0
    assert books.playing == 0
    assert books.reconcile_discrepancies == []
    assert all(balances_ok)
    assert len(acknowledged) > kills
