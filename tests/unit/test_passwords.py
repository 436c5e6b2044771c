"""Bounded hashing: a process runs at most ``at_once`` argon2 computations; the others wait
briefly for a slot, then are refused with Busy (503)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from grattage.adapters.passwords import Argon2Passwords
from grattage.entrypoints.cli import exit_code_for
from grattage.entrypoints.http.errors import status_for
from grattage.errors import Busy


class SlowHasher:
    """Stands in for argon2: each computation takes ``seconds``; counts how many run at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.running = 0
        self.most = 0
        self._lock = threading.Lock()

    def _run(self) -> None:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(self.seconds)
        with self._lock:
            self.running -= 1

    def hash(self, password: str) -> str:
        self._run()
        return "hash"

    def verify(self, password_hash: str, password: str) -> bool:
        self._run()
        return True


def bounded(
    at_once: int, wait_seconds: float, seconds: float
) -> tuple[Argon2Passwords, SlowHasher]:
    passwords = Argon2Passwords(1, 8, at_once=at_once, wait_seconds=wait_seconds)
    slow = SlowHasher(seconds)
    passwords._hasher = slow  # type: ignore[assignment]
    return passwords, slow


def outcomes(passwords: Argon2Passwords, count: int) -> list[str]:
    def check(_: int) -> str:
        try:
            passwords.verify("hash", "password")
        except Busy:
            return "busy"
        return "checked"

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(check, range(count)))


def test_at_most_at_once_computations_run_at_the_same_time() -> None:
    passwords, slow = bounded(at_once=2, wait_seconds=5, seconds=0.05)
    assert outcomes(passwords, 20) == ["checked"] * 20
    assert slow.most == 2


def test_a_check_that_finds_no_slot_within_the_wait_is_refused_busy() -> None:
    passwords, slow = bounded(at_once=1, wait_seconds=0.05, seconds=0.5)
    found = outcomes(passwords, 6)
    assert found.count("checked") == 1
    assert found.count("busy") == 5
    assert slow.most == 1


def test_busy_answers_503_with_a_retry_after_and_exits_5() -> None:
    error = Busy("busy")
    assert (status_for(error), exit_code_for(error)) == (503, 5)
    passwords, _ = bounded(at_once=1, wait_seconds=0, seconds=0)
    with pytest.raises(Busy) as refused:
        passwords._slots.acquire()
        try:
            passwords.hash("password")
        finally:
            passwords._slots.release()
    assert refused.value.retry_after_seconds == 1


def test_a_real_argon2_hash_still_verifies_through_the_bound() -> None:
    passwords = Argon2Passwords(1, 1024, at_once=1, wait_seconds=1)
    hashed = passwords.hash("a password")
    assert passwords.verify(hashed, "a password")
    assert not passwords.verify(hashed, "another")
    assert not passwords.verify("not a hash", "a password")
