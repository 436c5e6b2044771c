"""The game pages, phone first (issue 16, item 5): after a game — scratched by hand or played
in Auto, won or lost — the whole ticket, its result and the buttons that buy the next one are in
the window at 360×740 and at 1366×768, without the player scrolling."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import (
    player_with_balance,
    result_past_any_big_win,
    screenshot,
    ticket_id_on,
    zigzag,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": (360, 740), "laptop": (1366, 768)}
MAX_TICKETS = 12  # half the test tables' tickets win: both outcomes come well before this

# Where each part of the game stands in the window (CSS pixels), and what covers its top.
LAYOUT_JS = """() => {
  const box = (selector) => {
    const r = document.querySelector(selector).getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
  };
  const header = document.querySelector('.topbar');
  const sticky = ['sticky', 'fixed'].includes(getComputedStyle(header).position);
  return {
    covered: sticky ? header.getBoundingClientRect().bottom : 0,
    height: window.innerHeight,
    width: window.innerWidth,
    controls: box('.controls'),
    ticket: box('#ticket'),
    result: box('#result'),
  };
}"""


def out_of_sight(page: Any) -> list[str]:
    """The parts of the game the player cannot see without scrolling, with where they are."""
    layout = page.evaluate(LAYOUT_JS)
    hidden = []
    for part in ("controls", "ticket", "result"):
        box = layout[part]
        if box["top"] < layout["covered"] - 0.5 or box["bottom"] > layout["height"] + 0.5:
            hidden.append(f"{part} {box['top']:.0f}–{box['bottom']:.0f}")
        if box["left"] < -0.5 or box["right"] > layout["width"] + 0.5:
            hidden.append(f"{part} {box['left']:.0f}–{box['right']:.0f} (sideways)")
    if hidden:
        hidden.append(f"window {layout['covered']:.0f}–{layout['height']}")
    return hidden


def scratch_in_place(page: Any, zone: Any, rows: int = 6) -> None:
    """Scratch a zone with the mouse where it is: the test never scrolls for the player."""
    box = zone.locator("canvas.scratch-cover").bounding_box()
    assert box is not None, "the zone has no scratch layer to scratch"
    assert box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"], (
        f"zone {zone.get_attribute('data-zone')} is out of the window: {box}"
    )
    zigzag(page, box, rows)


def scratch_every_zone(page: Any, game: str) -> None:
    zones = page.locator("#ticket .zone")
    for index in range(zones.count()):
        zone = zones.nth(index)
        if zone.get_attribute("data-zone") == "banner":  # Astro's phase 2: once phase 1 is in
            expect(zone).not_to_have_class("locked", timeout=15_000)
            page.wait_for_selector("[data-zone=banner]:not(.locked)")
        scratch_in_place(page, zone)
        zone.locator(".zone-content > *").first.wait_for()


def play_one(page: Any, game: str, mode: str, during: str | None = None) -> int:
    """Buy and finish one ticket; ``during``: the name of a screenshot taken as it starts."""
    previous = page.locator("#ticket").get_attribute("data-ticket-id")
    buttons = {"play": "Jouez" if game == "cash" else "Jouer", "auto": "Auto"}
    page.get_by_role("button", name=buttons[mode], exact=True).click()
    if previous:
        expect(page.locator("#ticket")).not_to_have_attribute("data-ticket-id", previous)
    ticket_id_on(page)
    if during:
        screenshot(page, during, full_page=False)
    if mode == "play":
        scratch_every_zone(page, game)
    return result_past_any_big_win(page)  # Astro's test table holds a jackpot


@pytest.mark.parametrize("mode", ["play", "auto"])
@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("game", ["cash", "astro"])
def test_after_a_win_and_a_loss_the_ticket_its_result_and_the_buttons_fit_the_window(
    new_page: Any, live_server: Any, game: str, viewport: str, mode: str
) -> None:
    width, height = VIEWPORTS[viewport]
    page = new_page(live_server.url, width=width, height=height)
    player_with_balance(page, 10_000)
    page.goto(f"/{game}.html")
    page.wait_for_selector("#balance[data-cents='10000']")
    if game == "astro":
        page.get_by_role("radio", name="Sagittaire").click()
    screenshot(page, f"fit_{game}_{viewport}_0_before", full_page=False)
    seen: dict[str, list[str]] = {}
    for _ in range(MAX_TICKETS):
        prize = play_one(
            page, game, mode, during=None if seen else f"fit_{game}_{viewport}_{mode}_during"
        )
        outcome = "win" if prize > 0 else "loss"
        if outcome not in seen:
            seen[outcome] = out_of_sight(page)
            screenshot(page, f"fit_{game}_{viewport}_{mode}_{outcome}", full_page=False)
        if len(seen) == 2:
            break
    assert set(seen) == {"win", "loss"}, f"only {set(seen)} in {MAX_TICKETS} tickets"
    assert seen == {"win": [], "loss": []}


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("game", ["cash", "astro"])
def test_a_refused_purchase_is_told_in_french_right_under_the_buttons(
    new_page: Any, live_server: Any, game: str, viewport: str
) -> None:
    width, height = VIEWPORTS[viewport]
    page = new_page(live_server.url, width=width, height=height)
    player_with_balance(page, 0)
    page.goto(f"/{game}.html")
    page.wait_for_selector("#balance[data-cents='0']")
    if game == "astro":  # first the page's own refusal: no sign yet
        page.get_by_role("button", name="Jouer", exact=True).click()
        expect(page.locator("#play-notice")).to_contain_text("Choisissez d'abord votre signe")
        page.get_by_role("radio", name="Poissons").click()
    with page.expect_response(f"**/api/games/{game}/tickets") as refused:
        page.get_by_role("button", name="Auto", exact=True).click()
    server_message = refused.value.json()["message"]
    notice = page.locator("#play-notice")
    expect(notice).to_contain_text("Solde insuffisant")
    assert server_message not in notice.inner_text()  # the page's French, not the server's words
    expect(page.locator("#notice")).to_be_hidden()
    controls, told = page.locator(".controls").bounding_box(), notice.bounding_box()
    assert controls is not None and told is not None
    assert 0 <= told["y"] - (controls["y"] + controls["height"]) <= 16, "right under the buttons"
    assert told["y"] + told["height"] <= height, "in the window"
    screenshot(page, f"fit_{game}_{viewport}_refused", full_page=False)
