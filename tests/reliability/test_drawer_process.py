"""``grattage draw`` as a process of its own (docs/draw.md, "The draw in the platform"), on
SQLite and PostgreSQL, with a real witness process (rounds of 2 s): sales queued in this
process are drawn by drawer subprocesses — one alone; two at once, the lease letting one
lead; one SIGKILLed mid-way and a new one resuming at the first undrawn index; one started
while the witness is down, which waits and says so in one line, drawing nothing without a
round. Afterwards every sale is drawn exactly once, in index order, each unit once, and both
``grattage reconcile`` and ``grattage monitor`` find nothing to say. A bad setting is one
line and exit 2."""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from grattage.adapters.draw_tables import block_draws, draw_lease, draw_queue
from grattage.adapters.witness_client import WitnessClient
from grattage.adapters.witness_port import HttpWitness
from grattage.errors import NotFound
from grattage.service import tickets, transparency
from support import DrawerAlwaysRunning, World

from .harness import GRATTAGE, Server, big_table, cli, server_env, witness_for

BEACON_SECONDS = 2.0
"""Rounds of 2 s: the monitor owes a sale its draw within 10 rounds (and 10 s) of its round —
20 s, room for the witness's outage below on a loaded machine."""
READY = "grattage draw: drawing the sales of"


@dataclass
class DrawerProcess:
    """One ``grattage draw``, its stdout and stderr kept in a file."""

    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None)

    def start(self) -> DrawerProcess:
        """Started, and ready: it said what it draws, and with which witness."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [GRATTAGE, "draw"], env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 60
        while READY not in self.log():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"grattage draw did not start: {self.log()}")
            time.sleep(0.05)
        return self

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        return self.process.returncode

    def log(self) -> str:
        return self.log_path.read_text("utf-8", errors="replace")

    def holder(self) -> str:
        """The name it takes the lease under, from its line at start."""
        return self.log().split(READY, 1)[1].split("(holder ", 1)[1].split(")", 1)[0]


def queue_sales(world: World, player: int, count: int) -> None:
    """``count`` sales of the drawn block, each waiting for its draw."""
    witness = world.platform.witness
    assert isinstance(witness, HttpWitness)
    for _ in range(count):
        witness.poll()  # as a server's drawer thread keeps its health fresh
        view, _ = tickets.buy(world.platform, player, game_name="cash", mode="auto")
        assert view.state == "covered"


def first_round(witness: HttpWitness) -> None:
    """Wait for the witness's first round (one period after its chain starts)."""
    deadline = time.monotonic() + 10 * BEACON_SECONDS
    while True:
        try:
            witness.poll()
            return
        except NotFound:  # no round published yet
            if time.monotonic() > deadline:
                raise
            time.sleep(BEACON_SECONDS / 10)


def waiting(world: World) -> list[int]:
    """The indexes of the sales still waiting for their draw."""
    with world.platform.uow.read() as repos:
        rows = repos.connection.execute(select(draw_queue.c.sequence))  # type: ignore[attr-defined]
        return sorted(int(sequence) for (sequence,) in rows)


def lease_holder(world: World) -> str:
    with world.platform.uow.read() as repos:
        rows = repos.connection.execute(select(draw_lease.c.holder))  # type: ignore[attr-defined]
        return str(rows.scalar_one())


def drawn_count(world: World) -> int:
    with world.platform.uow.read() as repos:
        rows = repos.connection.execute(select(block_draws.c.drawn))  # type: ignore[attr-defined]
        return sum(int(drawn) for (drawn,) in rows)


