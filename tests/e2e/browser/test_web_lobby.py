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


def _lobby_euros(cents: int) -> str:
    """money.js's formatEuros: thin no-break spaces between thousands, a no-break space before €."""
    euros, rest = divmod(cents, 100)
    grouped = f"{euros:,}".replace(",", "\u202f")
    return f"{grouped},{rest:02d}\u00a0€" if rest else f"{grouped}\u00a0€"


def test_each_card_says_how_many_top_prizes_are_left_with_french_typography(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)

    # The live block's own count depends on what earlier tests sold (its top prize may be
    # gone already), so the page is given chosen counts: two left, then none.
    top_prizes_left = {"count": 2}

    def cash_with_chosen_top_prizes(route: Any) -> None:
        answer = route.fetch()
        listed = answer.json()
        for game in listed["games"]:
            if game["name"] == "astro":
                game["top_prizes_remaining"] = None  # no block open
            else:
                game["top_prizes_remaining"]["count"] = top_prizes_left["count"]
        route.fulfill(response=answer, body=json.dumps(listed))

    page.route("**/api/games", cash_with_chosen_top_prizes)
    with page.expect_response(lambda answer: answer.url.endswith("/api/games")) as listed:
        page.goto("/")
    games = listed.value.json()["games"]
    cash = next(game for game in games if game["name"] == "cash")
    top = cash["top_prizes_remaining"]
    line = page.locator(".game-card[data-game=cash] .prizes-remaining")
    expect(line).to_have_text(
        f"Gros lots restants\u00a0: 2\u00a0×\u00a0{_lobby_euros(top['prize_cents'])}"
    )
    for size, name in (
        ((360, 740), "lobby_prizes_remaining_360"),
        ((1366, 768), "lobby_prizes_remaining_1366"),
    ):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        screenshot(page, name)
    top_prizes_left["count"] = 0
    page.reload()
    expect(line).to_have_text(
        f"Gros lots restants\u00a0: aucun lot de {_lobby_euros(top['prize_cents'])}"
    )
    expect(page.locator(".game-card[data-game=astro] .prizes-remaining")).to_have_count(0)


def test_the_lobby_and_the_game_page_show_the_block_tables_title_price_and_top_prize(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url, width=360, height=740)
    player_with_balance(page, 1000)
    page.goto("/")
    games = {game["name"]: game for game in page.context.request.get("/api/games").json()["games"]}
    for name in ("cash", "astro"):
        game = games[name]
        assert game["title"] == game["table_title"]  # the table's title, not the class's
        card = page.locator(f".game-card[data-game={name}]")
        expect(card.locator("h3")).to_have_text(game["title"])
        expect(card.locator(".price")).to_have_attribute("data-cents", str(game["price_cents"]))
    astro_art = page.locator(".game-card[data-game=astro] .card-art .art-prize").inner_text()
    assert same_text(astro_art) == euros(games["astro"]["top_prize_cents"])
    screenshot(page, "lobby_table_titles")
    page.goto("/cash.html")
    expect(page.locator("#game-title")).to_have_text(games["cash"]["title"])
    expect(page.locator("#top-prize")).not_to_have_text("…")
    top_prize = page.locator("#top-prize").inner_text()
    assert same_text(top_prize) == euros(games["cash"]["top_prize_cents"])
    assert page.title() == f"{games['cash']['title']} — Grattage"


def test_a_deposit_whose_answer_is_lost_shows_the_balance_and_says_it_may_have_been_made(
    new_page: Any, live_server: Any, page_trouble: Any
) -> None:
    """The server kept the deposit but its answer was lost (503 ``outcome_unknown``): the page
    must not say « réessayez » as for a ticket (a second deposit is a new one), but show the
    balance as it is and say the deposit may have been made."""
    page = new_page(live_server.url, width=360, height=740)
    player_with_balance(page, 5_000)
    page.goto("/")
    page.wait_for_selector("#balance[data-cents='5000']")

    def kept_then_lost(route: Any) -> None:
        route.fetch()  # the server makes the deposit…
        route.fulfill(  # …and its answer is lost on the way
            status=503,
            json={"error": "outcome_unknown", "message": "the connection was lost during COMMIT"},
        )

    page_trouble.allow(r"status of 503 .*/api/me/deposits\)$")
    page.route("**/api/me/deposits", kept_then_lost)
    page.locator("#deposit-amount").fill("20")
    page.locator("#deposit-submit").click()
    message = page.locator("#deposit-message")
    expect(message).to_contain_text("il a peut-être été fait")
    expect(message).to_contain_text("Vérifiez votre solde")
    expect(message).not_to_contain_text("réessayez")
    expect(page.locator("#balance")).to_have_attribute("data-cents", "7000")
    screenshot(page, "lobby_deposit_outcome_unknown_360", full_page=False)
