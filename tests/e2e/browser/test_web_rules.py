"""« Règles du jeu » (issue 16): each game's rules page is public — a visitor opens it from the
log-in page and reads how to play, the prize table of the block on sale with each prize's odds
exactly as the API's integers give them, the prizes left, the table's source and the
regulation's date — and the lobby's cards and the game pages link it."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any

import pytest
from browser_helpers import player_with_balance, screenshot
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

NBSP, NNBSP = "\u00a0", "\u202f"
REGULATION_DAYS = {"cash": "16 mars 2009", "astro": "29 août 2005"}
SIZES = ((360, 740), (1366, 768))


def short_ratio(numerator: int, denominator: int, places: int = 2) -> str:
    """The exact ratio rounded half up to at most ``places`` decimals, French style: « 3,83 »,
    « 4 000 000 » (narrow no-break spaces between thousands, no useless zeros)."""
    scaled = Fraction(numerator, denominator) * 10**places
    rounded = int(scaled + Fraction(1, 2))
    whole, decimals = divmod(rounded, 10**places)
    text = f"{whole:,}".replace(",", NNBSP)
    digits = f"{decimals:0{places}d}".rstrip("0")
    return f"{text},{digits}" if digits else text


def odds(block_size: int, count: int) -> str:
    return NBSP.join(("1", "chance", "sur", short_ratio(block_size, count)))


def euros(cents: int) -> str:
    whole, rest = divmod(cents, 100)
    grouped = f"{whole:,}".replace(",", NNBSP)
    return f"{grouped},{rest:02d}{NBSP}€" if rest else f"{grouped}{NBSP}€"


def by_amount(tiers: list[dict[str, int]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for tier in sorted(tiers, key=lambda tier: -tier["prize_cents"]):
        counts[tier["prize_cents"]] = counts.get(tier["prize_cents"], 0) + tier["count"]
    return counts


PLAIN_SPACE_PUNCTUATION = re.compile(r"\S[ ][:;!?»]|«[ ]")
"""A plain space a phone could wrap before « : ; ! ? » or after « « »."""


def plain_spaces_on(page: Any) -> list[str]:
    text = page.locator("body").text_content() or ""
    return [
        text[max(0, m.start() - 30) : m.end() + 10] for m in PLAIN_SPACE_PUNCTUATION.finditer(text)
    ]


def no_horizontal_scroll(page: Any, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def check_rules_page(page: Any, game: dict[str, Any]) -> None:
    """The page shows the API's figures, each computed from its exact integers."""
    expect(page.locator("#rules-game-title")).to_have_text(game["title"])
    expect(page.locator("#rules-regulation-date")).to_have_text(REGULATION_DAYS[game["name"]])
    rows = page.locator(".rules-prize-table tbody tr")
    table = by_amount(game["prize_table"])
    expect(rows).to_have_count(len(table))
    left: dict[int, int] = {}
    for block in game["open_blocks"]:
        for cents, count in by_amount(block["prizes_remaining"]).items():
            left[cents] = left.get(cents, 0) + count
    for cents, count in table.items():
        row = page.locator(f'.rules-prize-table tbody tr[data-cents="{cents}"]')
        expect(row.locator(".prize")).to_have_text(euros(cents))
        expect(row.locator(".count")).to_have_text(short_ratio(count, 1, 0))
        expect(row.locator(".odds")).to_have_text(odds(game["block_size"], count))
        expect(row.locator(".left")).to_have_text(short_ratio(left[cents], 1, 0))
    overall = odds(game["block_size"], game["winning_tickets"])
    expect(page.locator("#rules-facts .overall-odds")).to_have_text(overall)
    expect(page.locator(".rules-prize-table tfoot .odds")).to_have_text(overall)
    payout = short_ratio(game["prizes_total_cents"] * 100, game["block_size"] * game["price_cents"])
    expect(page.locator("#rules-facts .payout")).to_have_text(f"{payout}{NBSP}%")
    expect(page.locator("#rules-source")).to_contain_text(f"Source du tableau{NBSP}: ")
    expect(page.locator("#rules-source")).to_contain_text(game["table_source"])
    badge = page.locator("#rules-source .reconstruction")
    if game["reconstruction"]:
        expect(badge).to_have_text("tableau reconstitué")
    else:
        expect(badge).to_have_count(0)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}px")
def test_a_visitor_opens_each_games_rules_from_the_login_page_and_reads_the_apis_exact_odds(
    new_page: Any, live_server: Any, size: tuple[int, int]
) -> None:
    page = new_page(live_server.url, width=size[0], height=size[1])
    games = {game["name"]: game for game in page.context.request.get("/api/games").json()["games"]}
    for name, game in games.items():
        page.goto("/login.html")
        expect(page.locator("#rules-links a")).to_have_count(len(games))
        screenshot(page, f"login_rules_links_{size[0]}")
        page.locator(f'#rules-links a[data-game="{name}"]').click()
        expect(page).to_have_url(f"{live_server.url}/regles/{name}")
        check_rules_page(page, game)
        expect(page.locator(".rules-invite")).to_be_visible()  # sign up to play
        expect(page.locator("#balance")).to_be_hidden()  # a visitor has no wallet
        expect(page.locator("#rules-play")).to_be_hidden()
        odds_cell = page.locator(".rules-prize-table tbody .odds").first
        assert odds_cell.evaluate("cell => cell.getClientRects().length") == 1  # one line
        no_horizontal_scroll(page, size[0])
        assert plain_spaces_on(page) == []  # French typography, in the templates and rules.js
        screenshot(page, f"rules_{name}_visitor_{size[0]}")


