"""A real `grattage witness serve` process on loopback: its beacon over time, cosigning a
growing operator log, a restart that continues the same chain and remembers what it cosigned."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from grattage.adapters.witness_client import WitnessClient
from grattage.blocks.beacon import BeaconRound, check_round
from grattage.blocks.signing import Signer, TreeHead
from grattage.errors import InconsistentHead, RoundClosed, Unavailable, VerificationFailed
from operator_log import OperatorLog

GRATTAGE = str(Path(sys.executable).parent / "grattage")
PERIOD_SECONDS = 0.2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def witness_env(data_dir: Path, operator: OperatorLog) -> dict[str, str]:
    return {
        **os.environ,
        "GRATTAGE_WITNESS_DATA_DIR": str(data_dir),
        "GRATTAGE_WITNESS_BEACON_SECONDS": str(PERIOD_SECONDS),
        "GRATTAGE_WITNESS_CHAIN_LENGTH": "20000",
        "GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY": operator.signer.public_key.hex(),
    }


@contextmanager
def witness_server(env: dict[str, str], port: int) -> Iterator[str]:
    process = subprocess.Popen(
        [GRATTAGE, "witness", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/witness/key").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("grattage witness serve did not start")
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


def cosign_next(client: WitnessClient, operator: OperatorLog, head: TreeHead) -> int:
    """Cosign ``head`` for the next round not yet published (as a sale would); its round."""
    last = client.last_cosigned_head()
    proof = operator.consistency(last.tree_size, head.tree_size) if last else []
    for _attempt in range(5):  # a loaded machine may let the next round pass meanwhile
        target = client.latest().round + 1
        try:
            client.cosign(head, target, proof)
        except RoundClosed:
            continue
        return target
    raise AssertionError("no round stayed open long enough to cosign")


@pytest.fixture
def operator() -> OperatorLog:
    return OperatorLog()


def test_the_witness_beacons_cosigns_and_after_a_restart_continues_its_chain(
    tmp_path: Path, operator: OperatorLog
) -> None:
    env = witness_env(tmp_path / "witness", operator)
    init = subprocess.run(
        [GRATTAGE, "witness", "init"], env=env, capture_output=True, text=True, check=False
    )
    assert init.returncode == 0, init.stderr
    key_file = (tmp_path / "witness" / "witness-ed25519.key").read_bytes()
    witness_key = Signer(key_file).public_key
    assert f"witness key {witness_key.hex()}" in init.stdout
    assert os.stat(tmp_path / "witness" / "witness-ed25519.key").st_mode & 0o077 == 0
    port = free_port()

    with witness_server(env, port) as base:
        assert httpx.get(f"{base}/witness/key").json()["public_key"] == witness_key.hex()
        client = WitnessClient(base, witness_key)
        chain = client.chain()
        # The beacon over time: each round hashes down to the round before it.
        time.sleep(max(0.0, chain.start_ms / 1000 - time.time()) + 0.01)
        rounds: list[BeaconRound] = [client.latest()]
        while len(rounds) < 8:
            following = client.round(rounds[-1].round + 1, wait=True)
            received_ms = time.time() * 1000
            assert following.time_ms <= received_ms + 5  # never before its time
            check_round(
                _document(base, following.round), chain, witness_key, (rounds[-1].round,
                rounds[-1].value),
            )  # fmt: skip
            rounds.append(following)
        assert [r.round for r in rounds] == list(range(rounds[0].round, rounds[0].round + 8))
        assert httpx.get(f"{base}/witness/rounds/{rounds[-1].round + 1000}").status_code == 404

        # Cosigning a growing log, each head for the next round not yet published.
        cosigned_sizes = []
        for _ in range(5):
            operator.append(7)
            head = operator.head()
            target = cosign_next(client, operator, head)
            cosigned_sizes.append(head.tree_size)
            heads = httpx.get(f"{base}/witness/cosigned", params={"round": target}).json()
            assert head.to_json() in [entry["sth"] for entry in heads["heads"]]
        latest = client.latest()
        with pytest.raises(RoundClosed):
            client.cosign(operator.head(), latest.round, [])
        rewritten = OperatorLog(operator.signer, history="rewritten")
        rewritten.append(operator.frontier.size + 1)
        with pytest.raises(InconsistentHead):
            client.cosign(
                rewritten.head(), latest.round + 2, rewritten.consistency(operator.frontier.size)
            )
        # a bad body answers 422, never 500
        answer = httpx.post(f"{base}/witness/cosign", json={"sth": {}, "round": "x"})
        assert answer.status_code == 422 and answer.json()["error"] == "invalid_input"
        answer = httpx.post(f"{base}/witness/cosign", content=b"\xff\xfe")
        assert answer.status_code == 422
        last_before = rounds[-1]

    with pytest.raises(Unavailable):
        client.latest()

    with witness_server(env, port) as base:
        again = WitnessClient(base, witness_key)
        assert again.chain() == chain
        latest = again.latest()
        assert latest.round > last_before.round
        check_round(
            _document(base, latest.round), chain, witness_key, (last_before.round,
            last_before.value),
        )  # fmt: skip
        remembered = again.last_cosigned_head()
        assert remembered is not None and remembered.tree_size == cosigned_sizes[-1]
        smaller = OperatorLog(operator.signer)
        smaller.append(3)
        with pytest.raises(InconsistentHead):
            again.cosign(smaller.head(), again.latest().round + 2, [])
        operator.append(2)
        cosign_next(again, operator, operator.head())
        assert again.last_cosigned_head() == TreeHead.from_json(
            httpx.get(f"{base}/witness/cosigned/last").json()["sth"]
        )

    # A witness key other than the one pinned: every document is refused.
    with witness_server(env, port) as base:
        impostor = WitnessClient(base, Signer(Signer.new_private_key()).public_key)
        with pytest.raises(VerificationFailed):
            impostor.chain()


def _document(base: str, round_number: int) -> dict:
    answer = httpx.get(f"{base}/witness/rounds/{round_number}")
    assert answer.status_code == 200
    return answer.json()


def test_witness_serve_without_an_operator_key_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "GRATTAGE_WITNESS_DATA_DIR": str(tmp_path)}
    env.pop("GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY", None)
    done = subprocess.run(
        [GRATTAGE, "witness", "serve"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "OPERATOR_PUBLIC_KEY" in done.stderr
    env["GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY"] = "nothex"
    done = subprocess.run(
        [GRATTAGE, "witness", "serve"], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr


def test_witness_init_twice_is_refused(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GRATTAGE_WITNESS_DATA_DIR": str(tmp_path),
        "GRATTAGE_WITNESS_CHAIN_LENGTH": "10",
    }
    assert (
        subprocess.run(
            [GRATTAGE, "witness", "init"], env=env, capture_output=True, check=False
        ).returncode
        == 0
    )
    again = subprocess.run(
        [GRATTAGE, "witness", "init"], env=env, capture_output=True, text=True, check=False
    )
    assert again.returncode == 3 and "already initialised" in again.stderr


def test_a_witness_started_by_a_demo_dies_with_it_even_by_sigkill(
    tmp_path: Path, operator: OperatorLog
) -> None:
    """An outsider's finding: a SIGTERMed `grattage demo` left its witness running on its
    port (uvicorn re-raises the signal after its shutdown: no finally runs), and the next demo
    silently used that stale witness. The demo's witness is now told whom not to outlive."""
    import signal

    env = witness_env(tmp_path / "witness", operator)
    init = subprocess.run([GRATTAGE, "witness", "init"], env=env, capture_output=True, check=False)
    assert init.returncode == 0
    port = free_port()
    parent = subprocess.Popen(  # stands for the demo: it starts the witness as the demo does
        [
            sys.executable,
            "-c",
            "import os, subprocess, sys, time\n"
            "from grattage.entrypoints.cli.beside import BESIDE_MASTER_VARIABLE\n"
            f"child = subprocess.Popen([{GRATTAGE!r}, 'witness', 'serve', '--port', '{port}'],"
            " env={**os.environ, BESIDE_MASTER_VARIABLE: str(os.getpid())},"
            " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(120)\n",
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    witness_pid = int(parent.stdout.readline())
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/witness/key").status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the witness did not start"
        time.sleep(0.05)
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(witness_pid, 0)
        except ProcessLookupError:
            break
        try:
            with open(f"/proc/{witness_pid}/stat") as stat:  # a zombie is gone too
                if stat.read().split(") ", 1)[1].startswith("Z"):
                    break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        os.kill(witness_pid, signal.SIGKILL)
        raise AssertionError("the witness outlived the process that started it")
