"""Platform benchmark (issue 3): ``auto`` plays against ``grattage serve`` on SQLite.

Each run starts a real server on a fresh SQLite file holding one full 12 000 000-unit Cash
block, logs in 32 players, then drives it with 32 concurrent keep-alive clients:

1. the bare endpoint ``GET /api/health`` of the same app (the baseline of this machine),
2. ``POST /api/games/cash/tickets {"mode": "auto"}``: buy and settle, one transaction each,

and prints plays/s, p50/p99 latency and the ratio plays/s ÷ bare requests/s, then runs
``grattage reconcile``. Targets: ≥ 1 000 plays/s, p99 ≤ 50 ms, ratio ≥ 0.12. The same run is
repeated on PostgreSQL when ``GRATTAGE_BENCH_POSTGRES_URL`` (or ``GRATTAGE_TEST_DATABASE_URL``)
is set, in a schema of its own dropped afterwards. ``GRATTAGE_BENCH_WORKERS`` sets the server's
worker processes (default 2, the cores of the reference machine); SQLite is also measured with
one worker, SQLite's single writer.

The load generator is a minimal asyncio HTTP/1.1 client, so that it takes as little of the
machine's CPU from the server as possible. Run with ``python -m bench.platform``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CLIENTS = 32
BARE_SECONDS = 5.0
PLAY_SECONDS = 10.0
WORKERS = int(os.environ.get("GRATTAGE_BENCH_WORKERS", "2"))
PLAYER_BALANCE_CENTS = 100_000_000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _prepare(env: dict[str, str], open_blocks: int) -> list[tuple[str, str]]:
    """A fresh database with full Cash blocks on sale and 32 players with money."""
    from datetime import date

    from grattage.entrypoints.bootstrap import build_platform
    from grattage.service import accounts
    from grattage.service.emissions import create_emission
    from grattage.settings import Settings

    settings = Settings(
        database_url=env["GRATTAGE_DATABASE_URL"],
        key_dir=Path(env["GRATTAGE_KEY_DIR"]),
        demo_deposit_max_cents=PLAYER_BALANCE_CENTS,
        deposit_limit_default_cents=PLAYER_BALANCE_CENTS,  # bench players play far past the
        deposit_limit_max_cents=PLAYER_BALANCE_CENTS,  # responsible-gaming defaults
        stake_limit_default_cents=PLAYER_BALANCE_CENTS,
        stake_limit_max_cents=PLAYER_BALANCE_CENTS,
        password_time_cost=1,
        password_memory_kib=1024,
    )
    platform = build_platform(settings)
    started = time.perf_counter()
    create_emission(platform, "cash", open_blocks, open_blocks=open_blocks)
    print(
        f"  {open_blocks} × 12 000 000-unit Cash block created and opened in "
        f"{time.perf_counter() - started:.2f} s"
    )
    players = []
    for index in range(CLIENTS):
        email = f"bench{index}@example.org"
        player_id = accounts.register(
            platform,
            email,
            "bench-password",
            date(1980, 1, 1),
            first_name="Banc",
            last_name="Essai" + "".join(chr(ord("a") + int(digit)) for digit in str(index)),
        )
        accounts.deposit(platform, player_id, PLAYER_BALANCE_CENTS)
        players.append((email, "bench-password"))
    platform.uow.close()  # type: ignore[attr-defined]
    return players


class Connection:
    """One keep-alive HTTP/1.1 connection; just enough of the protocol for the benchmark."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    closed = False
    """The server said ``Connection: close``: open another one for the next request."""

    @classmethod
    async def open(
        cls, port: int, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None
    ) -> Connection:
        reader, writer = await asyncio.open_connection(host, port, ssl=tls)
        return cls(reader, writer)

    async def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """The answer's status and body; ``ConnectionError`` if the connection ends first."""
        head = [f"{method} {path} HTTP/1.1", "Host: bench"]
        if token:
            head.append(f"Authorization: Bearer {token}")
        head += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if body:
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection before answering")
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
            elif name.strip().lower() == b"connection" and value.strip().lower() == b"close":
                self.closed = True
        try:
            return status, await self.reader.readexactly(length)
        except asyncio.IncompleteReadError as cut:
            raise ConnectionError("the answer was cut off") from cut

    def close(self) -> None:
        self.writer.close()


async def _drive(
    port: int, method: str, path: str, body: bytes, *, tokens: list[str | None], seconds: float
) -> tuple[list[float], dict[int, int]]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    deadline = time.perf_counter() + seconds

    async def client(token: str | None) -> None:
        connection = await Connection.open(port)
        try:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                status, _ = await connection.request(method, path, body, token)
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            connection.close()

    await asyncio.gather(*(client(token) for token in tokens))
    return latencies, statuses


async def _log_in(port: int, players: list[tuple[str, str]]) -> list[str | None]:
    connection = await Connection.open(port)
    tokens: list[str | None] = []
    for email, password in players:
        body = json.dumps({"email": email, "password": password}).encode()
        status, answer = await connection.request("POST", "/api/sessions", body)
        assert status == 200, answer
        tokens.append(json.loads(answer)["token"])
    connection.close()
    return tokens


