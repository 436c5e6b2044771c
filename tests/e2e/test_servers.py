"""Real `grattage serve` processes: two of them sell from one PostgreSQL block."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from grattage.service.emissions import list_blocks
from support import PASSWORD, World, make_world

from .conftest import cli_env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(world: World, workers: int = 1) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        **cli_env(world),
        "GRATTAGE_PASSWORD_TIME_COST": "1",
        "GRATTAGE_PASSWORD_MEMORY_KIB": "1024",
    }
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "grattage"), "serve", "--port", str(port),
         "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90  # PostgreSQL start-up on a loaded 2-core machine
        while True:
            try:
                if httpx.get(f"{base}/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("grattage serve did not start")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.fixture
def pg_world(tmp_path: Path) -> Iterator[World]:
    with make_world("postgres", tmp_path, drawn=False) as built:  # served by processes
        yield built


@pytest.mark.postgres
def test_two_server_processes_selling_from_one_block_never_sell_a_unit_twice(
    pg_world: World,
) -> None:
    world = pg_world
    world.stock("cash", blocks=2)
    units = sum(block.size for block in list_blocks(world.platform, "cash"))
    players = [world.player(units * 500, email=f"p{i}@example.org") for i in range(8)]
    with server(world) as first, server(world) as second:
        tokens = [
            httpx.post(
                f"{first}/api/sessions", json={"email": f"p{i}@example.org", "password": PASSWORD}
            ).json()["token"]
            for i in range(len(players))
        ]

        def buy_until_sold_out(index: int) -> list[dict]:
            base = (first, second)[index % 2]
            headers = {"Authorization": f"Bearer {tokens[index % len(tokens)]}"}
            bought = []
            with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
                while True:
                    response = client.post("/api/games/cash/tickets", json={"mode": "auto"})
                    if response.status_code == 409:
                        assert response.json()["error"] == "sold_out", response.text
                        return bought
                    assert response.status_code == 201, response.text
                    bought.append(response.json())

        with ThreadPoolExecutor(max_workers=16) as pool:
            sold = [ticket for batch in pool.map(buy_until_sold_out, range(16)) for ticket in batch]
    units_sold = {(t["document"]["block"], t["document"]["position"]) for t in sold}
    assert len(sold) == len(units_sold) == units
    assert all(block.state == "exhausted" for block in list_blocks(world.platform, "cash"))
