"""Every client mistake is a 4xx in the one error shape; never a 500."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from support import PASSWORD, World

CSRF = {"X-Grattage-CSRF": "1"}

BAD_REQUESTS = [
    ("POST", "/api/players", b"not json"),
    ("POST", "/api/players", b"[]"),
    ("POST", "/api/players", b'{"email": "a@b.fr", "password": "x", "birth_date": "1990-13-45"}'),
    ("POST", "/api/players", b'{"email": 5, "password": null, "birth_date": 1990}'),
    (
        "POST",
        "/api/players",
        b'{"email": "nope", "password": "long enough", "birth_date": "1990-01-01"}',
    ),
    (
        "POST",
        "/api/players",
        b'{"email": "a@b.fr", "password": "short", "birth_date": "1990-01-01"}',
    ),
    ("POST", "/api/sessions", b'{"email": "a@b.fr"}'),
    ("POST", "/api/sessions", b'{"email": "\\u0000", "password": "\\ud800"}'),
    ("POST", "/api/me/deposits", b'{"amount_cents": 1e400}'),
    ("POST", "/api/me/deposits", b'{"amount_cents": 99999999999999999999999999}'),
    ("POST", "/api/games/cash/tickets", b'{"mode": "auto", "extra": 1}'),
    ("POST", "/api/games/cash/tickets", b'{"mode": ["auto"]}'),
    ("POST", "/api/games/%00/tickets", b'{"mode": "auto"}'),
    ("POST", "/api/games/" + b"x".decode() * 100 + "/tickets", b'{"mode": "auto"}'),
    ("POST", "/api/tickets/0/reveal", b'{"all": true}'),
    ("POST", "/api/tickets/99999999999999999999/reveal", b'{"all": true}'),
    ("POST", "/api/tickets/abc/reveal", b'{"all": true}'),
    ("GET", "/api/tickets/-1", b""),
    ("GET", "/api/me/tickets?limit=0", b""),
    ("GET", "/api/me/tickets?limit=1000", b""),
    ("GET", "/api/me/tickets?before=99999999999999999999", b""),
    ("GET", "/api/nowhere", b""),
    ("PUT", "/api/me", b""),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_REQUESTS)
def test_a_bad_request_is_a_4xx_with_an_error_code_and_a_message(
    client: TestClient, world: World, method: str, path: str, body: bytes
) -> None:
    world.stock("cash")
    world.player(5000, email="fuzz@example.org")
    token = client.post(
        "/api/sessions", json={"email": "fuzz@example.org", "password": PASSWORD}
    ).json()["token"]
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    response = client.request(method, path, content=body, headers=headers)
    assert 400 <= response.status_code < 500, response.text
    assert set(response.json()) == {"error", "message"}


def test_an_idempotency_key_too_long_is_invalid_input(client: TestClient, world: World) -> None:
    world.stock("cash")
    world.player(5000, email="key@example.org")
    client.post("/api/sessions", json={"email": "key@example.org", "password": PASSWORD})
    response = client.post(
        "/api/games/cash/tickets",
        json={"mode": "auto"},
        headers={**CSRF, "Idempotency-Key": "k" * 300},
    )
    assert (response.status_code, response.json()["error"]) == (422, "invalid_input")


def test_the_api_without_credentials_answers_401(client: TestClient) -> None:
    for method, path in [("GET", "/api/me"), ("POST", "/api/games/cash/tickets")]:
        response = client.request(method, path, json={"mode": "auto"})
        assert (response.status_code, response.json()["error"]) == (401, "unauthorized")
    response = client.get("/api/me", headers={"Authorization": "Bearer forged"})
    assert response.status_code == 401


def test_sold_out_and_insufficient_balance_are_conflicts(client: TestClient, world: World) -> None:
    world.player(300, email="poor@example.org")
    client.post("/api/sessions", json={"email": "poor@example.org", "password": PASSWORD})
    # No block yet, so no price either: the game is sold out, whatever the balance.
    response = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert (response.status_code, response.json()["error"]) == (409, "sold_out")
    world.stock("cash")  # a 5 € block: more than the balance
    response = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert (response.status_code, response.json()["error"]) == (409, "insufficient_balance")
    assert client.get("/api/me").json()["balance_cents"] == 300


def test_the_replay_answers_200_and_the_conflicting_key_409(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    world.player(5000, email="keys@example.org")
    client.post("/api/sessions", json={"email": "keys@example.org", "password": PASSWORD})
    headers = {**CSRF, "Idempotency-Key": "abc"}
    first = client.post("/api/games/cash/tickets", json={"mode": "play"}, headers=headers)
    again = client.post("/api/games/cash/tickets", json={"mode": "play"}, headers=headers)
    other = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=headers)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert (other.status_code, other.json()["error"]) == (409, "idempotency_conflict")
    assert client.get("/api/me").json()["balance_cents"] == 4500


def test_the_openapi_document_is_served(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    paths = client.get("/openapi.json").json()["paths"]
    assert "/api/games/{game}/tickets" in paths and "/api/me/tickets/last" in paths


def test_a_database_in_trouble_answers_503_and_debits_nothing(
    client: TestClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import OperationalError

    from grattage.adapters.blocks import SqlBlocks

    world.stock("cash")
    world.player(5000, email="busy@example.org")
    client.post("/api/sessions", json={"email": "busy@example.org", "password": PASSWORD})

    def locked(*_args: object, **_kwargs: object) -> None:
        raise OperationalError("UPDATE blocks", {}, Exception("database is locked"))

    monkeypatch.setattr(SqlBlocks, "take_unit", locked)
    response = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert (response.status_code, response.json()["error"]) == (503, "unavailable")
    monkeypatch.undo()
    assert client.get("/api/me").json()["balance_cents"] == 5000


DRIVER_TEXT = "UPDATE blocks SET sold = sold + 1 WHERE secret = 'p4ssw0rd-param'"


@pytest.mark.parametrize(
    "trouble",
    ["OperationalError", "InterfaceError", "InternalError", "TimeoutError"],
)
def test_database_trouble_is_503_logged_without_the_drivers_text(
    client: TestClient,
    world: World,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    trouble: str,
) -> None:
    import sqlalchemy.exc

    world.stock("cash")
    world.player(5000, email="trouble@example.org")
    client.post("/api/sessions", json={"email": "trouble@example.org", "password": PASSWORD})
    kind = getattr(sqlalchemy.exc, trouble)

    def fail(*_args: object, **_kwargs: object) -> None:
        if kind is sqlalchemy.exc.TimeoutError:
            raise kind(DRIVER_TEXT)
        raise kind(DRIVER_TEXT, {"secret": "p4ssw0rd-param"}, Exception(DRIVER_TEXT))

    monkeypatch.setattr(world.platform, "stake_checks", [fail])  # inside the purchase
    with caplog.at_level("WARNING", logger="grattage.http"):
        response = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert (response.status_code, response.json()["error"]) == (503, "unavailable")
    logged = [record.getMessage() for record in caplog.records if record.name == "grattage.http"]
    assert len(logged) == 1 and logged[0].startswith("answered 503: the database is unavailable")
    assert "p4ssw0rd" not in caplog.text + response.text and "UPDATE" not in caplog.text
    monkeypatch.undo()
    assert client.get("/api/me").json()["balance_cents"] == 5000


def test_a_value_the_database_refuses_is_422_unstorable_value_and_debits_nothing(
    client: TestClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import DataError

    world.stock("cash")
    world.player(5000, email="refused@example.org")
    client.post("/api/sessions", json={"email": "refused@example.org", "password": PASSWORD})

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise DataError(DRIVER_TEXT, {}, Exception("value out of range"))

    monkeypatch.setattr(world.platform, "stake_checks", [refuse])  # inside the purchase
    response = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert (response.status_code, response.json()["error"]) == (422, "unstorable_value")
    assert "p4ssw0rd" not in response.text
    monkeypatch.undo()
    assert client.get("/api/me").json()["balance_cents"] == 5000


def test_an_integrity_error_is_a_bug_not_hidden_behind_a_503(
    client: TestClient,
    world: World,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from sqlalchemy.exc import IntegrityError

    world.stock("cash")
    world.player(5000, email="bug@example.org")
    client.post("/api/sessions", json={"email": "bug@example.org", "password": PASSWORD})

    def broken(*_args: object, **_kwargs: object) -> None:
        raise IntegrityError("INSERT INTO tickets", {}, Exception("UNIQUE constraint failed"))

    monkeypatch.setattr(world.platform, "stake_checks", [broken])  # inside the purchase
    answer = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert (answer.status_code, answer.json()["error"]) == (500, "internal_error")
    assert "IntegrityError" in caplog.text  # the traceback is in the server's log
    monkeypatch.undo()
    assert client.get("/api/me").json()["balance_cents"] == 5000


def test_a_bug_answers_a_json_500_that_says_nothing_of_it_and_logs_its_traceback(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    from grattage.entrypoints.http import create_app

    app = create_app(world.settings, platform=world.platform, mount_web=False)

    @app.get("/api/broken")
    def broken() -> None:
        raise RuntimeError("secret detail /srv/grattage/keys")

    with TestClient(app) as local:
        answer = local.get("/api/broken")
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["cache-control"] == "no-store"  # the security headers are there too
    body = answer.json()
    assert set(body) == {"error", "message"} and body["error"] == "internal_error"
    assert "secret" not in answer.text and "RuntimeError" not in answer.text
    assert "secret detail" in caplog.text and "Traceback" in caplog.text