def _report(name: str, latencies: list[float], seconds: float) -> float:
    rate = len(latencies) / seconds
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[int(len(ordered) * 0.99) - 1] * 1000
    print(f"  {name:<28} {rate:>8.0f}/s   p50 {p50:6.1f} ms   p99 {p99:6.1f} ms")
    return rate


def _wait_until_up(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("grattage serve exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("grattage serve did not start")


def _run(label: str, database_url: str, folder: str, workers: int, open_blocks: int = 1) -> None:
    """One measurement: a fresh database at ``database_url``, a server, the two loads."""
    blocks = f"{open_blocks} open block{'s' if open_blocks > 1 else ''}"
    print(f"Platform: auto plays against grattage serve on {label} ({workers} workers, "
          f"{CLIENTS} clients, {blocks})")  # fmt: skip
    env = {
        **os.environ,
        "GRATTAGE_DATABASE_URL": database_url,
        "GRATTAGE_KEY_DIR": f"{folder}/keys",
        "GRATTAGE_DISCLOSURE_DIR": f"{folder}/disclosures",
        "GRATTAGE_PASSWORD_TIME_COST": "1",
        "GRATTAGE_PASSWORD_MEMORY_KIB": "1024",
        # the 32 players all log in from this one address: the per-client limit would refuse
        "GRATTAGE_LOG_IN_RATE_PER_CLIENT": "1000/minute",
        "GRATTAGE_STAKE_LIMIT_DEFAULT_CENTS": str(PLAYER_BALANCE_CENTS),
        "GRATTAGE_STAKE_LIMIT_MAX_CENTS": str(PLAYER_BALANCE_CENTS),
    }
    players = _prepare(env, open_blocks)
    port = _free_port()
    grattage = str(Path(sys.executable).parent / "grattage")
    server = subprocess.Popen(
        [grattage, "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_up(port, server)
        tokens = asyncio.run(_log_in(port, players))
        asyncio.run(_drive(port, "GET", "/api/health", b"", tokens=tokens, seconds=1.0))  # warm-up
        bare, _ = asyncio.run(
            _drive(port, "GET", "/api/health", b"", tokens=[None] * CLIENTS, seconds=BARE_SECONDS)
        )
        body = json.dumps({"mode": "auto"}).encode()
        plays, statuses = asyncio.run(
            _drive(
                port, "POST", "/api/games/cash/tickets", body, tokens=tokens, seconds=PLAY_SECONDS
            )
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    bare_rate = _report("bare GET /api/health", bare, BARE_SECONDS)
    play_rate = _report("auto play (buy + settle)", plays, PLAY_SECONDS)
    print(f"  answers: {statuses}")
    ratio = play_rate / bare_rate
    p99 = sorted(plays)[int(len(plays) * 0.99) - 1] * 1000
    print(
        f"  ratio to the bare endpoint: {ratio:.3f}   "
        f"targets: ≥ 1000/s {'met' if play_rate >= 1000 else 'MISSED'}, "
        f"p99 ≤ 50 ms {'met' if p99 <= 50 else 'MISSED'}, "
        f"ratio ≥ 0.12 {'met' if ratio >= 0.12 else 'MISSED'}"
    )
    reconcile = subprocess.run(
        [grattage, "reconcile"], env=env, capture_output=True, text=True, check=False
    )
    print(f"  grattage reconcile: exit {reconcile.returncode}, "
          f"{reconcile.stdout.strip().splitlines()[-1]}")  # fmt: skip


def _postgres_schema_url(base: str, schema: str) -> str:
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}options=-csearch_path%3D{schema}"


@contextmanager
def postgres_schema(prefix: str) -> Iterator[tuple[str, str] | None]:
    """(the server's URL, a new schema on it) for a bench's PostgreSQL half, the schema
    dropped afterwards; None, said in one line, when no server is set."""
    postgres = os.environ.get("GRATTAGE_BENCH_POSTGRES_URL") or os.environ.get(
        "GRATTAGE_TEST_DATABASE_URL"
    )
    if not postgres:
        print("PostgreSQL: skipped (set GRATTAGE_BENCH_POSTGRES_URL to measure it too)")
        yield None
        return
    from sqlalchemy import create_engine, text

    schema = f"{prefix}_{os.getpid()}"
    admin = create_engine(postgres, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield postgres, schema
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        _run("SQLite", f"sqlite:///{folder}/bench.db", folder, WORKERS)
    if WORKERS != 1:
        # SQLite has one writer: a single worker spends no time taking turns with another.
        with tempfile.TemporaryDirectory() as folder:
            print()
            _run("SQLite", f"sqlite:///{folder}/bench.db", folder, 1)
    with postgres_schema("grattage_bench") as found, tempfile.TemporaryDirectory() as folder:
        if found is None:
            return
        postgres, schema = found
        print()
        # On PostgreSQL each block's counter is a row its sales lock until they commit:
        # an operator serving several workers opens several blocks at once.
        _run("PostgreSQL", _postgres_schema_url(postgres, schema), folder, WORKERS, 2)


if __name__ == "__main__":
    main()
