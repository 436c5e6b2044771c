"""Drawn sales under trouble (issue 15), on SQLite and PostgreSQL: a real witness process
(rounds of 0.1 s) and a real server of two workers; many buyers on one block; the witness
stopped and restarted; the server SIGKILLed between sales and their draw, then restarted.

Afterwards: every sale drawn exactly once, in index order, each unit once; every purchase
refused with 503 while the witness was away debited nothing; the books reconcile.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import select

from grattage.adapters.draw_tables import draw_queue
from grattage.adapters.tables import tickets
from grattage.adapters.witness_client import WitnessClient
from grattage.adapters.witness_port import HttpWitness
from grattage.service import transparency
from support import World

from .harness import (
    Server,
    big_table,
    log_in,
    read_books,
    record,
    scaled,
    server_env,
    witness_for,
)

BEACON_SECONDS = 0.1
BUYERS = 6


@dataclass
class Tally:
    bought: list[int] = field(default_factory=list)
    unavailable: int = 0
    transport_errors: int = 0


def buy_until(base: str, token: str, stop: threading.Event, tally: Tally) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        while not stop.is_set():
            key = str(uuid.uuid4())
            try:
                answer = client.post(
                    "/api/games/cash/tickets",
                    json={"mode": "auto"},
                    headers={"Idempotency-Key": key},
                )
            except httpx.TransportError:
                tally.transport_errors += 1
                time.sleep(0.05)
                continue
            if answer.status_code == 503:
                tally.unavailable += 1
                time.sleep(0.05)
                continue
            assert answer.status_code in (200, 201), answer.text
            tally.bought.append(int(answer.json()["id"]))


def test_drawn_sales_survive_a_witness_restart_and_a_server_killed_before_their_draw(
    world: World, tmp_path: Path
) -> None:
    with witness_for(world, tmp_path / "witness-process") as (witness, key):
        world.platform.witness = HttpWitness(WitnessClient(witness.url, key))
        world.platform.witness.poll()
        world.stock("cash", table=big_table("cash"))  # a drawn block: the commitment names key
        deposit = 1_000_000
        emails = [f"drawn{number}@example.org" for number in range(BUYERS)]
        for email in emails:
            world.player(deposit, email=email)
        env = server_env(
            world, witness_url=witness.url, witness_public_key=key.hex(), sweep_interval_seconds=0.2
        )
        server = Server(env, tmp_path / "server.log", workers=2)
        server.start()
        tokens = [log_in(server.base, email) for email in emails]
        tally = Tally()
        stop = threading.Event()
        buyers = [
            threading.Thread(target=buy_until, args=(server.base, token, stop, tally))
            for token in tokens
        ]
        for thread in buyers:
            thread.start()
        try:
            time.sleep(scaled(2, 20))
            witness.stop()  # sales stop (503), what was sold waits
            time.sleep(1.0)
            refused_while_away = tally.unavailable
            witness.start()
            time.sleep(scaled(2, 20))
            server.kill()  # sales committed, their draw not done: covered tickets left
            with world.platform.uow.read() as repos:
                waiting_at_kill = repos.connection.execute(  # type: ignore[attr-defined]
                    select(draw_queue.c.ticket_id)
                ).all()
            server.start()
            time.sleep(scaled(2, 20))
        finally:
            stop.set()
            for thread in buyers:
                thread.join(timeout=60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with world.platform.uow.read() as repos:
                left = repos.connection.execute(select(draw_queue.c.ticket_id)).all()  # type: ignore[attr-defined]
            if not left:
                break
            time.sleep(0.2)
        server.stop()
        assert not left, f"{len(left)} sales never drawn:\n{server.log()[-3000:]}"
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    entries = []
    for start in range(0, size, 1000):
        entries += transparency.entries(world.platform, start, min(size, start + 1000) - 1)
    drawn = [row["entry"] for row in entries if row["entry"]["kind"] == "sale.drawn"]
    receipts = [row["entry"] for row in entries if row["entry"]["kind"] == "sale.receipt"]
    assert [draw["sequence"] for draw in drawn] == list(range(len(receipts)))
    assert len({draw["unit"] for draw in drawn}) == len(drawn)
    late = sum(
        draw["beacon"] != receipt["receipt"]["beacon"]
        for draw, receipt in zip(drawn, receipts, strict=True)
    )
    with world.platform.uow.read() as repos:
        states = Counter(
            repos.connection.execute(select(tickets.c.state)).scalars()  # type: ignore[attr-defined]
        )
    assert set(states) == {"finished"}
    assert set(tally.bought) <= {int(ticket) for ticket in range(1, len(receipts) + 1)}
    books = read_books(world)
    assert books.reconcile_discrepancies == []
    assert refused_while_away > 0 and waiting_at_kill is not None
    record(
        "drawn sales with a witness restart and a SIGKILL",
        database=world.settings.database_url.split(":")[0],
        sales=len(receipts),
        late_draws=late,
        refused_503=tally.unavailable,
        waiting_at_kill=len(waiting_at_kill),
        transport_errors=tally.transport_errors,
    )
