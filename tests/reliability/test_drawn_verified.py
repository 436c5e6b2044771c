"""The verifiers against real processes (issue 15), on SQLite and PostgreSQL: a witness process
(rounds of 0.2 s), a server of two workers, buyers over HTTP; then, as an outsider does, each in
a process of its own: ``grattage monitor`` (with ``--witness`` for the late draws),
``grattage verify-ticket --log`` on proofs fetched over HTTP, the block closed and its disclosure
published, ``grattage verify-block --log`` replaying every draw — and with ``--draws`` the file
the server serves (a tampered copy refused) — and the monitor again."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import select

from grattage.adapters.draw_tables import draw_queue
from grattage.adapters.witness_client import WitnessClient
from grattage.adapters.witness_port import HttpWitness
from grattage.service.emissions import close_block, list_blocks
from support import World

from .harness import Server, big_table, log_in, server_env
from .test_drawn_crash import Tally, buy_until, witness_for


def grattage(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "grattage"), *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _drained(world: World, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with world.platform.uow.read() as repos:
            left = repos.connection.execute(select(draw_queue.c.ticket_id)).all()  # type: ignore[attr-defined]
        if not left:
            return
        time.sleep(0.2)
    raise AssertionError(f"{len(left)} sales never drawn")


def test_the_outsider_s_commands_accept_a_real_server_s_drawn_block(
    world: World, tmp_path: Path
) -> None:
    with witness_for(world, tmp_path / "witness-process") as (witness, key):
        world.platform.witness = HttpWitness(WitnessClient(witness.url, key))
        world.platform.witness.poll()
        world.stock("cash", table=big_table("cash"))
        email = "verified@example.org"
        world.player(200_000, email=email)
        env = server_env(
            world, witness_url=witness.url, witness_public_key=key.hex(), sweep_interval_seconds=0.2
        )
        server = Server(env, tmp_path / "server.log", workers=2)
        server.start()
        try:
            token = log_in(server.base, email)
            tally, stop = Tally(), threading.Event()
            buyers = [
                threading.Thread(target=buy_until, args=(server.base, token, stop, tally))
                for _ in range(3)
            ]
            for thread in buyers:
                thread.start()
            time.sleep(3)
            stop.set()
            for thread in buyers:
                thread.join(timeout=60)
            assert tally.bought
            _drained(world)
            state = tmp_path / "monitor.json"
            watched = grattage(
                env, "monitor", server.base, "--state", state, "--witness", witness.url
            )
            assert watched.returncode == 0, watched.stderr + server.log()[-2000:]
            headers = {"Authorization": f"Bearer {token}"}
            for ticket_id in (tally.bought[0], tally.bought[-1]):
                answer = httpx.get(f"{server.base}/api/tickets/{ticket_id}/proof", headers=headers)
                assert answer.status_code == 200, answer.text
                proof = tmp_path / f"proof-{ticket_id}.json"
                proof.write_text(answer.text)
                checked = grattage(env, "verify-ticket", proof, "--log", server.base, "--replay")
                assert checked.returncode == 0, checked.stderr
                assert "recomputed" in checked.stdout and "PINNED" in checked.stdout
                assert "sold once: the log's" in checked.stdout
            (block,) = list_blocks(world.platform, "cash")
            close_block(world.platform, block.id)
            disclosure = world.settings.disclosure_dir / f"disclosure-block-{block.id}.json"
            deadline = time.monotonic() + 60
            while not disclosure.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert disclosure.exists(), server.log()[-2000:]
            draws_url = f"{server.base}/api/blocks/{block.id}/draws"
            served = httpx.get(draws_url)
            while served.status_code == 404 and time.monotonic() < deadline:
                time.sleep(0.2)  # written by the sweep, just before the entry binding it
                served = httpx.get(draws_url)
            assert served.status_code == 200, served.text
            time.sleep(1.5)  # its disclosure.published entry merged
            verified = grattage(
                env, "verify-block", disclosure, "--log", server.base, "--witness", witness.url
            )
            assert "NOT CHECKED" not in verified.stdout  # its late draws, if any, checked
            assert verified.returncode == 0, verified.stderr
            assert f"{len(tally.bought):,} draws replayed" in verified.stdout
            fetched = grattage(
                env, "verify-block", disclosure, "--log", server.base, "--draws", draws_url
            )
            assert fetched.returncode == 0, fetched.stderr
            assert "the draws file is the one logged" in fetched.stdout
            tampered = tmp_path / "tampered.gdrw"
            tampered.write_bytes(served.content[:-1] + bytes([served.content[-1] ^ 1]))
            refused = grattage(
                env, "verify-block", disclosure, "--log", server.base, "--draws", tampered
            )
            assert refused.returncode == 1
            assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
            assert "is not the draws_sha256 logged" in refused.stderr
            again = grattage(
                env, "monitor", server.base, "--state", state, "--witness", witness.url
            )
            assert again.returncode == 0, again.stderr
            assert json.loads(state.read_text())["draws"]["blocks"]
        finally:
            server.stop()
