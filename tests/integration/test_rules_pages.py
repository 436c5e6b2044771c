"""« Règles du jeu » (issue 16): every game's rules page and the figures it shows are public —
a visitor with no account reads the regulation's date, the prize table of the block on sale
and what is left of it, and the page itself, without logging in."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from grattage.entrypoints.http import create_app
from grattage.games.registry import game_names
from support import World, bought

REGULATIONS = {"cash": "2009-03-16", "astro": "2005-08-29"}
"""« Fait à Paris, le 16 mars 2009 » (Cash) and « le 29 août 2005 » (Astro)."""


def _games(client: TestClient) -> dict[str, dict[str, Any]]:
    answer = client.get("/api/games")
    assert answer.status_code == 200, answer.text
    return {game["name"]: game for game in answer.json()["games"]}


def test_a_visitor_with_no_account_gets_each_games_regulation_date_and_rules_page(
    world: World,
) -> None:
    world.stock("cash")
    with TestClient(create_app(world.settings, platform=world.platform)) as client:
        games = _games(client)  # no cookie, no token
        assert set(games) == set(game_names())
        for name, game in games.items():
            assert game["regulation_date"] == REGULATIONS[name]
            assert game["rules_page"] == f"/regles/{name}"
            page = client.get(game["rules_page"])
            assert page.status_code == 200, game["rules_page"]
            assert page.headers["content-type"].startswith("text/html")
            assert f'data-game="{name}"' in page.text
            assert "Règles du jeu" in page.text


def test_a_game_with_no_block_on_sale_still_names_its_regulation_and_rules_page(
    world: World,
) -> None:
    with TestClient(create_app(world.settings, platform=world.platform)) as client:
        astro = _games(client)["astro"]  # nothing stocked: sold out, the packaged table shown
        assert (astro["on_sale"], astro["off_sale_reason"]) == (False, "sold_out")
        assert astro["open_blocks"] == []
        assert astro["regulation_date"] == REGULATIONS["astro"]
        assert astro["rules_page"] == "/regles/astro"
        assert client.get("/regles/astro").status_code == 200


def test_the_prizes_remaining_a_visitor_reads_follow_the_sales(world: World) -> None:
    world.stock("cash")
    player = world.player(10_000)
    ticket, _ = bought(world, player, game_name="cash", mode="auto")
    with TestClient(create_app(world.settings, platform=world.platform)) as client:
        cash = _games(client)["cash"]
        (block,) = cash["open_blocks"]
        assert block["sold"] == 1
        table = {tier["prize_cents"]: tier["count"] for tier in cash["prize_table"]}
        left = {tier["prize_cents"]: tier["count"] for tier in block["prizes_remaining"]}
        gone = {cents: table[cents] - left[cents] for cents in table if table[cents] != left[cents]}
        assert gone == ({ticket.prize_cents: 1} if ticket.prize_cents else {})
