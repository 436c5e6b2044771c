"""The try mode's routes refuse hostile input with a clear 4xx, never a 500."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from support import World

CSRF = {"X-Grattage-CSRF": "1"}


@pytest.fixture
def trying(client: TestClient) -> TestClient:
    assert client.post("/api/try/sessions", headers=CSRF).status_code == 201
    return client


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/api/try/games/bingo/tickets", {"mode": "play"}, 422, "unknown_game"),
        ("/api/try/games/cash/tickets", {"mode": "free"}, 422, "invalid_input"),
        ("/api/try/games/cash/tickets", {"mode": "play", "sign": "leo"}, 422, "invalid_choice"),
        ("/api/try/games/astro/tickets", {"mode": "play"}, 422, "invalid_choice"),
        ("/api/try/games/astro/tickets", {"mode": "play", "sign": "dragon"}, 422, "invalid_choice"),
        ("/api/try/games/cash/tickets", {"mode": "play", "client_seed": "00"}, 422, None),
        ("/api/try/games/cash/tickets", {"mode": 1}, 422, None),
        ("/api/try/games/cash/tickets", [], 422, None),
        ("/api/try/games/" + "x" * 40 + "/tickets", {"mode": "play"}, 422, None),
        ("/api/try/tickets/1/reveal", {"zones": ["nowhere"]}, 404, "not_found"),
        ("/api/try/tickets/0/reveal", {"all": True}, 422, None),
        ("/api/try/tickets/99999999999/reveal", {"all": True}, 422, None),
    ],
)
def test_bad_try_requests_get_a_4xx_json_error(
    trying: TestClient, path: str, body: object, status: int, code: str | None
) -> None:
    answer = trying.post(path, json=body, headers=CSRF)
    assert answer.status_code == status, answer.text
    assert set(answer.json()) >= {"error", "message"}
    if code is not None:
        assert answer.json()["error"] == code


def test_a_try_ticket_rejects_zones_it_does_not_have(trying: TestClient) -> None:
    ticket = trying.post("/api/try/games/cash/tickets", json={"mode": "play"}, headers=CSRF)
    answer = trying.post(
        f"/api/try/tickets/{ticket.json()['id']}/reveal", json={"zones": ["moon"]}, headers=CSRF
    )
    assert answer.status_code == 422 and answer.json()["error"] == "invalid_zone"
    empty = trying.post(f"/api/try/tickets/{ticket.json()['id']}/reveal", json={}, headers=CSRF)
    assert empty.status_code == 422


def test_a_try_write_without_the_csrf_header_is_forbidden(trying: TestClient) -> None:
    answer = trying.post("/api/try/games/cash/tickets", json={"mode": "play"})
    assert answer.status_code == 403
    assert trying.post("/api/try/sessions").status_code == 403


def test_without_a_try_session_the_try_routes_answer_no_try_session(client: TestClient) -> None:
    for answer in (
        client.get("/api/try/session"),
        client.get("/api/try/tickets"),
        client.get("/api/try/tickets/last"),
        client.post("/api/try/games/cash/tickets", json={"mode": "play"}, headers=CSRF),
    ):
        assert answer.status_code == 404 and answer.json()["error"] == "no_try_session"
    client.cookies.set("grattage_try", "forged", path="/api/try")
    assert client.get("/api/try/session").json()["error"] == "no_try_session"


def test_another_try_session_s_ticket_is_not_found(client: TestClient, world: World) -> None:
    from grattage.entrypoints.http import create_app

    client.post("/api/try/sessions", headers=CSRF)
    mine = client.post("/api/try/games/cash/tickets", json={"mode": "play"}, headers=CSRF).json()
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as other:
        other.post("/api/try/sessions", headers=CSRF)
        assert other.get(f"/api/try/tickets/{mine['id']}").status_code == 404


@pytest.mark.parametrize(
    "world_settings", [{"try_start_rate_per_client": "2/hour", "try_start_rate_overall": "9/hour"}]
)
def test_new_try_sessions_are_rate_limited_per_client_address(client: TestClient) -> None:
    statuses = [client.post("/api/try/sessions", headers=CSRF).status_code for _ in range(3)]
    assert statuses == [201, 201, 429]


@pytest.mark.parametrize("world_settings", [{"try_session_max_tickets": 2}])
def test_a_try_session_buys_at_most_its_cap_of_tickets(client: TestClient) -> None:
    client.post("/api/try/sessions", headers=CSRF)
    answers = [
        client.post(
            "/api/try/games/astro/tickets", json={"mode": "auto", "sign": "leo"}, headers=CSRF
        )
        for _ in range(3)
    ]
    assert [a.status_code for a in answers] == [201, 201, 409]
    assert answers[-1].json()["error"] == "try_limit_reached"
