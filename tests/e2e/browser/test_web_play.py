"""The pages in a real browser (Chromium), against the app served on a local port (issue 4)."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import (
    PASSWORD,
    api_get,
    euros,
    new_email,
    player_with_balance,
    same_text,
    scratch,
    ticket_id_on,
    wait_for_result,
)
from conftest import screenshot

pytestmark = pytest.mark.browser

CASH_ZONES = 25
ASTRO_ZONES = 7


def test_sign_up_deposit_and_scratch_every_cash_zone_by_hand(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    page.goto("/")
    page.wait_for_url("**/login.html?next=*")
    page.get_by_role("tab", name="Créer un compte").click()
    page.fill("#signup-email", new_email())
    page.fill("#signup-password", PASSWORD)
    page.fill("#signup-birth", "1988-02-29")
    page.get_by_role("button", name="Créer mon compte").click()
    page.wait_for_url(f"{live_server.url}/")
    page.wait_for_selector(".game-card[data-game=cash]")
    assert page.locator("#balance").get_attribute("data-cents") == "0"

    page.get_by_role("button", name="20 €").click()
    page.wait_for_selector("#balance[data-cents='2000']")
    screenshot(page, "cash_by_hand_1_lobby")

    page.locator(".game-card[data-game=cash] a.btn").click()
    page.wait_for_url("**/cash.html")
    page.get_by_role("button", name="Jouez", exact=True).click()
    ticket_id = ticket_id_on(page)
    page.wait_for_selector("#balance[data-cents='1500']")
    zones = page.locator("#ticket .zone")
    assert zones.count() == CASH_ZONES
    for index in range(CASH_ZONES):
        zone = zones.nth(index)
        scratch(page, zone)
        zone.locator(".zone-content .number").wait_for()
    prize_on_screen = wait_for_result(page)
    screenshot(page, "cash_by_hand_2_scratched")

    ticket = api_get(page, f"/api/tickets/{ticket_id}")
    assert ticket["state"] == "finished"
    assert ticket["finished_by"] == "player"
    assert prize_on_screen == ticket["prize_cents"]
    assert same_text(page.locator("#total").inner_text()) == euros(ticket["prize_cents"])
    assert page.locator("#ticket .zone.revealed").count() == CASH_ZONES
    # What each zone shows is what the server revealed.
    for index, star in enumerate(ticket["document"]["your_numbers"]):
        zone = page.locator(f"[data-zone='your_numbers/{index}']")
        assert zone.locator(".number").inner_text() == str(star["number"])
        assert same_text(zone.locator(".amount").inner_text()) == euros(star["amount_cents"])
    winning = set(ticket["document"]["winning_numbers"])
    matches = [s for s in ticket["document"]["your_numbers"] if s["number"] in winning]
    assert page.locator("#yours .zone.match").count() == len(matches)
    assert sum(s["amount_cents"] for s in matches) == ticket["prize_cents"]
    me = api_get(page, "/api/me")
    page.wait_for_selector(f"#balance[data-cents='{me['balance_cents']}']")
    assert me["balance_cents"] == 1500 + ticket["prize_cents"]
