"""The operator's player desk, on SQLite and PostgreSQL: looking players up, a player's file,
and suspending an account (audited; no log-in, purchase or deposit; sessions closed; tickets
already bought still finish), with purchases and log-ins racing the suspension."""

from __future__ import annotations

import threading
from datetime import date
from typing import Any

import pytest
from fastapi.testclient import TestClient

from grattage.errors import AccountSuspended, Unauthorized, Unavailable
from grattage.service import accounts, audit_trail, operators, suspensions, tickets
from grattage.service.credentials import NewSession
from support import PASSWORD, World, bought

from .test_back_office_api import CSRF, OPERATOR, admin_log_in, bearer
from .test_concurrency import race, retried

REASON = "Fraude à la carte bancaire signalée par la banque"


@pytest.fixture
def admin(world: World, client: TestClient) -> dict[str, str]:
    operators.create(world.platform, OPERATOR, PASSWORD)
    return admin_log_in(client)


def registered(world: World, email: str, first: str, last: str, balance: int = 0) -> int:
    player = accounts.register(
        world.platform, email, PASSWORD, date(1988, 3, 9), first_name=first, last_name=last
    )
    while balance > 0:
        step = min(balance, world.platform.policy.demo_deposit_max_cents)
        accounts.deposit(world.platform, player, step)
        balance -= step
    return player


def log_in(client: TestClient, email: str) -> Any:
    answer = client.post("/api/sessions", json={"email": email, "password": PASSWORD})
    client.cookies.clear()
    return answer


def found(client: TestClient, admin: dict[str, str], q: str, **params: Any) -> list[str]:
    answer = client.get("/api/admin/players", params={"q": q, **params}, headers=admin)
    assert answer.status_code == 200, answer.text
    return [player["email"] for player in answer.json()["players"]]


