"""Players, sessions and the wallet, through the HTTP API."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from support import PASSWORD, World, person_named_after

CSRF = {"X-Grattage-CSRF": "1"}


def register(client: TestClient, email: str = "ana@example.org", **extra: str) -> dict:
    body = {"email": email, "password": PASSWORD, "birth_date": "1990-02-03"}
    body |= person_named_after(email) | extra
    response = client.post("/api/players", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def log_in(client: TestClient, email: str = "ana@example.org", password: str = PASSWORD):
    return client.post("/api/sessions", json={"email": email, "password": password})


def test_a_player_registers_logs_in_and_sees_an_empty_wallet(client: TestClient) -> None:
    created = register(client, "Ana@Example.org")
    assert created["email"] == "ana@example.org"
    assert "password" not in created
    response = log_in(client)
    assert response.status_code == 200
    assert set(response.json()) == {"token", "expires_at"}
    cookie = response.headers["set-cookie"]
    assert "grattage_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
    me = client.get("/api/me").json()
    assert (me["email"], me["balance_cents"]) == ("ana@example.org", 0)
    assert set(me) == {"email", "balance_cents", "session_started_at", "next_reality_check_at"}


def test_a_script_uses_the_bearer_token_without_the_csrf_header(client: TestClient) -> None:
    register(client)
    token = log_in(client).json()["token"]
    client.cookies.clear()
    bearer = {"Authorization": f"Bearer {token}"}
    response = client.post("/api/me/deposits", json={"amount_cents": 700}, headers=bearer)
    assert response.status_code == 201
    assert response.json() == {"balance_cents": 700, "demo": True, "max_cents": 10_000}


def test_a_cookie_write_without_the_csrf_header_is_forbidden(client: TestClient) -> None:
    register(client)
    log_in(client)
    response = client.post("/api/me/deposits", json={"amount_cents": 700})
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    assert client.get("/api/me").json()["balance_cents"] == 0


@pytest.mark.parametrize("birth_date", ["2010-01-01", "2099-01-01"])
def test_a_minor_cannot_register(client: TestClient, world: World, birth_date: str) -> None:
    body = {"email": "kid@example.org", "password": PASSWORD, "birth_date": birth_date}
    body |= person_named_after("kid")
    response = client.post("/api/players", json=body)
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_input"


def test_a_player_of_exactly_eighteen_may_register(client: TestClient, world: World) -> None:
    today = world.clock.now().date()
    body = {
        "email": "adult@example.org",
        "password": PASSWORD,
        "birth_date": today.replace(year=today.year - 18).isoformat(),
        **person_named_after("adult"),
    }
    assert client.post("/api/players", json=body).status_code == 201


def test_an_email_registers_once(client: TestClient) -> None:
    register(client)
    body = {"email": "ANA@example.org", "password": PASSWORD, "birth_date": "1990-02-03"}
    body |= person_named_after("another")
    response = client.post("/api/players", json=body)
    assert response.status_code == 409
    assert response.json()["error"] == "already_exists"


def test_a_wrong_password_is_refused_and_repeated_failures_lock_the_account(
    client: TestClient, world: World
) -> None:
    register(client)
    threshold = world.platform.policy.lockout_threshold
    for _ in range(threshold - 1):
        response = log_in(client, password="wrong password")
        assert response.status_code == 401
        assert response.json()["error"] == "unauthorized"
    response = log_in(client, password="wrong password")
    assert response.json()["error"] == "account_locked"
    response = log_in(client)  # even the right password, while locked
    assert (response.status_code, response.json()["error"]) == (401, "account_locked")
    world.clock.advance(world.platform.policy.lockout_seconds + 1)
    assert log_in(client).status_code == 200


def test_an_unknown_email_is_refused_like_a_wrong_password(client: TestClient) -> None:
    response = log_in(client, "nobody@example.org")
    assert response.status_code == 401
    assert response.json()["message"] == "wrong e-mail address or password"


def test_an_idle_session_expires(client: TestClient, world: World) -> None:
    register(client)
    log_in(client)
    world.clock.advance(world.platform.policy.session_idle_seconds - 10)
    assert client.get("/api/me").status_code == 200
    world.clock.advance(world.platform.policy.session_idle_seconds - 10)
    assert client.get("/api/me").status_code == 200  # the previous use kept it alive
    world.clock.advance(world.platform.policy.session_idle_seconds + 1)
    response = client.get("/api/me")
    assert (response.status_code, response.json()["error"]) == (401, "unauthorized")


def test_purchases_keep_a_session_alive_and_an_idle_session_buys_nothing(
    client: TestClient, world: World
) -> None:
    """A purchase reads its session before its batch and leaves the session's writes (its last
    use, its expiry) to the batch: both still happen."""
    world.stock("cash")
    register(client)
    log_in(client)
    assert client.post("/api/me/deposits", json={"amount_cents": 2_000}, headers=CSRF).is_success
    idle = world.platform.policy.session_idle_seconds

    def buy() -> int:
        return client.post(
            "/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF
        ).status_code

    world.clock.advance(idle - 10)
    assert buy() == 201
    world.clock.advance(idle - 10)
    assert buy() == 201  # the previous purchase kept it alive
    balance = client.get("/api/me").json()["balance_cents"]
    world.clock.advance(idle + 1)
    response = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    assert (response.status_code, response.json()["error"]) == (401, "unauthorized")
    log_in(client)
    assert client.get("/api/me").json()["balance_cents"] == balance  # nothing was sold


def test_logging_out_ends_the_session_and_clears_the_cookie(client: TestClient) -> None:
    register(client)
    token = log_in(client).json()["token"]
    response = client.delete("/api/sessions", headers=CSRF)
    assert response.status_code == 204
    assert 'grattage_session=""' in response.headers["set-cookie"]
    response = client.get("/api/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401


def test_passwords_and_tokens_are_stored_hashed_and_never_logged(
    client: TestClient, world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    register(client)
    token = log_in(client).json()["token"]
    with world.platform.uow.read() as repos:
        connection = repos.connection  # type: ignore[attr-defined]
        dump = repr(connection.exec_driver_sql("SELECT * FROM players").all())
        dump += repr(connection.exec_driver_sql("SELECT * FROM sessions").all())
    assert PASSWORD not in dump and token not in dump
    assert "$argon2" in dump
    assert PASSWORD not in caplog.text and token not in caplog.text


@pytest.mark.parametrize("amount", [0, -500, 10_001, 2.5, "100", None])
def test_a_demo_deposit_is_a_positive_integer_up_to_the_maximum(
    client: TestClient, amount: object
) -> None:
    register(client)
    log_in(client)
    response = client.post("/api/me/deposits", json={"amount_cents": amount}, headers=CSRF)
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_input"
    assert client.get("/api/me").json()["balance_cents"] == 0


def test_the_config_tells_the_pages_the_delays_and_the_deposit_limit(client: TestClient) -> None:
    assert client.get("/api/config").json() == {
        "inactivity_seconds": 10,
        "abandon_seconds": 900,
        "demo_deposit_max_cents": 10_000,
    }


def test_a_house_account_is_the_houses_even_when_its_id_was_not_looked_up_by_name(
    world: World,
) -> None:
    from grattage.service.model import HOUSE_DEPOSITS, Leg, Movement

    player = world.player(0)  # no deposit yet: the platform has looked up no house account
    with world.platform.uow.read() as repos:
        connection = repos.connection  # type: ignore[attr-defined]
        house = connection.exec_driver_sql(
            f"SELECT id FROM accounts WHERE name = '{HOUSE_DEPOSITS}'"
        ).scalar_one()
    with world.platform.uow.write() as repos:
        account_id = repos.ledger.player_account_id(player)
        legs = [Leg(account_id, 700), Leg(house, -700)]
        balances = repos.ledger.post(Movement("deposit", legs, world.clock.now(), player))
    assert balances == {account_id: 700}
    assert world.balance(player) == 700


def test_logging_in_with_an_unknown_e_mail_verifies_a_password_all_the_same(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grattage.errors import Unauthorized
    from grattage.service import accounts

    world.player(0, email="known@example.org")
    verified: list[str] = []
    hasher = world.platform.passwords

    class Counting:
        def hash(self, password: str) -> str:
            return hasher.hash(password)

        def verify(self, password_hash: str, password: str) -> bool:
            verified.append(password)
            return hasher.verify(password_hash, password)

    monkeypatch.setattr(world.platform, "passwords", Counting())
    for email in ("known@example.org", "unknown@example.org"):
        with pytest.raises(Unauthorized, match="wrong e-mail address or password"):
            accounts.log_in(world.platform, email, "not the password")
    assert verified == ["not the password"] * 2  # as long a check either way
