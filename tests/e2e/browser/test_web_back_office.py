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
    same_text,
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


def test_the_limits_page_works_under_the_csp_and_saves_a_limit(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 3000)
    page.goto("/limits.html")
    expect(page.locator("#deposit-limit")).to_contain_text("Deposits:")
    expect(page.locator("#totals")).to_contain_text("deposited")
    assert same_text(page.locator("#totals").inner_text()).find("30€") > 0
    expect(page.locator("#days tr")).to_have_count(1)
    page.locator("#limits-form input[name=deposit]").fill("45.50")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#flash")).to_have_text("Limits saved.")
    assert api_get(page, "/api/me/limits")["deposit"]["weekly_limit_cents"] == 4550
    expect(page.locator("#deposit-limit")).to_contain_text("left")
    # Looks like its old self: a light page, not the games' night sky.
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(245, 247, 250)"
    screenshot(page, "limits_saved")


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
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#who-email")).to_have_text(operator)
    games = [game["name"] for game in api_get(page, "/api/games")["games"]]
    expect(page.locator("#blocks-game option")).to_have_text(["all", *games])
    expect(page.locator("#emission-form select[name=game] option")).to_have_text(games)
    blocks = api_get(page, "/api/admin/blocks")["blocks"]
    sold = next(b for b in blocks if b["game"] == "cash" and b["units_sold"] > 0)
    row = page.locator("#blocks-rows").get_by_role("row", name=re.compile(rf"^#{sold['id']} "))
    payout = Fraction(sold["prizes_paid_cents"], sold["stakes_cents"])
    expect(row).to_contain_text(f"{french_ratio(payout * 100)}\u00a0%")
    row.get_by_role("button", name="Details").click()
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