def wait_until_drawn(world: World, drawers: list[DrawerProcess], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while waiting(world):
        if time.monotonic() > deadline:
            logs = "\n".join(drawer.log()[-2000:] for drawer in drawers)
            raise AssertionError(f"{len(waiting(world))} sales never drawn:\n{logs}")
        time.sleep(0.1)


def logged_draws(world: World) -> tuple[list[dict[str, object]], int]:
    """The log's ``sale.drawn`` entries, in log order, and how many receipts it holds."""
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    entries = []
    for start in range(0, size, 1000):
        entries += transparency.entries(world.platform, start, min(size, start + 1000) - 1)
    drawn = [row["entry"] for row in entries if row["entry"]["kind"] == "sale.drawn"]
    receipts = sum(row["entry"]["kind"] == "sale.receipt" for row in entries)
    return drawn, receipts


def test_drawer_processes_draw_every_sale_once_in_order_through_leases_kills_and_outages(
    world: World, tmp_path: Path
) -> None:
    with witness_for(world, tmp_path / "witness", BEACON_SECONDS) as (witness, key):
        world.platform.witness = HttpWitness(WitnessClient(witness.url, key))
        # The test queues the sales itself, drawer or none: the rule that a sale needs a live
        # drawer (test_drawer_liveness.py) would refuse step 1's, whose point is that sales
        # left waiting (by a drawer that died after taking them) are drawn by the next one.
        world.platform.drawer_seen = DrawerAlwaysRunning()
        first_round(world.platform.witness)
        world.stock("cash", table=big_table("cash"))  # drawn: its commitment names the witness
        player = world.player(10_000_000)
        env = server_env(world, witness_url=witness.url, witness_public_key=key.hex())
        logs = tmp_path / "drawers"
        logs.mkdir()
        started: list[DrawerProcess] = []

        def drawer() -> DrawerProcess:
            started.append(DrawerProcess(env, logs / f"draw-{len(started)}.log").start())
            return started[-1]

        try:
            # 1. Sales queued with no drawer at all: one started later draws them.
            queue_sales(world, player, 20)
            alone = drawer()
            wait_until_drawn(world, started)
            assert alone.stop() == 0

            # 2. Two drawers at once, sales made while both run: the lease lets one lead.
            pair = [drawer(), drawer()]
            holders = {one.holder() for one in pair}
            deadline = time.monotonic() + 30
            while lease_holder(world) not in holders:  # the stopped one's lease runs out (3 s)
                assert time.monotonic() < deadline, "neither drawer took the lease"
                time.sleep(0.1)
            leaders = set()
            for _ in range(4):
                queue_sales(world, player, 10)
                leaders.add(lease_holder(world))
                time.sleep(BEACON_SECONDS / 4)
            wait_until_drawn(world, started)
            leaders.add(lease_holder(world))
            assert len(leaders) == 1 and leaders <= holders, leaders  # one led throughout
            assert [one.stop() for one in pair] == [0, 0]

            # 3. A drawer SIGKILLed in the middle of a round's draws; a new one resumes.
            queue_sales(world, player, 400)
            before = drawn_count(world)
            victim = drawer()
            deadline = time.monotonic() + 60
            while drawn_count(world) == before and time.monotonic() < deadline:
                time.sleep(0.005)
            victim.kill()
            left = waiting(world)
            assert 0 < len(left) < 400, "the kill came before or after the draws, not amid"
            assert left == list(range(left[0], left[0] + len(left)))  # a suffix: no gap
            assert left[0] == drawn_count(world)  # the cursor is at the first undrawn index
            drawer()
            wait_until_drawn(world, started)
            assert started[-1].stop() == 0

            # 4. The witness down: a drawer waits, says so once, draws nothing without a round.
            queue_sales(world, player, 10)
            witness.stop()
            patient = drawer()
            time.sleep(2)
            assert len(waiting(world)) == 10
            assert patient.process is not None and patient.process.poll() is None
            said = patient.log()
            outage = said.split(READY, 1)[1].splitlines()[1:]  # after its line at start
            assert len(outage) == 1, said
            assert f"the witness at {witness.url} cannot be reached" in outage[0], said
            assert "waiting for it (no sale is drawn without its round)" in outage[0], said
            witness.start()
            wait_until_drawn(world, started)
            assert patient.stop() == 0
        finally:
            for process in started:
                if process.process is not None and process.process.poll() is None:
                    process.kill()
        for process in started:
            assert "Traceback" not in process.log(), process.log()

        drawn, receipts = logged_draws(world)
        assert receipts == 20 + 40 + 400 + 10
        assert [entry["sequence"] for entry in drawn] == list(range(receipts))
        assert len({entry["unit"] for entry in drawn}) == receipts
        assert drawn_count(world) == receipts and not waiting(world)

        reconciled = cli(world, "reconcile")
        assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
        server = Server(server_env(world, run_drawer=0), tmp_path / "server.log")
        server.start()
        try:
            state = str(tmp_path / "monitor.json")
            monitor = [GRATTAGE, "monitor", "check", server.base, "--state", state]
            monitored = subprocess.run(
                [*monitor, "--witness", witness.url, "--draw-margin-ms", "100"],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
        finally:
            server.stop()
        assert monitored.returncode == 0, monitored.stdout + monitored.stderr


def test_grattage_draw_with_a_bad_setting_says_one_line_and_exits_2(world: World) -> None:
    for settings in (
        {"database_url": "nonsense"},
        {"database_url": "postgresql+psycopg://grattage@127.0.0.1:port/grattage"},
        {"run_drawer": "maybe"},
        {"witness_url": "http://127.0.0.1:9", "witness_public_key": "zz"},
        {},  # no witness: nothing to draw with
    ):
        ran = cli(world, "draw", **settings)
        assert ran.returncode == 2, (settings, ran.stderr)
        assert ran.stderr.count("\n") == 1 and ran.stderr.startswith("grattage: error: "), (
            settings,
            ran.stderr,
        )
        assert ran.stdout == ""
