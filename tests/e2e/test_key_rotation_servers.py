"""``grattage log rotate-key`` while two ``grattage serve`` processes sell (SQLite and
PostgreSQL): both switch to the new key without a restart, every receipt merged after the
``key.change`` is the new key's, ``grattage monitor`` stays clean across it, ``verify-ticket``
accepts a ticket sold before and one sold after — and a receipt re-signed afterwards with the
retired key, in a log rebuilt by its operator, is named by the monitor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from grattage.service import transparency
from grattage.service.emissions import list_blocks
from support import PASSWORD, World

from .conftest import cli_env
from .forger import Operator, grattage
from .test_servers import server

BUYERS = 8
PACE_SECONDS = 0.025
"""Each buyer's pause between purchases: the units last while the rotating command starts."""


def operator_command(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    """An operator's command, on the platform's database and key store."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "grattage"), *args],
        env={**os.environ, **cli_env(world)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def logged_receipts(world: World) -> list[tuple[int, dict[str, Any]]]:
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    listed: list[dict[str, Any]] = []
    while len(listed) < size:
        listed += transparency.entries(world.platform, len(listed), size - 1)
    return [
        (item["index"], item["entry"]["receipt"])
        for item in listed
        if item["entry"]["kind"] == "sale.receipt"
    ]


def test_a_rotation_during_sales_on_two_servers_hands_over_cleanly(
    world: World, tmp_path: Path
) -> None:
    world.stock("cash", blocks=32)  # 1 280 units: sales go on while the command starts
    emails = [f"rot{i}@example.org" for i in range(BUYERS)]
    for email in emails:
        world.player(150 * 500, email=email)
    state = tmp_path / "monitor.json"
    with server(world) as first, server(world) as second:
        tokens = [
            httpx.post(f"{first}/api/sessions", json={"email": e, "password": PASSWORD}).json()[
                "token"
            ]
            for e in emails
        ]
        stop = threading.Event()
        bought: list[list[int]] = [[] for _ in emails]

        def keep_buying(number: int) -> None:
            base = (first, second)[number % 2]
            headers = {"Authorization": f"Bearer {tokens[number]}"}
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                while not stop.is_set() and len(bought[number]) < 150:
                    answer = client.post("/api/games/cash/tickets", json={"mode": "auto"})
                    assert answer.status_code == 201, answer.text
                    bought[number].append(answer.json()["id"])
                    time.sleep(PACE_SECONDS)

        def sold() -> int:
            return sum(map(len, bought))

        with ThreadPoolExecutor(max_workers=BUYERS) as pool:
            running = [pool.submit(keep_buying, number) for number in range(BUYERS)]
            deadline = time.monotonic() + 120
            while sold() < 60 and time.monotonic() < deadline:
                time.sleep(0.05)
            watched = grattage("monitor", first, "--state", state)
            assert watched.returncode == 0, watched.stderr
            rotated = operator_command(world, "log", "rotate-key")
            assert rotated.returncode == 0, rotated.stderr
            at_rotation = sold()
            while sold() < at_rotation + 60 and time.monotonic() < deadline:
                time.sleep(0.05)
            stop.set()
            for future in running:
                future.result()
        assert "key.change at index" in rotated.stdout
        history = httpx.get(f"{second}/api/log/key").json()["keys"]
        assert len(history) == 2
        old, new = history
        change_index = new["change_index"]
        logged = logged_receipts(world)
        assert len(logged) == sold()
        assert {r["key_id"] for i, r in logged if i < change_index} == {old["key_id"]}
        assert {r["key_id"] for i, r in logged if i > change_index} == {new["key_id"]}

        watched = grattage("monitor", second, "--state", state)  # resumes across the change
        assert watched.returncode == 0, watched.stderr
        assert f"the operator key changed at entry {change_index:,}" in watched.stdout
        assert json.loads(state.read_text("utf-8"))["public_key"] == new["public_key"]
        fresh = grattage("monitor", first, "--state", tmp_path / "fresh.json")
        assert fresh.returncode == 0, fresh.stderr

        headers = {"Authorization": f"Bearer {tokens[0]}"}
        for ticket in (bought[0][0], bought[0][-1]):
            proof_file = tmp_path / f"proof-{ticket}.json"
            proof = httpx.get(f"{first}/api/tickets/{ticket}/proof", headers=headers)
            proof_file.write_text(proof.text, "utf-8")
            for pinned in ([], ["--key", new["public_key"]], ["--key", old["public_key"]]):
                checked = grattage("verify-ticket", proof_file, "--log", second, *pinned)
                assert checked.returncode == 0, checked.stderr
                assert "PINNED" in checked.stdout

        # A block committed under the first key, sold across the change, verified after it.
        ended = max(b.id for b in list_blocks(world.platform, "cash") if b.state == "exhausted")
        disclosure_file = tmp_path / "disclosure.json"
        disclosure_file.write_bytes(httpx.get(f"{first}/api/blocks/{ended}/disclosure").content)
        transparency.integrate_all(world.platform)
        for pinned in ([], ["--key", new["public_key"]]):
            checked = grattage("verify-block", disclosure_file, "--log", second, *pinned)
            assert checked.returncode == 0, checked.stderr
        stranger = grattage("verify-block", disclosure_file, "--log", second, "--key", "ab" * 32)
        assert stranger.returncode == 1 and "not in the log's key history" in stranger.stderr

        def resign_a_later_receipt_with_the_retired_key(entries: list[dict[str, Any]]) -> None:
            later = next(i for i, _ in logged if i > change_index)
            genuine = entries[later]["receipt"]
            forged = Operator(world, first).signer.sign_document(
                "receipt", {**genuine, "key_id": old["key_id"]}
            )
            entries[later] = {**entries[later], "receipt": forged}

        Operator(world, first).rewrite_log(
            resign_a_later_receipt_with_the_retired_key, recompute=True
        )
        caught = grattage("monitor", first, "--state", tmp_path / "after-forgery.json")
        assert caught.returncode == 1
        assert "is signed by the retired key" in caught.stderr, caught.stderr
