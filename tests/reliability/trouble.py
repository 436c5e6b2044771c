"""Tools to make a database misbehave under a running server: a TCP proxy that can cut
PostgreSQL off, a tmpfs that can fill up or turn read-only, and a purchasing load."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx


class TcpProxy:
    """127.0.0.1:<port> → upstream; ``cut()`` drops every connection and refuses new ones."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.down = False
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down:
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, server))
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, target):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()
            with self._lock:
                self._sockets.discard(source)
                self._sockets.discard(target)

    def cut(self) -> None:
        self.down = True
        with self._lock:
            alive = list(self._sockets)
        for end in alive:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def restore(self) -> None:
        self.down = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        self.listener.close()


@contextmanager
def tmpfs(directory: Path, size: str = "64m") -> Iterator[Path]:
    """A small tmpfs mounted at ``directory`` (root only); unmounted afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        import pytest

        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield directory
    finally:
        for _ in range(50):
            if subprocess.run(["umount", str(directory)], check=False).returncode == 0:
                break
            time.sleep(0.1)


def fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` to the last byte; the filler's path."""
    filler = directory / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            chunk = b"\0" * size
            with contextlib.suppress(OSError):
                while os.write(descriptor, chunk):
                    pass
    finally:
        os.close(descriptor)
    return filler


@dataclass
class LoadLog:
    statuses: Counter[int] = field(default_factory=Counter)
    acknowledged: dict[int, dict[str, Any]] = field(default_factory=dict)
    refused_keys: list[str] = field(default_factory=list)
    unclear_503: list[str] = field(default_factory=list)
    outcome_unknown_keys: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    last_success: float = 0.0


class PurchaseLoad:
    """Clients buying in a loop (new Idempotency-Key each time), recording every answer."""

    def __init__(self, base: str, tokens: list[str]) -> None:
        self.base = base
        self.tokens = tokens
        self.stop = threading.Event()
        self.log = LoadLog()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, args=(token, seed), daemon=True)
            for seed, token in enumerate(tokens)
        ]

    def __enter__(self) -> PurchaseLoad:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def successes(self) -> int:
        with self._lock:
            return self.log.statuses[201]

    def _run(self, token: str, seed: int) -> None:
        rng = random.Random(seed)
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=self.base, headers=headers, timeout=15) as client:
            while not self.stop.is_set():
                key = str(uuid.uuid4())
                mode = rng.choice(("play", "auto"))
                try:
                    response = client.post(
                        "/api/games/cash/tickets",
                        json={"mode": mode},
                        headers={"Idempotency-Key": key},
                    )
                except httpx.TransportError as error:
                    with self._lock:
                        self.log.unexpected.append(f"{type(error).__name__}: {error}")
                    continue
                with self._lock:
                    self.log.statuses[response.status_code] += 1
                    if response.status_code == 201:
                        self.log.acknowledged[response.json()["id"]] = response.json()
                        self.log.last_success = time.monotonic()
                    elif response.status_code == 503:
                        body = response.json()
                        if body.get("error") == "outcome_unknown" and body.get("message"):
                            # Its COMMIT's connection died: it may have been kept, so it is
                            # not a refusal (a retry with the key would tell).
                            self.log.outcome_unknown_keys.append(key)
                        else:
                            if body.get("error") != "unavailable" or not body.get("message"):
                                self.log.unclear_503.append(response.text)
                            self.log.refused_keys.append(key)
                    else:
                        self.log.unexpected.append(f"{response.status_code} {response.text}")
                if response.status_code == 503:
                    time.sleep(0.02)


def wait_for_sales(load: PurchaseLoad, more: int, within: float) -> float:
    """Seconds until ``more`` further purchases succeed (asserts it happens ``within``)."""
    started = time.monotonic()
    target = load.successes() + more
    while load.successes() < target:
        if time.monotonic() - started > within:
            raise AssertionError(f"sales did not resume within {within} s: {load.log.statuses}")
        time.sleep(0.02)
    return time.monotonic() - started


def wait_for_refusals(load: PurchaseLoad, more: int, within: float) -> None:
    started = time.monotonic()
    with load._lock:
        target = load.log.statuses[503] + more
    while True:
        with load._lock:
            if load.log.statuses[503] >= target:
                return
        if time.monotonic() - started > within:
            raise AssertionError(f"no 503 within {within} s: {load.log.statuses}")
        time.sleep(0.02)