def test_a_game_with_no_block_on_sale_still_shows_its_rules_and_says_so(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url, width=360, height=740)

    def astro_sold_out(route: Any) -> None:
        answer = route.fetch()
        listed = answer.json()
        for game in listed["games"]:
            if game["name"] == "astro":
                game.update(on_sale=False, off_sale_reason="sold_out", open_blocks=[])
                game["top_prizes_remaining"] = None
        route.fulfill(response=answer, body=json.dumps(listed))

    page.route("**/api/games", astro_sold_out)
    page.goto("/regles/astro")
    expect(page.locator("#rules-sale")).to_contain_text("Aucun bloc de ce jeu n'est en vente")
    expect(page.locator("#how-title")).to_have_text("Comment jouer")
    expect(page.locator(".rules-section ol li").first).to_contain_text("Choisissez votre signe")
    expect(page.locator(".rules-prize-table tbody tr").first).to_be_visible()
    expect(page.locator(".rules-prize-table .left")).to_have_count(0)  # nothing to count down
    expect(page.locator("#rules-regulation-date")).to_have_text(REGULATION_DAYS["astro"])
    no_horizontal_scroll(page, 360)
    screenshot(page, "rules_astro_no_block_on_sale_360")


def test_the_lobby_cards_and_the_game_pages_link_each_games_rules_and_a_player_keeps_the_header(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url, width=1366, height=768)
    player_with_balance(page, 1000)
    page.goto("/")
    games = page.context.request.get("/api/games").json()["games"]
    for game in games:
        link = page.locator(f".game-card[data-game={game['name']}] .rules-link a")
        expect(link).to_have_attribute("href", game["rules_page"])
    page.goto("/cash.html")
    page.locator(".rules-link a").click()
    expect(page).to_have_url(f"{live_server.url}/regles/cash")
    expect(page.locator("body")).not_to_have_class("visitor")
    expect(page.locator("#balance")).to_have_text(f"10,00{NBSP}€")
    expect(page.locator(".rules-invite")).to_be_hidden()
    expect(page.locator("#rules-play")).to_have_attribute("href", "/cash.html")
    expect(page.locator("#rules-inactivity")).to_have_text("30")  # the server's delay
    page.goto("/astro.html")
    page.locator(".rules-link a").click()
    expect(page).to_have_url(f"{live_server.url}/regles/astro")
    screenshot(page, "rules_astro_player_1366")


def test_the_regulations_cash_table_reads_one_chance_in_3_83_and_a_75_percent_payout(
    new_page: Any, live_server: Any
) -> None:
    from grattage.games.registry import default_table

    table = default_table("cash")  # article 3's table, 12 000 000 units at 5 €

    def the_regulations_block(route: Any) -> None:
        answer = route.fetch()
        listed = answer.json()
        for game in listed["games"]:
            if game["name"] == "cash":
                tiers = [{"prize_cents": t.prize_cents, "count": t.count} for t in table.tiers]
                size = table.block_size
                game.update(
                    block_size=size,
                    price_cents=table.price_cents,
                    winning_tickets=table.prizes_count,
                    prizes_total_cents=table.prizes_total_cents,
                    top_prize_cents=tiers[0]["prize_cents"],
                    prize_table=tiers,
                    open_blocks=[
                        {"block_id": 7, "size": size, "sold": 0, "prizes_remaining": tiers}
                    ],
                )
        route.fulfill(response=answer, body=json.dumps(listed))

    page = new_page(live_server.url, width=360, height=740)
    page.route("**/api/games", the_regulations_block)
    page.goto("/regles/cash")
    expect(page.locator("#rules-facts .overall-odds")).to_have_text(
        f"1{NBSP}chance{NBSP}sur{NBSP}3,83"
    )
    expect(page.locator("#rules-facts .payout")).to_have_text(f"75{NBSP}%")
    top = page.locator('.rules-prize-table tbody tr[data-cents="50000000"]')
    expect(top.locator(".odds")).to_have_text(odds(12_000_000, 3))
    assert odds(12_000_000, 3) == f"1{NBSP}chance{NBSP}sur{NBSP}4{NNBSP}000{NNBSP}000"
    hundred = page.locator('.rules-prize-table tbody tr[data-cents="10000"] .odds')
    expect(hundred).to_have_text(f"1{NBSP}chance{NBSP}sur{NBSP}133,33")
    expect(page.locator("#rules-sale")).to_have_text(
        f"Bloc en vente{NBSP}: n°{NBSP}7, 12{NNBSP}000{NNBSP}000 tickets restants sur "
        f"12{NNBSP}000{NNBSP}000."
    )
    for cell in page.locator(".rules-prize-table .odds").all():
        assert cell.evaluate("cell => cell.getClientRects().length") == 1
        box = cell.bounding_box()
        assert box is not None and box["height"] < 40  # one line, never wrapped
    no_horizontal_scroll(page, 360)
    screenshot(page, "rules_cash_regulation_table_360")
