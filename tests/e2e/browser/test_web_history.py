"""The history in a real browser: a past ticket replayed, a ticket resumed after a reload,
the proof a player checks offline."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import (
    ASTRO_ZONES,
    CASH_ZONES,
    WAIT_MS,
    api_get,
    player_with_balance,
    scratch,
    screenshot,
    ticket_id_on,
    wait_for_result,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_history_replays_a_past_ticket(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 2000)
    page.goto("/cash.html")
    page.get_by_role("button", name="Auto", exact=True).click()
    cash_id = ticket_id_on(page)
    wait_for_result(page)
    page.goto("/astro.html")
    page.get_by_role("radio", name="Poissons").click()
    page.get_by_role("button", name="Auto", exact=True).click()
    astro_id = ticket_id_on(page)
    wait_for_result(page)

    page.goto("/")  # the last game is one click from the lobby
    page.locator("#last-game").click()
    page.wait_for_url(f"**/astro.html?ticket={astro_id}")
    page.wait_for_selector("#replay-banner:not([hidden])")
    assert page.locator("#ticket .zone.revealed").count() == ASTRO_ZONES

    page.goto("/history.html")
    rows = page.locator(".history-row")
    rows.first.wait_for()
    assert [rows.nth(i).get_attribute("data-ticket-id") for i in range(rows.count())] == [
        str(astro_id),
        str(cash_id),
    ]
    screenshot(page, "history_list")
    page.locator(f".history-row[data-ticket-id='{cash_id}'] a").click()
    page.wait_for_url(f"**/cash.html?ticket={cash_id}")
    page.wait_for_selector("#replay-banner:not([hidden])")
    prize_on_screen = wait_for_result(page)
    ticket = api_get(page, f"/api/tickets/{cash_id}")
    assert prize_on_screen == ticket["prize_cents"]
    assert page.locator("#ticket .zone.revealed").count() == CASH_ZONES
    assert page.locator("#ticket canvas").count() == 0  # nothing left to scratch
    for index, number in enumerate(ticket["document"]["winning_numbers"]):
        clover = page.locator(f"[data-zone='winning_numbers/{index}'] .number")
        assert clover.inner_text() == str(number)
    for index, star in enumerate(ticket["document"]["your_numbers"]):
        zone = page.locator(f"[data-zone='your_numbers/{index}']")
        assert zone.locator(".number").inner_text() == str(star["number"])
    screenshot(page, "history_replay_cash")


def test_a_reload_in_the_middle_of_a_ticket_resumes_it(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.get_by_role("button", name="Jouez", exact=True).click()
    ticket_id = ticket_id_on(page)
    zones = page.locator("#ticket .zone")
    for index in range(3):
        scratch(page, zones.nth(index))
        zones.nth(index).locator(".number").wait_for()
    page.reload()
    page.wait_for_selector(f"#ticket[data-ticket-id='{ticket_id}']")
    expect(page.locator("#ticket .zone.revealed")).to_have_count(3, timeout=WAIT_MS)
    assert page.locator("#play").is_disabled()  # no second ticket while this one is in play
    for index in range(3, CASH_ZONES):
        scratch(page, zones.nth(index))
    prize_on_screen = wait_for_result(page)
    assert prize_on_screen == api_get(page, f"/api/tickets/{ticket_id}")["prize_cents"]
    screenshot(page, "cash_resumed_after_reload")


def test_the_history_offers_a_proof_that_verifies_offline(new_page: Any, live_server: Any) -> None:
    import json
    from pathlib import Path

    from grattage.blocks.proofs_v2 import verify_ticket_proof

    page = new_page(live_server.url, accept_downloads=True)
    player_with_balance(page, 1000)
    page.goto("/astro.html")
    page.get_by_role("radio", name="Lion").click()
    page.get_by_role("button", name="Auto", exact=True).click()
    astro_id = ticket_id_on(page)
    wait_for_result(page)
    page.goto("/history.html")
    row = page.locator(f".history-row[data-ticket-id='{astro_id}']")
    row.get_by_role("button", name="Vérifier ce ticket").click()
    panel = row.locator(".proof")
    # Said plainly first, checked in the page at once, the details folded for experts.
    expect(panel.locator(".proof-lead")).to_contain_text("personne, pas même nous")
    expect(panel).to_contain_text("Tout est vérifié, dans votre navigateur", timeout=WAIT_MS)
    assert "comptée depuis 0" not in panel.inner_text()
    command = panel.locator("code.command")
    expect(command).to_be_hidden()
    panel.locator("summary", has_text="Pour les experts").click()
    expect(command).to_contain_text(f"grattage verify-ticket ticket-{astro_id}-preuve.json")
    screenshot(page, "history_proof")
    with page.expect_download() as download:
        panel.get_by_role("button", name="Télécharger la preuve").click()
    proof = json.loads(Path(download.value.path()).read_text("utf-8"))
    verified = verify_ticket_proof(proof)
    assert verified.prize_cents == api_get(page, f"/api/tickets/{astro_id}")["prize_cents"]
    assert proof["unit"]["choice"] == "leo"
