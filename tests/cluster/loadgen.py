"""The cluster's load generator, run on its own host (``python loadgen.py CONFIG OUT``): it
talks to the balancer only, over TLS, with bench/platform.py's minimal HTTP/1.1 client.
It stops after ``seconds``, or earlier once the file ``stop_file`` exists.

Each client is one player buying Cash ``auto`` tickets in a loop, each purchase with an
Idempotency-Key of its own, for ``seconds``. An answer lost on the way (the connection cut,
502 or 504 from the balancer) is retried with the **same key** until answered, as a player's
page does; a 503 is a refusal (nothing recorded, docs/api.md): the next purchase takes a new
key. Afterwards every purchase that needed a retry, and a sample of the others, is sent once
more with its key: the answer must be the same ticket. The figures go to OUT as JSON.
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/, as ``python -m bench``

from bench.platform import Connection

LOST = (None, 502, 504)
"""No answer, or the balancer's: the purchase may or may not have been made."""
PURCHASE = "/api/games/cash/tickets"


class Client:
    def __init__(self, config: dict[str, Any], tls: ssl.SSLContext, tally: dict[str, Any]) -> None:
        self.config, self.tls, self.tally = config, tls, tally
        self.connection: Connection | None = None
        self.token: str | None = None

    async def send(
        self, method: str, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int | None, bytes]:
        try:
            if self.connection is None:
                self.connection = await Connection.open(
                    self.config["port"], self.config["host"], self.tls
                )
            status, answer = await self.connection.request(method, path, body, self.token, headers)
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError):
            self.drop()
            self.tally["transport_errors"] += 1
            return None, b""
        if self.connection.closed:
            self.drop()
        return status, answer

    def drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    async def log_in(self, email: str) -> None:
        body = json.dumps({"email": email, "password": self.config["password"]}).encode()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status, answer = await self.send("POST", "/api/sessions", body)
            if status == 200:
                self.token = json.loads(answer)["token"]
                return
            await asyncio.sleep(0.2)
        raise RuntimeError(f"{email} could not log in")

    async def buy(
        self, key: str, stop_retrying_at: float
    ) -> tuple[int | None, dict[str, Any], int]:
        """The purchase under ``key``, retried while its answer is lost: its last answer, and
        how many times it was sent."""
        body = b'{"mode": "auto"}'
        sent = 0
        uncertain = False
        while True:
            sent += 1
            began = time.monotonic()
            status, answer = await self.send("POST", PURCHASE, body, {"Idempotency-Key": key})
            self.tally["events"].append([time.time(), status, time.monotonic() - began])
            # A 503 outcome_unknown (the link died during COMMIT) may have been kept: like a
            # lost answer, it is retried with the same key, which tells.
            unknown = status == 503 and b'"outcome_unknown"' in (answer or b"")
            uncertain = uncertain or unknown or status in LOST
            # Once a try's outcome was unknown (or its answer lost), a later plain 503 only says that *that* retry
            # was refused, not whether the first was kept: only an answer other than 503 tells.
            settled = status not in LOST and not unknown and not (uncertain and status == 503)
            if settled or time.monotonic() > stop_retrying_at:
                try:
                    return status, json.loads(answer) if answer else {}, sent
                except json.JSONDecodeError:
                    return status, {"raw": answer[:200].decode(errors="replace")}, sent
            self.tally["retries"] += 1
            await asyncio.sleep(0.05)


async def player(
    config: dict[str, Any], email: str, tls: ssl.SSLContext, tally: dict[str, Any]
) -> None:
    client = Client(config, tls, tally)
    await client.log_in(email)
    started = time.monotonic()
    deadline = started + config["seconds"]
    stop_file = Path(config["stop_file"])
    while time.monotonic() < deadline and not stop_file.exists():
        key = str(uuid.uuid4())
        first = time.monotonic()
        status, answer, sent = await client.buy(key, deadline + config["retry_seconds"])
        done = time.monotonic()
        if status in (200, 201):
            tally["acknowledged"].append(
                {"key": key, "ticket": answer["id"], "email": email, "token": client.token,
                 "seconds": done - first, "at": time.time(),
                 "retried": sent > 1}
            )  # fmt: skip
        elif status == 503:
            tally["refused_503"].append(key)
            await asyncio.sleep(0.05)
        elif status in LOST:
            tally["unresolved"].append(key)
        else:
            tally["other_answers"].append([status, answer])
    client.drop()


async def replay(config: dict[str, Any], tls: ssl.SSLContext, tally: dict[str, Any]) -> None:
    """Each retried purchase and a sample of the others, sent again with its key."""
    acknowledged = tally["acknowledged"]
    chosen = [entry for entry in acknowledged if entry["retried"]]
    others = [entry for entry in acknowledged if not entry["retried"]]
    chosen += random.sample(others, min(len(others), config["replay_sample"]))
    client = Client(config, tls, {**tally, "events": [], "transport_errors": 0, "retries": 0})
    for entry in chosen:
        client.token = entry["token"]
        status, answer, _ = await client.buy(entry["key"], time.monotonic() + 30)
        tally["replayed"] += 1
        if status != 200 or answer.get("id") != entry["ticket"]:
            tally["replay_mismatches"].append([entry["key"], entry["ticket"], status, answer])
    client.drop()


async def main(config: dict[str, Any]) -> dict[str, Any]:
    tls = ssl.create_default_context(cafile=config["cafile"])
    tally: dict[str, Any] = {
        "acknowledged": [], "refused_503": [], "unresolved": [], "other_answers": [],
        "events": [], "transport_errors": 0, "retries": 0, "replayed": 0,
        "replay_mismatches": [], "started_at": time.time(),
    }  # fmt: skip
    await asyncio.gather(*(player(config, email, tls, tally) for email in config["emails"]))
    tally["ended_at"] = time.time()
    tally["cpu_seconds"] = time.process_time()  # the load generator's own share of the cores
    await replay(config, tls, tally)
    return tally


if __name__ == "__main__":
    settings = json.loads(Path(sys.argv[1]).read_text())
    figures = asyncio.run(main(settings))
    for entry in figures["acknowledged"]:
        entry.pop("token")
    Path(sys.argv[2]).write_text(json.dumps(figures))
