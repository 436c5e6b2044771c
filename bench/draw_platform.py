"""Drawn sales end to end (issue 15): ``auto`` plays against ``grattage serve`` with a real
``grattage witness serve`` beside it, purchase to result.

A witness process (rounds of ``GRATTAGE_BENCH_BEACON_SECONDS``, 1 s by default) and a server
(``GRATTAGE_BENCH_WORKERS``, 2 by default) on a fresh database with one open drawn Cash block
(``GRATTAGE_BENCH_UNITS``, 12 000 000 by default: the block is created with its chain and
tree first, and that time is printed); 32 clients each loop: ``POST /api/games/cash/tickets``
(answered at once, covered) then ``GET /api/tickets/{id}?wait=1`` (answered once drawn). It
prints plays/s, the purchase's own latency, and **purchase to result** p50/p99 against the
target ``BEACON_SECONDS + 250 ms``, how many draws were late (drawn with a later round than
their receipt's), then runs ``grattage reconcile``. SQLite, then PostgreSQL when
``GRATTAGE_BENCH_POSTGRES_URL`` (or ``GRATTAGE_TEST_DATABASE_URL``) is set.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.platform import (
    CLIENTS,
    PLAYER_BALANCE_CENTS,
    Connection,
    _drive,
    _free_port,
    _log_in,
    _postgres_schema_url,
    _wait_until_up,
    postgres_schema,
)

BEACON_SECONDS = float(os.environ.get("GRATTAGE_BENCH_BEACON_SECONDS", "1.0"))
WORKERS = int(os.environ.get("GRATTAGE_BENCH_WORKERS", "2"))
UNITS = int(os.environ.get("GRATTAGE_BENCH_UNITS", "12000000"))
PLAY_SECONDS = float(os.environ.get("GRATTAGE_BENCH_SECONDS", "20"))
GRATTAGE = str(Path(sys.executable).parent / "grattage")


def _witness(folder: str, operator_key: str) -> tuple[subprocess.Popen[bytes], str, str]:
    env = {
        **os.environ,
        "GRATTAGE_WITNESS_DATA_DIR": f"{folder}/witness",
        "GRATTAGE_WITNESS_BEACON_SECONDS": str(BEACON_SECONDS),
        "GRATTAGE_WITNESS_CHAIN_LENGTH": "200000",
        "GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY": operator_key,
    }
    init = subprocess.run(
        [GRATTAGE, "witness", "init"], env=env, capture_output=True, text=True, check=True
    )
    key = init.stdout.split("witness key ")[1].split()[0]
    port = _free_port()
    process = subprocess.Popen(
        [GRATTAGE, "witness", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_until_up(port, process)
    return process, f"http://127.0.0.1:{port}", key


def _prepare(
    env: dict[str, str], units: int = UNITS, clients: int = CLIENTS
) -> list[tuple[str, str]]:
    from datetime import date

    from grattage.entrypoints.bootstrap import build_platform
    from grattage.games import default_table, load_table
    from grattage.service import accounts
    from grattage.service.emissions import create_emission
    from grattage.settings import Settings

    settings = Settings(
        database_url=env["GRATTAGE_DATABASE_URL"],
        key_dir=Path(env["GRATTAGE_KEY_DIR"]),
        witness_url=env["GRATTAGE_WITNESS_URL"],
        witness_public_key=env["GRATTAGE_WITNESS_PUBLIC_KEY"],
        demo_deposit_max_cents=PLAYER_BALANCE_CENTS,
        deposit_limit_default_cents=PLAYER_BALANCE_CENTS,
        deposit_limit_max_cents=PLAYER_BALANCE_CENTS,
        stake_limit_default_cents=PLAYER_BALANCE_CENTS,
        stake_limit_max_cents=PLAYER_BALANCE_CENTS,
        password_time_cost=1,
        password_memory_kib=1024,
    )
    platform = build_platform(settings)
    assert platform.witness is not None
    platform.witness.poll()
    table = default_table("cash")
    if table.block_size != units:
        text = (Path(__file__).parent.parent / "tests/fixtures/tiny_cash.toml").read_text()
        lines = []
        for line in text.splitlines():
            name, sep, value = line.partition(" = ")
            big = sep and name in {"block_size", "count"}
            lines.append(f"{name} = {round(int(value) * units / 40)}" if big else line)
        table = load_table("cash", "\n".join(lines) + "\n", "bench.toml")
    started = time.perf_counter()
    create_emission(platform, "cash", 1, table=table)
    print(
        f"  a drawn block of {table.block_size:,} units created (shuffle, chain, tree) in "
        f"{time.perf_counter() - started:.1f} s"
    )
    players = []
    for index in range(clients):
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


async def _play(port: int, tokens: list[str | None], seconds: float) -> dict[str, list[float]]:
    """Every client buys in a loop; every fourth one also waits for each of its tickets'
    result (``?wait=1``) before buying again: the purchase-to-result sample, under the load of
    the others."""
    figures: dict[str, list[float]] = {"buy": [], "result": []}
    statuses: dict[int, int] = {}
    deadline = time.perf_counter() + seconds
    body = json.dumps({"mode": "auto"}).encode()

    async def client(token: str | None, waits: bool) -> None:
        connection = await Connection.open(port)
        try:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                status, answer = await connection.request(
                    "POST", "/api/games/cash/tickets", body, token
                )
                statuses[status] = statuses.get(status, 0) + 1
                if status != 201:
                    await asyncio.sleep(0.05)
                    continue
                figures["buy"].append(time.perf_counter() - started)
                ticket = json.loads(answer)
                while waits and ticket["state"] == "covered":
                    _, answer = await connection.request(
                        "GET", f"/api/tickets/{ticket['id']}?wait=1", token=token
                    )
                    ticket = json.loads(answer)
                if waits:
                    figures["result"].append(time.perf_counter() - started)
        finally:
            connection.close()

    await asyncio.gather(*(client(token, index % 4 == 0) for index, token in enumerate(tokens)))
    print(f"  answers to purchases: {statuses}")
    return figures


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] * 1000, ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000


def _run(label: str, database_url: str, folder: str) -> None:
    print(
        f"Drawn sales: auto plays on {label} ({WORKERS} workers, {CLIENTS} clients, "
        f"rounds of {BEACON_SECONDS} s); load {os.getloadavg()[0]:.1f}"
    )
    env = {
        **os.environ,
        "GRATTAGE_DATABASE_URL": database_url,
        "GRATTAGE_KEY_DIR": f"{folder}/keys",
        "GRATTAGE_DISCLOSURE_DIR": f"{folder}/disclosures",
        "GRATTAGE_PASSWORD_TIME_COST": "1",
        "GRATTAGE_PASSWORD_MEMORY_KIB": "1024",
        "GRATTAGE_STAKE_LIMIT_DEFAULT_CENTS": str(PLAYER_BALANCE_CENTS),
        "GRATTAGE_STAKE_LIMIT_MAX_CENTS": str(PLAYER_BALANCE_CENTS),
        "GRATTAGE_LOG_IN_RATE_PER_CLIENT": "1000/minute",
    }
    from grattage.adapters.keystore import FileKeyStore
    from grattage.blocks.signing import Signer

    operator = Signer(FileKeyStore(Path(f"{folder}/keys")).operator_key()).public_key.hex()
    witness, url, key = _witness(folder, operator)
    env |= {"GRATTAGE_WITNESS_URL": url, "GRATTAGE_WITNESS_PUBLIC_KEY": key}
    try:
        players = _prepare(env)
        port = _free_port()
        server = subprocess.Popen(
            [GRATTAGE, "serve", "--port", str(port), "--workers", str(WORKERS)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until_up(port, server)
            tokens = asyncio.run(_log_in(port, players))
            time.sleep(2 * BEACON_SECONDS)  # every worker has polled the witness
            bare, _ = asyncio.run(
                _drive(port, "GET", "/api/health", b"", tokens=[None] * CLIENTS, seconds=5.0)
            )
            bare_rate = len(bare) / 5.0
            figures = asyncio.run(_play(port, tokens, PLAY_SECONDS))
            _drained(env)
        finally:
            server.terminate()
            server.wait(timeout=30)
    finally:
        witness.terminate()
        witness.wait(timeout=30)
    rate = len(figures["buy"]) / PLAY_SECONDS
    print(f"  bare GET /api/health {bare_rate:.0f}/s: plays are {rate / bare_rate:.3f} of it")
    buy50, buy99 = _percentiles(figures["buy"])
    res50, res99 = _percentiles(figures["result"])
    target = BEACON_SECONDS * 1000 + 250
    print(
        f"  plays/s {rate:.0f} (purchases answered)   purchase p50 {buy50:.1f} ms "
        f"p99 {buy99:.1f} ms"
    )
    print(
        f"  purchase to result p50 {res50:.0f} ms p99 {res99:.0f} ms   target p99 ≤ "
        f"{target:.0f} ms: {'met' if res99 <= target else 'MISSED'}; load "
        f"{os.getloadavg()[0]:.1f}"
    )
    _late(env)
    reconcile = subprocess.run(
        [GRATTAGE, "reconcile"], env=env, capture_output=True, text=True, check=False
    )
    print(f"  grattage reconcile: exit {reconcile.returncode}, "
          f"{reconcile.stdout.strip().splitlines()[-1]}")  # fmt: skip


def _drained(env: dict[str, str]) -> None:
    """How long after the load the drawer still draws (its backlog)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(env["GRATTAGE_DATABASE_URL"])
    started = time.perf_counter()
    waiting = -1
    while time.perf_counter() - started < 120:
        with engine.connect() as connection:
            waiting = connection.execute(text("SELECT COUNT(*) FROM draw_queue")).scalar_one()
        if not waiting:
            break
        time.sleep(0.1)
    engine.dispose()
    print(f"  the drawer's backlog drawn {time.perf_counter() - started:.1f} s after the load"
          f" ({waiting} left)")  # fmt: skip


def _late(env: dict[str, str]) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(env["GRATTAGE_DATABASE_URL"])
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT kind, body FROM log_entries WHERE kind IN ('sale.receipt','sale.drawn')")
        ).all()
    engine.dispose()
    receipts = {}
    late = drawn = 0
    for kind, body in rows:
        entry = json.loads(body)
        if kind == "sale.receipt":
            receipts[entry["receipt"]["sequence"]] = entry["receipt"]["beacon"]
    for kind, body in rows:
        entry = json.loads(body)
        if kind == "sale.drawn":
            drawn += 1
            late += entry["beacon"] != receipts.get(entry["sequence"])
    print(f"  draws logged {drawn}, late (drawn with a later round than their receipt's) {late}")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        _run("SQLite", f"sqlite:///{folder}/bench.db", folder)
    with postgres_schema("grattage_bench") as found, tempfile.TemporaryDirectory() as folder:
        if found is None:
            return
        postgres, schema = found
        print()
        _run("PostgreSQL", _postgres_schema_url(postgres, schema), folder)


if __name__ == "__main__":
    main()
