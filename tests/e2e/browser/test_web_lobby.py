"""The lobby draws the games the API lists: their numbers, their art, their page links."""

from __future__ import annotations

import json
from typing import Any

import pytest
from browser_helpers import euros, player_with_balance, same_text, screenshot
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_each_lobby_card_shows_its_games_own_top_prize_and_links_to_its_page(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/")
    games = page.context.request.get("/api/games").json()["games"]
    expect(page.locator(".game-card")).to_have_count(len(games))
    for game in games:
        card = page.locator(f".game-card[data-game={game['name']}]")
        expect(card.locator("h3")).to_have_text(game["title"])
        expect(card.locator("a.btn")).to_have_attribute("href", game["page"])
    cash = next(game for game in games if game["name"] == "cash")
    art = page.locator(".game-card[data-game=cash] .card-art").inner_text()
    assert same_text(art) == euros(cash["top_prize_cents"])  # the table's, not « 500 000 € »


def test_a_game_with_no_page_module_still_gets_a_card_and_no_page_no_button(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)

    def add_a_third_game(route: Any) -> None:
        answer = route.fetch()
        listed = answer.json()
        third = {**listed["games"][0], "name": "toy", "title": "Toy 7 €", "page": None}
        listed["games"].append(third)
        route.fulfill(response=answer, body=json.dumps(listed))

    page.route("**/api/games", add_a_third_game)
    page.goto("/")
    toy = page.locator(".game-card[data-game=toy]")
    expect(toy.locator("h3")).to_have_text("Toy 7 €")
    expect(toy.locator(".card-art")).to_have_text("Toy 7 €")
    expect(toy.locator("a.btn")).to_have_count(0)
    expect(page.locator(".game-card[data-game=cash] a.btn")).to_be_visible()
    screenshot(page, "lobby_with_a_third_game")
