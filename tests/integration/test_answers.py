"""The answers the API sends are the ones /openapi.json declares, with exact numbers only, and
the lobby learns each game's page from /api/games."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel

from grattage.entrypoints.http import create_app
from grattage.entrypoints.http.proof_answers import Commitment, Disclosure, TicketProof
from grattage.service import operators
from grattage.service.emissions import close_block
from integration.test_fairness import CSRF, buy_auto, signed_in
from support import PASSWORD, World, bought, drawn_answer


def properties(openapi: dict[str, Any], name: str) -> set[str]:
    return set(openapi["components"]["schemas"][name]["properties"])


def test_each_game_of_the_lobby_names_its_page_and_the_page_exists(world: World) -> None:
    with TestClient(create_app(world.settings, platform=world.platform)) as client:
        _each_game_names_its_served_page(client)


def _each_game_names_its_served_page(client: TestClient) -> None:
    listed = client.get("/api/games").json()["games"]
    assert {game["name"]: game["page"] for game in listed} == {
        "cash": "/cash.html",
        "astro": "/astro.html",
    }
    for game in listed:
        page = client.get(game["page"])
        assert page.status_code == 200, game["page"]
        assert page.headers["content-type"].startswith("text/html")
        assert f'data-game="{game["name"]}"' in page.text


def test_the_ticket_routes_send_exactly_the_fields_their_schema_declares(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    signed_in(client, world)
    openapi = client.get("/openapi.json").json()
    ticket_fields = properties(openapi, "TicketView")
    bought = client.post("/api/games/cash/tickets", json={"mode": "play"}, headers=CSRF)
    assert bought.status_code == 201
    assert set(bought.json()) == ticket_fields  # no reality check is due: the field is absent
    assert bought.json()["created_at"].endswith("Z")  # UTC, written as the pages read it
    assert properties(openapi, "PurchasedTicket") == ticket_fields | {"reality_check"}
    ticket_id = bought.json()["id"]
    drawn_answer(client, bought.json())  # the page waits for its draw before revealing
    revealed = client.post(f"/api/tickets/{ticket_id}/reveal", json={"all": True}, headers=CSRF)
    assert set(revealed.json()) == ticket_fields
    assert revealed.json()["state"] == "finished"
    assert set(client.get(f"/api/tickets/{ticket_id}").json()) == ticket_fields
    assert revealed.headers["content-type"] == "application/json"


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # a drawn ticket's proof: below
def test_the_fairness_documents_carry_exactly_the_fields_their_models_document(
    client: TestClient, world: World
) -> None:
    world.stock("astro")
    signed_in(client, world)
    ticket = buy_auto(client, "astro")

    def fields(model: type[BaseModel]) -> set[str]:
        return set(model.model_fields)

    commitment = client.get("/api/blocks/1/commitment").json()
    assert set(commitment) == fields(Commitment)
    proof = client.get(f"/api/tickets/{ticket['id']}/proof").json()
    assert set(proof) == fields(TicketProof) - {"draw"}  # only a drawn block's ticket has it
    assert set(proof["commitment"]) == fields(Commitment)
    close_block(world.platform, 1)
    disclosure = client.get("/api/blocks/1/disclosure").json()
    assert set(disclosure) == fields(Disclosure)


def _strings(value: Any, where: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        return {
            k: v for key, item in value.items() for k, v in _strings(item, f"{where}.{key}").items()
        }
    if isinstance(value, list):
        return {k: v for item in value for k, v in _strings(item, f"{where}[]").items()}
    return {where: value} if isinstance(value, str) else {}


def test_the_block_views_send_numbers_never_a_number_written_for_people(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    player = world.player(10_000)
    for _ in range(5):
        bought(world, player, game_name="cash", mode="auto")
    operators.create(world.platform, "boss@example.org", PASSWORD)
    token = client.post(
        "/api/admin/sessions", json={"email": "boss@example.org", "password": PASSWORD}
    ).json()["token"]
    block = client.get("/api/admin/blocks/1", headers={"Authorization": f"Bearer {token}"})
    texts = _strings(block.json())
    assert set(texts) == {".game", ".state", ".table_title"}, texts
    assert all(isinstance(tier["table_count"], int) for tier in block.json()["tiers"])


def test_a_reality_check_sends_numbers_and_no_sentence(client: TestClient, world: World) -> None:
    world.stock("cash")
    signed_in(client, world)
    client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
    world.clock.advance(30 * 60)  # the session stays alive: it expires after an idle hour
    assert "reality_check" not in client.get("/api/me").json()
    world.clock.advance(31 * 60)
    me = client.get("/api/me").json()
    assert me["reality_check"] == {
        "minutes_played": 61,
        "interval_minutes": 60,
        "stakes_cents": 500,
        "prizes_cents": me["reality_check"]["prizes_cents"],
        "net_spend_cents": 500 - me["reality_check"]["prizes_cents"],
    }
    assert "reality_check" not in client.get("/api/me").json()
