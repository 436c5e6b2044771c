"""What the reliability scenarios share: the soak switch, figures, real server processes, and
checks of the books straight from the database."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from grattage.adapters.tables import movements, tickets
from grattage.blocks.signing import Signer
from grattage.games import PrizeTable, load_table
from grattage.service.reconcile import Discrepancy, reconcile
from support import FIXTURES, NO_RATE_LIMITS, PASSWORD, World

GRATTAGE = str(Path(sys.executable).parent / "grattage")
SOAK = os.environ.get("GRATTAGE_SOAK") == "1"
FIGURES_FILE = Path("test-artifacts") / "reliability-figures.jsonl"
FIGURES: list[dict[str, Any]] = []


def kind(world: World) -> str:
    return "sqlite" if world.settings.database_url.startswith("sqlite") else "postgres"


def scaled(short: int, soak: int) -> int:
    """``soak`` under ``make soak`` (GRATTAGE_SOAK=1), else ``short``."""
    return soak if SOAK else short


def record(scenario: str, **figures: Any) -> None:
    """Print a scenario's figures (shown at the end of the run) and keep them in a file."""
    entry = {"scenario": scenario, "soak": SOAK, **figures}
    FIGURES.append(entry)
    FIGURES_FILE.parent.mkdir(parents=True, exist_ok=True)
    with FIGURES_FILE.open("a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")
    print(f"RELIABILITY {scenario}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def big_table_text(game: str, scale: int = 100, *, on_sale: bool = False) -> str:
    """The TOML of the tiny test table of ``game`` scaled up (same odds); ``on_sale``: the one
    an operator uploads (its price said, its payout under 100 %, as the back office requires)."""
    tiny = (
        FIXTURES / "tables" / f"tiny_{game}_on_sale.toml"
        if on_sale
        else FIXTURES / f"tiny_{game}.toml"
    )
    text = tiny.read_text("utf-8")
    lines = []
    for line in text.splitlines():
        name, sep, value = line.partition(" = ")
        scaled_up = sep and name in {"block_size", "count"}
        lines.append(f"{name} = {int(value) * scale}" if scaled_up else line)
    return "\n".join(lines) + "\n"


def big_table(game: str, scale: int = 100) -> PrizeTable:
    """The tiny test table of ``game`` scaled up (same odds), so load does not sell out."""
    return load_table(game, big_table_text(game, scale), f"big_{game}.toml")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PLAY_WITHOUT_LIMITS = {
    "deposit_limit_default_cents": 10**12,
    "deposit_limit_max_cents": 10**12,
    "stake_limit_default_cents": 10**12,
    "stake_limit_max_cents": 10**12,
}
"""The load scenarios' players buy far past responsible-gaming defaults; limits at the edge
have a scenario of their own."""


def server_env(world: World, **settings: object) -> dict[str, str]:
    env = {
        **os.environ,
        "GRATTAGE_DATABASE_URL": world.settings.database_url,
        "GRATTAGE_KEY_DIR": str(world.settings.key_dir),
        "GRATTAGE_DISCLOSURE_DIR": str(world.settings.disclosure_dir),
        "GRATTAGE_PASSWORD_TIME_COST": "1",
        "GRATTAGE_PASSWORD_MEMORY_KIB": "1024",
        **{f"GRATTAGE_{k.upper()}": str(v) for k, v in PLAY_WITHOUT_LIMITS.items()},
        **{f"GRATTAGE_{k.upper()}": str(v) for k, v in NO_RATE_LIMITS.items()},
    }
    env.update({f"GRATTAGE_{k.upper()}": str(v) for k, v in settings.items()})
    return env


def cli(world: World, *args: str, **settings: object) -> subprocess.CompletedProcess[str]:
    """Run ``grattage ARGS`` against the world's database."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "grattage"), *args],
        env=server_env(world, **settings),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@dataclass
class Server:
    """One ``grattage serve`` process (one worker unless told: SIGKILL kills the server
    itself)."""

    env: dict[str, str]
    log_path: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    workers: int = 1

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> None:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "grattage"),
                "serve",
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
            ],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        self.starts += 1
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{self.base}/api/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"grattage serve did not start: {self.log_path.read_text()}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, no goodbye."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)

    def log(self) -> str:
        return self.log_path.read_text("utf-8", errors="replace")


@contextmanager
def running_server(world: World, log_dir: Path, **settings: object) -> Iterator[Server]:
    server = Server(server_env(world, **settings), log_dir / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def log_in(base: str, email: str) -> str:
    response = httpx.post(
        f"{base}/api/sessions", json={"email": email, "password": PASSWORD}, timeout=30
    )
    assert response.status_code == 200, response.text
    return str(response.json()["token"])


@dataclass
class Books:
    """Facts read straight from the database after a scenario."""

    reconcile_discrepancies: list[Discrepancy]
    ticket_ids: set[int]
    units_sold_twice: int
    double_credits: int
    stakes_without_ticket: int
    playing: int


def read_books(world: World) -> Books:
    report = reconcile(world.platform)
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        ids = set(db.execute(select(tickets.c.id)).scalars())
        twice = db.execute(
            select(func.count()).select_from(
                select(tickets.c.block_id, tickets.c.position)
                .group_by(tickets.c.block_id, tickets.c.position)
                .having(func.count() > 1)
                .subquery()
            )
        ).scalar_one()
        doubles = db.execute(
            select(func.count()).select_from(
                select(movements.c.ticket_id)
                .where(movements.c.kind == "prize")
                .group_by(movements.c.ticket_id)
                .having(func.count() > 1)
                .subquery()
            )
        ).scalar_one()
        orphans = db.execute(
            select(func.count())
            .select_from(movements)
            .where(
                movements.c.kind == "stake",
                (movements.c.ticket_id.is_(None))
                | (movements.c.ticket_id.not_in(select(tickets.c.id))),
            )
        ).scalar_one()
        playing = db.execute(
            select(func.count()).select_from(tickets).where(tickets.c.state == "playing")
        ).scalar_one()
    return Books(
        reconcile_discrepancies=report.discrepancies,
        ticket_ids=ids,
        units_sold_twice=int(twice),
        double_credits=int(doubles),
        stakes_without_ticket=int(orphans),
        playing=int(playing),
    )


def player_balance_matches_tickets(world: World, player_id: int, deposited: int) -> bool:
    """balance == deposits − Σ stakes + Σ prizes of finished tickets: each stake has its
    ticket and each finished win was credited exactly once."""
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        rows = db.execute(
            select(tickets.c.stake_cents, tickets.c.prize_cents, tickets.c.state).where(
                tickets.c.player_id == player_id
            )
        ).all()
    owed = sum(r.prize_cents for r in rows if r.state == "finished")
    expected = deposited - sum(r.stake_cents for r in rows) + owed
    return world.balance(player_id) == expected


@dataclass
class Witness:
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [GRATTAGE, "witness", "serve", "--port", str(self.port)],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/witness/key", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("grattage witness serve did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)


@contextmanager
def witness_for(
    world: World, directory: Path, beacon_seconds: float = 0.1
) -> Iterator[tuple[Witness, bytes]]:
    """A real ``grattage witness serve`` pinning the world's operator key, and its key."""
    env = {
        **os.environ,
        "GRATTAGE_WITNESS_DATA_DIR": str(directory),
        "GRATTAGE_WITNESS_BEACON_SECONDS": str(beacon_seconds),
        "GRATTAGE_WITNESS_CHAIN_LENGTH": "100000",
        "GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY": world.platform.signer().public_key.hex(),
    }
    subprocess.run([GRATTAGE, "witness", "init"], env=env, check=True, capture_output=True)
    key = Signer((directory / "witness-ed25519.key").read_bytes()).public_key
    witness = Witness(env)
    witness.start()
    try:
        yield witness, key
    finally:
        witness.stop()


def child_of_serve(server: Server, command: str) -> int | None:
    """The pid of the ``grattage <command>`` child of ``serve`` (its drawer, ``draw``, or its
    sequencer, ``sequence``), if one runs."""
    assert server.process is not None
    # -ww: never cut the command line at 80 columns (ps's width when piped), which cut the
    # command off the end in a clone at a longer path (CI's)
    listed = subprocess.run(
        ["ps", "-ww", "--ppid", str(server.process.pid), "-o", "pid=,args="],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    for line in listed.splitlines():
        pid, _, args = line.strip().partition(" ")
        if args.split()[-1:] == [command]:
            return int(pid)
    return None


def wait_for(condition: Callable[[], object], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
