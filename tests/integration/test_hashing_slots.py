"""A log-in waiting for a password-check slot holds none of the request threads: the other
requests of the process are served while a crowd of log-ins waits (issue 13 follow-up)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient

from grattage.adapters.passwords import Argon2Passwords
from grattage.entrypoints.http import create_app
from support import PASSWORD, World

WAITING_LOG_INS = 60  # more than the 40 threads FastAPI serves every sync route from


def test_log_ins_waiting_for_a_password_check_slot_hold_no_request_thread(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = world.settings.model_copy(
        update={
            "password_checks_at_once": 1,
            "password_wait_seconds": 5.0,
            "log_in_rate_per_client": "10000/minute",
            "log_in_rate_overall": "10000/minute",
        }
    )
    world.player(0, email="ana@example.org")
    app = create_app(settings, platform=world.platform, mount_web=False)
    hasher = world.platform.passwords
    assert isinstance(hasher, Argon2Passwords)
    release = threading.Event()
    real = hasher._hasher

    class HeldHasher:
        """The one check in progress waits for the test: every other log-in waits for a slot."""

        def hash(self, password: str) -> str:
            return real.hash(password)

        def verify(self, *args: Any) -> bool:
            release.wait(30)
            return real.verify(*args)

    with TestClient(app) as client:
        login = {"email": "ana@example.org", "password": PASSWORD}
        token = client.post("/api/sessions", json=login).json()["token"]
        monkeypatch.setattr(hasher, "_hasher", HeldHasher())
        log_in_answered: list[float] = []

        def log_in(i: int) -> int:
            body = {"email": f"nobody{i}@example.org", "password": PASSWORD}
            status = client.post("/api/sessions", json=body).status_code
            log_in_answered.append(time.monotonic())
            return status

        with ThreadPoolExecutor(WAITING_LOG_INS) as pool:
            statuses = [pool.submit(log_in, i) for i in range(WAITING_LOG_INS)]
            time.sleep(1.0)  # every log-in is in: one checking, the others waiting
            me = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
            me_answered = time.monotonic()
            release.set()
            answers = {future.result() for future in statuses}
    assert me.status_code == 200
    # served while every log-in still waited: none of them held the thread it needed
    assert me_answered < min(log_in_answered)
    assert answers <= {401, 503}
