"""The limits page and the operator's back office in a real browser, under the site's CSP."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import pytest
from browser_helpers import (
    PASSWORD,
    api_get,
    player_with_balance,
    screenshot,
    wait_for_result,
)
from playwright.sync_api import expect

from grattage.service import operators

pytestmark = pytest.mark.browser

OPERATOR = "chef@operator.example"


def french_ratio(value: Fraction) -> str:
    """What money.js formatRatio shows: rounded half-up to 2 decimals, a decimal comma and
    thousands grouped by a narrow no-break space (a block's payout so far can pass 1 000 %)."""
    hundredths = (value * 100 * 2 + 1) // 2
    whole = f"{hundredths // 100:,}".replace(",", "\u202f")
    return f"{whole},{hundredths % 100:02d}"


def french_short_ratio(value: Fraction) -> str:
    """formatShortRatio: at most two decimals, the zeros that say nothing dropped."""
    return french_ratio(value).rstrip("0").rstrip(",")


def test_the_limits_page_sends_a_logged_out_visitor_to_log_in(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    page.goto("/limits.html")
    page.wait_for_url(re.compile(r"/login\.html\?next=%2Flimits\.html"))


@pytest.fixture(scope="module")
def operator(live_server: Any) -> str:
    operators.create(live_server.app.state.platform, OPERATOR, PASSWORD)
    return OPERATOR


def test_the_back_office_lists_the_games_blocks_and_each_tiers_expected_count(
    new_page: Any, live_server: Any, operator: str
) -> None:
    page = new_page(live_server.url, width=1366, height=768)
    # The block's two charts are asked for together right after the server starts: they once
    # raced in matplotlib's first import (ImportError, 500); both must now draw.
    chart_address = re.compile(r"/api/admin/blocks/\d+/charts/\w+\.svg")
    charts: list[int] = []
    page.on(
        "response",
        lambda response: (
            charts.append(response.status) if chart_address.search(response.url) else None
        ),
    )
    player_with_balance(page, 1000)  # one ticket sold, so the expected counts are not all 0
    page.goto("/cash.html")
    page.get_by_role("button", name="Auto", exact=True).click()
    wait_for_result(page)
    page.goto("/admin/")
    page.locator("#login-form input[name=email]").fill(operator)
    page.locator("#login-form input[name=password]").fill(PASSWORD)
    page.get_by_role("button", name="Se connecter").click()
    expect(page.locator("#who-email")).to_have_text(operator)
    games = [game["name"] for game in api_get(page, "/api/games")["games"]]
    expect(page.locator("#blocks-game option")).to_have_text(["tous", *games])
    expect(page.locator("#emission-form select[name=game] option")).to_have_text(games)
    blocks = api_get(page, "/api/admin/blocks")["blocks"]
    sold = next(b for b in blocks if b["game"] == "cash" and b["units_sold"] > 0)
    row = page.locator("#blocks-rows").get_by_role("row", name=re.compile(rf"^#{sold['id']} "))
    payout = Fraction(sold["prizes_paid_cents"], sold["stakes_cents"])
    expect(row).to_contain_text(f"{french_short_ratio(payout * 100)}\u00a0%")
    row.get_by_role("button", name=f"Détails du bloc {sold['id']}").click()
    detail = api_get(page, f"/api/admin/blocks/{sold['id']}")
    tiers = page.locator("#tier-rows tr")
    expect(tiers).to_have_count(len(detail["tiers"]))
    for index, tier in enumerate(detail["tiers"]):
        expected = Fraction(tier["table_count"] * detail["units_sold"], detail["size"])
        expect(tiers.nth(index).locator("td").nth(3)).to_have_text(french_ratio(expected))
    for _ in range(100):  # the pictures load after the table; wait up to 10 s for both
        if len(charts) == 2:
            break
        page.wait_for_timeout(100)
    screenshot(page, "back_office_block")
    assert charts == [200, 200]  # both charts of the block were drawn


def test_the_back_office_shows_the_log_in_form_to_a_stranger(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    page.goto("/admin/")
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#office")).to_be_hidden()
