"""Scenario 7, access: lock-out (also under concurrent guessing), tampered and expired
credentials, other players' tickets, proofs and history, cross-site writes, security headers,
and no secret in the logs of a real server."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from grattage.entrypoints.http import create_app
from support import PASSWORD, World

from .harness import kind, record, running_server

CSRF = {"X-Grattage-CSRF": "1"}


@pytest.fixture
def client(world: World) -> Iterator[TestClient]:
    app = create_app(world.settings, platform=world.platform, mount_web=True)
    with TestClient(app) as test_client:
        yield test_client


def _login(client: TestClient, email: str, password: str = PASSWORD) -> httpx.Response:
    return client.post("/api/sessions", json={"email": email, "password": password})


def _token(client: TestClient, email: str) -> dict[str, str]:
    response = _login(client, email)
    assert response.status_code == 200, response.text
    client.cookies.clear()
    return {"Authorization": f"Bearer {response.json()['token']}"}


def test_failed_log_ins_lock_the_account_even_when_guessed_concurrently(
    client: TestClient, world: World
) -> None:
    threshold = world.platform.policy.lockout_threshold
    world.player(email="guessed@example.org")
    start = threading.Barrier(20)

    def guess(index: int) -> int:
        start.wait()
        return _login(client, "guessed@example.org", f"wrong-guess-{index}").status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        guesses = Counter(pool.map(guess, range(20)))
    assert set(guesses) == {401}
    locked = _login(client, "guessed@example.org")  # the right password, too late
    assert (locked.status_code, locked.json()["error"]) == (401, "account_locked")
    world.clock.advance(world.platform.policy.lockout_seconds + 1)
    assert _login(client, "guessed@example.org").status_code == 200
    for _ in range(threshold):
        wrong = _login(client, "guessed@example.org", "still wrong!")
        assert wrong.status_code == 401
    assert wrong.json()["error"] == "account_locked"
    record(
        f"access: lock-out [{kind(world)}]",
        concurrent_guesses=20,
        threshold=threshold,
        locked_after_concurrent_guesses=True,
    )


def test_tampered_expired_and_ended_credentials_are_refused(
    client: TestClient, world: World
) -> None:
    world.player(email="holder@example.org")
    token = _login(client, "holder@example.org").json()["token"]
    client.cookies.clear()
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    refused = 0
    for bad in (
        flipped,
        token + "x",
        token[:-4],
        "",
        "null",
        "' OR 1=1 --",
        "A" * 43,
        "../../etc/passwd",
    ):
        for headers, cookies in (
            ({"Authorization": f"Bearer {bad}"}, {}),
            ({}, {"grattage_session": bad}),
        ):
            client.cookies.clear()
            client.cookies.update(cookies)
            answer = client.get("/api/me", headers=headers)
            assert answer.status_code == 401, (bad, answer.text)
            refused += 1
    client.cookies.clear()
    assert client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert client.get("/api/me", headers={"Authorization": f"Basic {token}"}).status_code == 401
    world.clock.advance(world.platform.policy.session_idle_seconds + 1)
    expired = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert expired.status_code == 401 and "expired" in expired.json()["message"]
    client.cookies.update({"grattage_session": token})
    assert client.get("/api/me").status_code == 401
    client.cookies.clear()
    fresh = _token(client, "holder@example.org")
    assert client.delete("/api/sessions", headers=fresh).status_code == 204
    assert client.get("/api/me", headers=fresh).status_code == 401
    record(f"access: bad credentials [{kind(world)}]", refused=refused + 3, accepted=0)


def test_another_players_ticket_proof_and_history_are_not_found(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    world.player(5000, email="alice@example.org")
    world.player(5000, email="bob@example.org")
    alice, bob = _token(client, "alice@example.org"), _token(client, "bob@example.org")
    playing = client.post("/api/games/cash/tickets", json={"mode": "play"}, headers=alice).json()
    finished = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=alice).json()
    assert client.get(f"/api/tickets/{finished['id']}/proof", headers=alice).status_code == 200
    probes = [
        ("GET", f"/api/tickets/{playing['id']}", None),
        ("GET", f"/api/tickets/{finished['id']}", None),
        ("GET", f"/api/tickets/{finished['id']}/proof", None),
        ("POST", f"/api/tickets/{playing['id']}/reveal", {"all": True}),
        ("POST", f"/api/tickets/{playing['id']}/reveal", {"zones": ["your_numbers/0"]}),
        ("POST", f"/api/tickets/{playing['id']}/activity", None),
    ]
    for method, path, body in probes:
        answer = client.request(method, path, json=body, headers=bob)
        assert answer.status_code == 404, (path, answer.text)
        missing = client.request(method, path.replace(str(playing["id"]), "999999"), json=body)
        assert missing.status_code in (401, 404)
    assert client.get("/api/me/tickets/last", headers=bob).status_code == 404
    history = client.get(
        "/api/me/tickets", params={"before": finished["id"] + 1}, headers=bob
    ).json()
    assert history == {"tickets": [], "next": None}
    still = client.get(f"/api/tickets/{playing['id']}", headers=alice).json()
    assert still["state"] == "playing" and still["revealed"] == {}
    record(f"access: other players' tickets [{kind(world)}]", probes=len(probes) + 2, leaked=0)


def test_cookie_writes_need_the_csrf_header(client: TestClient, world: World) -> None:
    world.stock("cash")
    world.player(5000, email="browser@example.org")
    assert _login(client, "browser@example.org").status_code == 200  # the cookie is set
    bought = client.post("/api/games/cash/tickets", json={"mode": "play"}, headers=CSRF).json()
    writes = [
        ("POST", "/api/games/cash/tickets", {"mode": "auto"}),
        ("POST", f"/api/tickets/{bought['id']}/reveal", {"all": True}),
        ("POST", f"/api/tickets/{bought['id']}/activity", None),
        ("POST", "/api/me/deposits", {"amount_cents": 100}),
        ("DELETE", "/api/sessions", None),
    ]
    balance = client.get("/api/me").json()["balance_cents"]
    for method, path, body in writes:
        for headers in ({}, {"X-Grattage-CSRF": "0"}, {"Origin": "https://evil.example"}):
            answer = client.request(method, path, json=body, headers=headers)
            assert answer.status_code == 403, (method, path, headers, answer.text)
    assert client.get("/api/me").json()["balance_cents"] == balance
    assert client.get(f"/api/tickets/{bought['id']}").json()["state"] == "playing"
    assert client.delete("/api/sessions", headers=CSRF).status_code == 204
    record(f"access: cross-site writes [{kind(world)}]", refused=len(writes) * 3, accepted=0)


def test_every_answer_carries_the_security_headers(client: TestClient, world: World) -> None:
    world.player(email="headers@example.org")
    auth = _token(client, "headers@example.org")
    answers = {
        "/api/me": client.get("/api/me", headers=auth),
        "/api/me (401)": client.get("/api/me"),
        "/api/nowhere (404)": client.get("/api/nowhere"),
        "/api/players (422)": client.post("/api/players", json={}),
        "/api/games": client.get("/api/games"),
        "/": client.get("/"),
        "/cash": client.get("/cash"),
        "/js/api.js": client.get("/js/api.js"),
    }
    for name, answer in answers.items():
        headers = answer.headers
        policy = headers.get("content-security-policy", "")
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, name
        assert "http" not in policy, (name, policy)  # no external origin
        assert headers.get("x-content-type-options") == "nosniff", name
        assert headers.get("x-frame-options") == "DENY", name
        assert headers.get("referrer-policy") == "no-referrer", name
        if name.startswith("/api"):
            assert headers.get("cache-control") == "no-store", name
    login = _login(client, "headers@example.org")
    cookie = login.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    record(f"access: security headers [{kind(world)}]", answers_checked=len(answers))


def test_no_secret_reaches_the_logs(
    world: World, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real server logs at INFO to a file; the app also runs in-process with every logger
    at DEBUG. Neither may contain a password, a session token or a block key."""
    world.stock("cash")
    email, other = "logged@example.org", "guessed-logs@example.org"
    secrets_seen: list[str] = [PASSWORD, "a-wrong-password-123"]
    with running_server(world, tmp_path) as server:
        base = server.base
        created = httpx.post(
            f"{base}/api/players",
            json={
                "email": other,
                "password": "another secret 42",
                "first_name": "Other",
                "last_name": "Guessed",
                "birth_date": "1990-01-01",
            },
        )
        assert created.status_code == 201
        secrets_seen.append("another secret 42")
        world.player(5000, email=email)
        for _ in range(6):
            httpx.post(
                f"{base}/api/sessions", json={"email": email, "password": "a-wrong-password-123"}
            )
        login = httpx.post(f"{base}/api/sessions", json={"email": other, "password": "x" * 3})
        assert login.status_code == 401
        token = httpx.post(
            f"{base}/api/sessions", json={"email": other, "password": "another secret 42"}
        ).json()["token"]
        secrets_seen.append(token)
        headers = {"Authorization": f"Bearer {token}"}
        httpx.post(f"{base}/api/me/deposits", json={"amount_cents": 1000}, headers=headers)
        httpx.post(f"{base}/api/games/cash/tickets", json={"mode": "auto"}, headers=headers)
        httpx.get(f"{base}/api/me", headers={"Authorization": f"Bearer {token}x"})
        server_log = server.log()
    caplog.set_level(logging.DEBUG)
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as client:
        in_process = client.post(
            "/api/sessions", json={"email": other, "password": "another secret 42"}
        )
        secrets_seen.append(in_process.json()["token"])
        client.post("/api/sessions", json={"email": other, "password": "a-wrong-password-123"})
        client.get("/api/me", headers={"Authorization": f"Bearer {in_process.json()['token']}"})
    keys = [path.read_bytes() for path in world.settings.key_dir.iterdir() if path.is_file()]
    key_texts = [k.hex() for k in keys] + [k.decode("latin-1") for k in keys]
    logs = server_log + "\n" + caplog.text
    leaked = [s for s in secrets_seen if s in logs] + [k for k in key_texts if k and k in logs]
    record(
        f"access: secrets in logs [{kind(world)}]",
        log_bytes=len(logs),
        secrets_searched=len(secrets_seen) + len(keys),
        leaked=len(leaked),
    )
    assert leaked == []
