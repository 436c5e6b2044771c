"""Operators' log-ins that fail and their log-outs are in the audit log, on SQLite and
PostgreSQL: why it failed, the address tried and the client's, never the password; a flood
of failures leaves one intact chain, a bounded number of entries and the lock-out holding."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from grattage.adapters.passwords import HashingSlots
from grattage.entrypoints.http import create_app
from grattage.errors import AccountLocked, Busy, Unauthorized
from grattage.service import audit_trail, operators
from support import PASSWORD, World

from .test_back_office_api import CSRF, OPERATOR, admin_log_in
from .test_concurrency import race

WRONG = "le mauvais mot de passe"


def audited(world: World, action: str) -> list[dict[str, Any]]:
    """The entries of ``action``, oldest first, as the API shows them."""
    entries = audit_trail.latest(world.platform, 1000)
    return [
        {"actor": e.actor, "subject": e.subject, **e.details}
        for e in reversed(entries)
        if e.action == action
    ]


def test_a_failed_operator_log_in_is_audited_with_why_the_address_tried_and_the_client(
    world: World, client: TestClient
) -> None:
    operator_id = operators.create(world.platform, OPERATOR, PASSWORD)
    for email in ("Nobody@Example.org", OPERATOR):
        answer = client.post("/api/admin/sessions", json={"email": email, "password": WRONG})
        assert (answer.status_code, answer.json()["error"]) == (401, "unauthorized")
    assert audited(world, "operator.log_in_failed") == [
        {
            "actor": "anonymous",
            "subject": "operator:unknown",
            "email": "nobody@example.org",
            "reason": "unknown_operator",
            "client": "testclient",
        },
        {
            "actor": "anonymous",
            "subject": f"operator:{operator_id}",
            "email": OPERATOR,
            "reason": "wrong_password",
            "client": "testclient",
        },
    ]
    texts = [entry.details for entry in audit_trail.latest(world.platform, 1000)]
    assert not any(WRONG in str(details) for details in texts)


def test_an_operator_log_out_is_audited_once_in_its_transaction(
    world: World, client: TestClient
) -> None:
    operator_id = operators.create(world.platform, OPERATOR, PASSWORD)
    admin = admin_log_in(client)
    assert client.delete("/api/admin/sessions", headers=admin).status_code == 204
    assert client.delete("/api/admin/sessions", headers=admin).status_code == 401
    assert audited(world, "operator.log_out") == [
        {
            "actor": f"operator:{OPERATOR}",
            "subject": f"operator:{operator_id}",
            "client": "testclient",
        }
    ]
    assert client.get("/api/admin/me", headers=admin).status_code == 401
    response = client.post("/api/admin/sessions", json={"email": OPERATOR, "password": PASSWORD})
    assert client.delete("/api/admin/sessions", headers=CSRF).status_code == 204  # the cookie
    assert response.status_code == 200 and len(audited(world, "operator.log_out")) == 2


def test_a_flood_of_failed_operator_log_ins_keeps_one_chain_and_the_lock_out(
    world: World,
) -> None:
    threshold = world.platform.policy.lockout_threshold
    operators.create(world.platform, OPERATOR, PASSWORD)

    def guess(index: int) -> Any:
        email = OPERATOR if index % 2 else f"stranger{index % 3}@example.org"
        return operators.log_in(world.platform, email, WRONG, client=f"203.0.113.{index}")

    results = race(40, guess)
    assert all(isinstance(result, Unauthorized) for result in results), results
    failed = audited(world, "operator.log_in_failed")
    by_address: dict[str, list[str]] = {}
    for entry in failed:
        by_address.setdefault(entry["email"], []).append(entry["reason"])
    # Per address: its password checks (at most the threshold), then its first refusal once.
    assert {email: sorted(reasons) for email, reasons in by_address.items()} == {
        OPERATOR: sorted(["wrong_password"] * threshold + ["locked_out"]),
        **{
            f"stranger{n}@example.org": sorted(["unknown_operator"] * threshold + ["locked_out"])
            for n in range(3)
        },
    }
    verified = audit_trail.verify(world.platform)
    assert verified.clean, verified.problem
    try:
        operators.log_in(world.platform, OPERATOR, PASSWORD)
    except AccountLocked:
        pass
    else:
        raise AssertionError("the right password opened a locked address")
    assert len(audited(world, "operator.log_in_failed")) == len(failed)  # refused, unrecorded


def test_an_operator_log_in_refused_by_the_rate_limit_is_audited_once_a_minute_per_client(
    world: World,
) -> None:
    operators.create(world.platform, OPERATOR, PASSWORD)
    settings = world.settings.model_copy(update={"log_in_rate_per_client": "2/minute"})
    app = create_app(settings, platform=world.platform, mount_web=False)
    with TestClient(app) as client:
        statuses = [
            client.post(
                "/api/admin/sessions", json={"email": OPERATOR, "password": WRONG}
            ).status_code
            for _ in range(12)
        ]
        refused = client.post("/api/admin/sessions", json={"email": "x", "password": WRONG})
    assert statuses == [401, 401] + [429] * 10 and refused.status_code == 429
    reasons = [entry["reason"] for entry in audited(world, "operator.log_in_failed")]
    # the two password checks, then the first refusal of the minute only: a flood of 429s
    # adds one entry per client and minute, and is not counted toward the lock-out
    assert reasons == ["wrong_password", "wrong_password", "rate_limited"]
    assert audited(world, "operator.log_in_failed")[-1]["email"] == OPERATOR
    assert operators.log_in(world.platform, OPERATOR, PASSWORD).token  # not locked out


def test_an_operator_log_in_refused_for_want_of_a_hashing_slot_is_audited(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    operators.create(world.platform, OPERATOR, PASSWORD)

    @contextlib.asynccontextmanager
    async def no_slot_free(self: HashingSlots) -> AsyncIterator[None]:
        raise Busy("too many password checks at once right now; retry in a moment")
        yield

    monkeypatch.setattr(HashingSlots, "slot", no_slot_free)
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as client:
        for _ in range(3):
            answer = client.post("/api/admin/sessions", json={"email": OPERATOR, "password": WRONG})
            assert (answer.status_code, answer.json()["error"]) == (503, "busy")
    assert [entry["reason"] for entry in audited(world, "operator.log_in_failed")] == ["busy"]
