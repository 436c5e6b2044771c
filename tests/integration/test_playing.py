"""Revealing, finishing, unattended tickets, history and the catalogue, through the API."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from fastapi.testclient import TestClient

from grattage.service import tickets
from support import PASSWORD, World, drawn_answer

CSRF = {"X-Grattage-CSRF": "1"}
CASH_ZONES = [f"your_numbers/{i}" for i in range(20)] + [f"winning_numbers/{i}" for i in range(5)]
PHASE_ONE = [f"symbols/{i}" for i in range(5)] + ["gain"]


def signed_in(client: TestClient, world: World, balance_cents: int = 10_000) -> int:
    player = world.player(balance_cents, email="player@example.org")
    response = client.post(
        "/api/sessions", json={"email": "player@example.org", "password": PASSWORD}
    )
    assert response.status_code == 200
    return player


def buy(client: TestClient, game: str, mode: str = "play", **extra: object) -> dict:
    body = {"mode": mode, **({"sign": "leo"} if game == "astro" else {}), **extra}
    response = client.post(f"/api/games/{game}/tickets", json=body, headers=CSRF)
    assert response.status_code == 201, response.text
    return drawn_answer(client, response.json())  # its unit is drawn after the sale


def reveal(client: TestClient, ticket_id: int, **body: object):
    return client.post(f"/api/tickets/{ticket_id}/reveal", json=body, headers=CSRF)


def test_a_play_ticket_shows_nothing_hidden_until_revealed(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    signed_in(client, world)
    ticket = buy(client, "cash")
    assert ticket["revealed"] == {}
    assert ticket["prize_cents"] is None and ticket["document"] is None
    assert ticket["zones"] == CASH_ZONES
    after = reveal(client, ticket["id"], zones=["your_numbers/3", "winning_numbers/0"]).json()
    assert set(after["revealed"]) == {"your_numbers/3", "winning_numbers/0"}
    assert set(after["revealed"]["your_numbers/3"]) == {"number", "amount_cents"}
    assert isinstance(after["revealed"]["winning_numbers/0"], int)
    assert after["state"] == "playing" and after["document"] is None
    fetched = client.get(f"/api/tickets/{ticket['id']}").json()
    assert fetched["receipt"]["ticket_id"] == ticket["id"]  # a reveal's answer omits it (null)
    assert {**fetched, "receipt": None} == after


def test_revealing_every_zone_finishes_the_ticket_and_credits_the_prize_once(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    signed_in(client, world)
    for _ in range(len(CASH_ZONES) // 5 + 4):
        ticket = buy(client, "cash")
        for start in range(0, len(CASH_ZONES), 5):
            last = reveal(client, ticket["id"], zones=CASH_ZONES[start : start + 5]).json()
        assert last["state"] == "finished" and last["finished_by"] == "player"
        assert last["document"]["prize_cents"] == last["prize_cents"]
        balance = client.get("/api/me").json()["balance_cents"]
        assert last["balance_after_cents"] == balance
        again = reveal(client, ticket["id"], all=True).json()
        assert again == last
        assert client.get("/api/me").json()["balance_cents"] == balance


def test_an_auto_ticket_is_finished_and_credited_once_drawn(
    client: TestClient, world: World
) -> None:
    world.stock("astro")
    signed_in(client, world)
    ticket = buy(client, "astro", mode="auto")
    assert ticket["state"] == "finished" and ticket["finished_by"] == "auto"
    assert set(ticket["revealed"]) == set(ticket["zones"])
    assert ticket["document"]["sign"] == "leo"
    expected = 10_000 - 200 + ticket["prize_cents"]
    assert ticket["balance_after_cents"] == expected
    assert client.get("/api/me").json()["balance_cents"] == expected


def test_astros_banner_is_refused_until_phase_one_is_revealed(
    client: TestClient, world: World
) -> None:
    world.stock("astro")
    signed_in(client, world)
    ticket = buy(client, "astro")
    assert ticket["locked_zones"] == ["banner"]
    response = reveal(client, ticket["id"], zones=["banner"])
    assert (response.status_code, response.json()["error"]) == (422, "zone_not_revealable")
    partial = reveal(client, ticket["id"], zones=PHASE_ONE[:-1]).json()
    assert partial["locked_zones"] == ["banner"]
    assert "banner" not in partial["revealed"]
    phase_one = reveal(client, ticket["id"], zones=["gain"]).json()
    assert phase_one["locked_zones"] == []
    done = reveal(client, ticket["id"], zones=["banner"]).json()
    assert done["state"] == "finished"
    assert set(done["revealed"]["banner"]) == {"text", "multiplier"}


@pytest.mark.parametrize(
    "body",
    [{"zones": ["your_numbers/20"]}, {"zones": []}, {}, {"zones": "gain"}, {"all": "yes"}],
)
def test_a_malformed_reveal_is_refused(client: TestClient, world: World, body: dict) -> None:
    world.stock("cash")
    signed_in(client, world)
    ticket = buy(client, "cash")
    response = reveal(client, ticket["id"], **body)
    assert response.status_code == 422
    assert set(response.json()) == {"error", "message"}


def test_a_cash_ticket_left_alone_is_finished_after_the_inactivity_delay(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    player = signed_in(client, world)
    ticket = buy(client, "cash")
    reveal(client, ticket["id"], zones=["your_numbers/0"])
    world.clock.advance(9)
    assert tickets.sweep(world.platform) == 0
    world.clock.advance(2)
    assert tickets.sweep(world.platform) == 1
    assert tickets.sweep(world.platform) == 0
    finished = client.get(f"/api/tickets/{ticket['id']}").json()
    assert finished["state"] == "finished" and finished["finished_by"] == "inactivity"
    assert set(finished["revealed"]) == set(CASH_ZONES)
    assert world.balance(player) == 10_000 - 500 + finished["prize_cents"]
    row = client.get("/api/me/tickets").json()["tickets"][0]
    assert (row["id"], row["state"], row["finished_by"]) == (ticket["id"], "finished", "inactivity")


def test_an_astro_ticket_waits_for_its_player_until_the_abandon_delay(
    client: TestClient, world: World
) -> None:
    world.stock("astro")
    player = signed_in(client, world)
    ticket = buy(client, "astro")
    world.clock.advance(world.platform.policy.inactivity_seconds * 10)
    assert tickets.sweep(world.platform) == 0
    world.clock.advance(world.platform.policy.abandon_seconds)
    assert tickets.sweep(world.platform) == 1
    last = client.get("/api/me/tickets/last").json()
    assert (last["id"], last["finished_by"]) == (ticket["id"], "abandon")
    assert world.balance(player) == 10_000 - 200 + last["prize_cents"]


def test_an_abandoned_ticket_is_finished_lazily_when_its_player_comes_back(
    client: TestClient, world: World
) -> None:
    world.stock("astro")
    player = signed_in(client, world)
    ticket = buy(client, "astro")
    world.clock.advance(world.platform.policy.abandon_seconds + 1)
    history = client.get("/api/me/tickets").json()["tickets"]
    assert (history[0]["id"], history[0]["state"]) == (ticket["id"], "finished")
    assert history[0]["prize_cents"] == world.balance(player) - (10_000 - 200)
    assert tickets.sweep(world.platform) == 0  # nothing left, nothing credited twice


def test_a_ticket_finished_by_the_system_refuses_nothing_and_credits_nothing_more(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    player = signed_in(client, world)
    ticket = buy(client, "cash")
    world.clock.advance(11)
    done = reveal(client, ticket["id"], all=True).json()
    assert done["finished_by"] == "inactivity"
    assert world.balance(player) == 10_000 - 500 + done["prize_cents"]


def test_the_history_is_newest_first_paginated_and_keeps_the_balances(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    signed_in(client, world)
    bought = [buy(client, "cash", mode="auto") for _ in range(5)]
    first = client.get("/api/me/tickets?limit=2").json()
    assert [row["id"] for row in first["tickets"]] == [bought[4]["id"], bought[3]["id"]]
    second = client.get(f"/api/me/tickets?limit=2&before={first['next']}").json()
    third = client.get(f"/api/me/tickets?limit=2&before={second['next']}").json()
    assert [row["id"] for row in second["tickets"] + third["tickets"]] == [
        bought[2]["id"],
        bought[1]["id"],
        bought[0]["id"],
    ]
    assert third["next"] is None
    rows = first["tickets"] + second["tickets"] + third["tickets"]
    for newer, older in itertools.pairwise(rows):
        assert newer["balance_before_cents"] == older["balance_after_cents"]
    for row in rows:
        assert row["balance_after_cents"] == row["balance_before_cents"] - 500 + row["prize_cents"]
    assert client.get("/api/me/tickets/last").json()["id"] == bought[4]["id"]


def test_a_player_without_tickets_has_no_last_ticket(client: TestClient, world: World) -> None:
    signed_in(client, world)
    response = client.get("/api/me/tickets/last")
    assert (response.status_code, response.json()["error"]) == (404, "not_found")


def test_someone_elses_ticket_answers_not_found(client: TestClient, world: World) -> None:
    world.stock("cash")
    other = world.player(1000)
    theirs, _ = tickets.buy(world.platform, other, game_name="cash", mode="play")
    signed_in(client, world)
    for response in (
        client.get(f"/api/tickets/{theirs.id}"),
        reveal(client, theirs.id, all=True),
        client.get("/api/tickets/999999"),
    ):
        assert (response.status_code, response.json()["error"]) == (404, "not_found")
    assert client.get("/api/me/tickets").json() == {"tickets": [], "next": None}


def test_the_catalogue_shows_price_table_odds_payout_and_reconstruction(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    games = {game["name"]: game for game in client.get("/api/games").json()["games"]}
    cash, astro = games["cash"], games["astro"]
    assert cash["price_cents"] == 500 and cash["block_size"] == 40
    assert cash["winning_tickets"] == 10 and cash["on_sale"] is True  # 1 in 4
    assert cash["prize_table"][0] == {"prize_cents": 10000, "count": 2}
    assert cash["reconstruction"] is False and cash["zones"] == CASH_ZONES
    # No Astro block yet: the packaged table is shown, and nothing is on sale.
    assert astro["on_sale"] is False and astro["reconstruction"] is True
    # 1 in 3.61, 900 040 € / 1 500 000 €
    assert Fraction(astro["block_size"], astro["winning_tickets"]) == Fraction(750_000, 207_986)
    assert Fraction(astro["prizes_total_cents"], astro["block_size"] * 200) == Fraction(
        90_004_000, 150_000_000
    )
    assert astro["top_prize_cents"] == 1_600_000 and len(astro["choices"]) == 12