def test_an_operator_finds_players_by_part_of_their_email_or_their_names_in_any_case(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    eloise = registered(world, "eloise.dupont@example.org", "Éloïse", "Dupont-Martin")
    registered(world, "jp@other.example", "Jean-Pierre", "D'Éon")
    registered(world, "marc@example.org", "Marc", "Lévy")
    assert found(client, admin, "DUPONT") == ["eloise.dupont@example.org"]
    assert found(client, admin, "eloise dupont martin") == ["eloise.dupont@example.org"]
    assert found(client, admin, "jean pierre deon") == ["jp@other.example"]
    assert found(client, admin, "levy") == ["marc@example.org"]
    assert found(client, admin, "@Example.org") == ["marc@example.org", "eloise.dupont@example.org"]
    assert found(client, admin, f"#{eloise}") == ["eloise.dupont@example.org"]
    assert found(client, admin, "%") == []  # a character, not a wildcard
    assert found(client, admin, "_") == []
    assert found(client, admin, "nobody") == []
    assert len(found(client, admin, "")) == 3  # no text: every account, newest first


def test_a_look_up_is_paged_newest_first(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    for index in range(5):
        registered(world, f"page{index}@example.org", "Camille", f"Page{'abcde'[index]}")
    first = client.get("/api/admin/players?q=page&limit=2", headers=admin).json()
    assert [p["email"] for p in first["players"]] == ["page4@example.org", "page3@example.org"]
    assert first["next_offset"] == 2
    last = client.get("/api/admin/players?q=page&limit=2&offset=4", headers=admin).json()
    assert ([p["email"] for p in last["players"]], last["next_offset"]) == (
        ["page0@example.org"],
        None,
    )
    for bad in ("limit=0", "limit=101", "offset=-1", "q=" + "x" * 255):
        answer = client.get(f"/api/admin/players?{bad}", headers=admin)
        assert (answer.status_code, answer.json()["error"]) == (422, "invalid_input"), bad


def test_a_players_file_shows_account_balance_limits_exclusion_tickets_and_ledger(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    world.stock("cash")
    player = registered(world, "file@example.org", "Éloïse", "Fichier", balance=2_000)
    ticket, _ = bought(world, player, game_name="cash", mode="auto")
    accounts.log_in(world.platform, "file@example.org", PASSWORD)
    from grattage.service import responsible

    responsible.set_limits(world.platform, player, deposit_cents=200_000, stake_cents=5_000)
    answer = client.get(f"/api/admin/players/{player}", headers=admin)
    assert answer.status_code == 200, answer.text
    file = answer.json()
    assert (file["id"], file["email"], file["first_name"], file["last_name"]) == (
        player,
        "file@example.org",
        "Éloïse",
        "Fichier",
    )
    assert (file["status"], file["suspension"], file["nationally_excluded"]) == (
        "active",
        None,
        None,  # this platform has no national register
    )
    assert file["balance_cents"] == world.balance(player)
    assert file["limits"]["stake"]["weekly_limit_cents"] == 5_000
    assert file["limits"]["deposit"]["pending"]["weekly_limit_cents"] == 200_000
    assert file["limits"]["exclusion"] == {"excluded": False, "permanent": False, "until": None}
    assert [(t["id"], t["game"], t["stake_cents"], t["state"]) for t in file["tickets"]] == [
        (ticket.id, "cash", 500, "finished")
    ]
    assert file["tickets"][0]["prize_cents"] == ticket.prize_cents
    kinds = [(m["kind"], m["amount_cents"]) for m in file["movements"]]
    expected = [("stake", -500), ("deposit", 2_000)]
    if ticket.prize_cents:
        expected.insert(0, ("prize", ticket.prize_cents))
    assert kinds == expected
    assert file["movements"][-1]["ticket_id"] is None
    assert client.get("/api/admin/players/999999", headers=admin).status_code == 404


def test_a_suspended_player_cannot_log_in_buy_or_deposit_and_their_sessions_end(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    world.stock("cash")
    player = registered(world, "suspended@example.org", "Sam", "Suspendu", balance=5_000)
    token = log_in(client, "suspended@example.org").json()["token"]
    assert client.get("/api/me", headers=bearer(token)).status_code == 200
    answer = client.post(
        f"/api/admin/players/{player}/suspend", json={"reason": REASON}, headers=admin
    )
    assert answer.status_code == 200, answer.text
    file = answer.json()
    assert file["status"] == "suspended"
    assert (file["suspension"]["suspended_by"], file["suspension"]["reason"]) == (
        f"operator:{OPERATOR}",
        REASON,
    )
    assert client.get("/api/me", headers=bearer(token)).status_code == 401  # session closed
    refused = log_in(client, "suspended@example.org")
    assert (refused.status_code, refused.json()["error"]) == (403, "account_suspended")
    with pytest.raises(AccountSuspended):
        tickets.buy(world.platform, player, game_name="cash", mode="auto")
    with pytest.raises(AccountSuspended):
        accounts.deposit(world.platform, player, 100)
    assert world.balance(player) == 5_000
    listed = client.get("/api/admin/players?q=suspendu", headers=admin).json()["players"]
    assert [p["status"] for p in listed] == ["suspended"]
    entry = client.get("/api/admin/audit?limit=1", headers=admin).json()["entries"][0]
    assert (entry["actor"], entry["action"], entry["subject"]) == (
        f"operator:{OPERATOR}",
        "player.suspend",
        f"player:{player}",
    )
    assert entry["details"] == {
        "email": "suspended@example.org",
        "reason": REASON,
        "sessions_closed": 1,
    }

    lifted = client.post(
        f"/api/admin/players/{player}/reinstate",
        json={"reason": "La banque a levé le doute"},
        headers=admin,
    )
    assert (lifted.status_code, lifted.json()["status"]) == (200, "active")
    assert log_in(client, "suspended@example.org").status_code == 200
    bought(world, player, game_name="cash", mode="auto")
    entry = client.get("/api/admin/audit?limit=1", headers=admin).json()["entries"][0]
    assert (entry["action"], entry["details"]["reason"]) == (
        "player.reinstate",
        "La banque a levé le doute",
    )
    assert audit_trail.verify(world.platform).clean


def test_a_suspension_needs_a_reason_and_cannot_be_set_or_lifted_twice(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    player = registered(world, "twice@example.org", "Tom", "Deuxfois")
    url = f"/api/admin/players/{player}"
    for body in ({}, {"reason": ""}, {"reason": "  a "}, {"reason": 5}, {"reason": "x" * 501}):
        answer = client.post(f"{url}/suspend", json=body, headers=admin)
        assert (answer.status_code, answer.json()["error"]) == (422, "invalid_input"), body
    zero_width = client.post(f"{url}/suspend", json={"reason": "fraude\u200b"}, headers=admin)
    assert zero_width.status_code == 422
    assert (
        client.post(f"{url}/reinstate", json={"reason": REASON}, headers=admin).status_code == 409
    )
    assert client.post(f"{url}/suspend", json={"reason": REASON}, headers=admin).status_code == 200
    again = client.post(f"{url}/suspend", json={"reason": "autre"}, headers=admin)
    assert (again.status_code, again.json()["error"]) == (409, "conflict")
    file = client.get(url, headers=admin).json()
    assert file["suspension"]["reason"] == REASON  # the first suspension stands
    missing = client.post(
        "/api/admin/players/424242/suspend", json={"reason": REASON}, headers=admin
    )
    assert missing.status_code == 404
    actions = [e["action"] for e in client.get("/api/admin/audit", headers=admin).json()["entries"]]
    assert actions.count("player.suspend") == 1 and "player.reinstate" not in actions


def test_a_suspended_players_tickets_already_bought_still_finish_and_pay_their_prizes(
    world: World,
) -> None:
    world.stock("cash")  # 40 units: 10 winning, 25 500 cents of prizes in all
    player = registered(world, "owed@example.org", "Olga", "Due", balance=20_000)
    playing = [bought(world, player, game_name="cash", mode="play")[0] for _ in range(39)]
    covered, _ = tickets.buy(world.platform, player, game_name="cash", mode="play")
    assert covered.state == "covered" or world.witness is None
    suspensions.suspend(world.platform, player, REASON, actor="operator:test")
    world.draw()  # the drawer still draws the suspended player's covered ticket
    world.clock.advance(world.platform.policy.abandon_seconds + 1)
    tickets.sweep(world.platform)
    ids = [ticket.id for ticket in playing] + [covered.id]
    finished = [tickets.get_ticket(world.platform, player, ticket_id) for ticket_id in ids]
    assert {ticket.state for ticket in finished} == {"finished"}
    assert sum(ticket.prize_cents or 0 for ticket in finished) == 25_500
    assert world.balance(player) == 20_000 - 40 * 500 + 25_500


def test_a_purchase_under_way_when_the_suspension_comes_is_sold_before_it(
    world: World,
) -> None:
    """The suspension waits for the purchase holding the wallet: the ticket is sold before
    the suspension commits, and every purchase after it is refused."""
    world.stock("cash")
    player = registered(world, "racer@example.org", "Rita", "Course", balance=5_000)
    inside, release = threading.Event(), threading.Event()

    def hold(repos: Any, buyer: int, game: str, stake: int, now: Any) -> None:
        if buyer == player and not inside.is_set():
            inside.set()
            assert release.wait(20)

    world.platform.stake_checks.append(hold)
    results: dict[str, Any] = {}

    def buy() -> None:
        results["sale"] = tickets.buy(world.platform, player, game_name="cash", mode="auto")

    def suspend() -> None:
        suspensions.suspend(world.platform, player, REASON, actor="operator:test")
        results["suspended_while_buying"] = not release.is_set()

    buyer = threading.Thread(target=buy)
    buyer.start()
    assert inside.wait(20)
    suspender = threading.Thread(target=suspend)
    suspender.start()
    suspender.join(0.5)
    assert suspender.is_alive(), "the suspension did not wait for the purchase holding the wallet"
    release.set()
    buyer.join(20)
    suspender.join(20)
    assert results["suspended_while_buying"] is False
    assert results["sale"][0].stake_cents == 500
    world.draw()
    with pytest.raises(AccountSuspended):
        tickets.buy(world.platform, player, game_name="cash", mode="auto")
    assert world.balance(player) == 5_000 - 500 + (
        tickets.get_ticket(world.platform, player, results["sale"][0].id).prize_cents or 0
    )


def test_purchases_and_log_ins_racing_a_suspension_leave_no_sale_or_session_after_it(
    world: World,
) -> None:
    world.stock("cash", blocks=2)
    player = registered(world, "crowd@example.org", "Cyril", "Foule", balance=10_000)

    def attempt(index: int) -> Any:
        if index == 0:
            return suspensions.suspend(world.platform, player, REASON, actor="operator:test")
        if index <= log_ins:
            return retried(lambda: accounts.log_in(world.platform, "crowd@example.org", PASSWORD))
        return retried(lambda: tickets.buy(world.platform, player, game_name="cash", mode="auto"))

    # Fewer log-ins than the lock-out's threshold: a refused one still counts as an attempt.
    log_ins = world.platform.policy.lockout_threshold - 1
    results = race(1 + log_ins + 16, attempt)
    assert results[0] is None, results[0]
    outcomes = results[1:]
    assert all(isinstance(result, (tuple, NewSession, AccountSuspended)) for result in outcomes), (
        outcomes
    )
    assert not any(isinstance(result, Unavailable) for result in outcomes)
    for result in outcomes:  # every session opened before the suspension was closed by it
        if isinstance(result, NewSession):
            with pytest.raises(Unauthorized):
                accounts.authenticate(world.platform, result.token)
    sold = [result for result in outcomes if isinstance(result, tuple)]
    world.draw()
    prizes = sum(
        tickets.get_ticket(world.platform, player, view.id).prize_cents or 0 for view, _ in sold
    )
    assert world.balance(player) == 10_000 - 500 * len(sold) + prizes
    with pytest.raises(AccountSuspended):
        accounts.log_in(world.platform, "crowd@example.org", PASSWORD)


def test_the_player_desk_is_for_operators_only(world: World, client: TestClient) -> None:
    player = registered(world, "private@example.org", "Pia", "Privee")
    token = log_in(client, "private@example.org").json()["token"]
    for method, path in (
        ("GET", "/api/admin/players?q=private"),
        ("GET", f"/api/admin/players/{player}"),
        ("POST", f"/api/admin/players/{player}/suspend"),
    ):
        assert client.request(method, path, headers=bearer(token)).status_code == 403
        assert client.request(method, path, headers=CSRF).status_code == 401
