"""Astro's sign picker, phone first (issue 16, item 5): once a sign is chosen the twelve fold
into one line, « Votre signe : Sagittaire — Changer », a disclosure button that opens them again; the
choice is remembered; the specimen's hint leaves the banner's text in sight."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import player_with_balance, screenshot, ticket_id_on
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": (360, 740), "laptop": (1366, 768)}


def astro_page(new_page: Any, live_server: Any, viewport: str) -> Any:
    width, height = VIEWPORTS[viewport]
    page = new_page(live_server.url, width=width, height=height)
    player_with_balance(page, 1000)
    page.goto("/astro.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    return page


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_chosen_sign_folds_the_twelve_into_one_line_that_opens_them_again(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    page = astro_page(new_page, live_server, viewport)
    change = page.get_by_role("button", name="Changer")
    expect(page.get_by_role("radio")).to_have_count(12)  # nothing chosen yet: all open
    expect(change).to_be_hidden()
    screenshot(page, f"picker_{viewport}_1_open_nothing_chosen", full_page=False)

    page.get_by_role("radio", name="Sagittaire").click()
    expect(page.get_by_role("radio")).to_have_count(0)  # folded, for screen readers too
    summary = page.locator("#sign-summary")
    expect(summary).to_contain_text("Votre signe")
    expect(summary).to_contain_text("Sagittaire")
    expect(change).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("button", name="Jouer", exact=True)).to_be_focused()
    summary_box, play_box = summary.bounding_box(), page.locator("#play").bounding_box()
    assert summary_box is not None and play_box is not None
    # One line, with the longest names too (« Sagittaire », « Capricorne »).
    assert summary_box["height"] < 48, f"the folded picker takes {summary_box['height']} px"
    screenshot(page, f"picker_{viewport}_2_folded", full_page=False)

    change.click()
    expect(change).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("radio")).to_have_count(12)
    expect(page.get_by_role("radio", name="Sagittaire")).to_be_focused()
    page.keyboard.press("ArrowRight")  # the arrows go through the signs, the group stays open
    expect(page.locator("#chosen-sign")).to_have_attribute("data-sign", "capricorn")
    expect(page.get_by_role("radio")).to_have_count(12)
    screenshot(page, f"picker_{viewport}_3_open_again", full_page=False)
    page.keyboard.press("Enter")  # picking it folds
    expect(change).to_have_attribute("aria-expanded", "false")
    expect(summary).to_contain_text("Capricorne")

    page.reload()  # remembered, and folded from the start
    page.wait_for_selector("#balance[data-cents='1000']")
    expect(summary).to_contain_text("Capricorne")
    expect(page.get_by_role("radio")).to_have_count(0)
    page.get_by_role("button", name="Jouer", exact=True).click()
    ticket_id_on(page)
    expect(change).to_be_disabled()  # the sign of a ticket in play is fixed


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_specimen_hint_leaves_the_banners_text_in_sight(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    page = astro_page(new_page, live_server, viewport)
    page.get_by_role("radio", name="Taureau").click()
    hint = page.locator(".specimen-hint")
    expect(hint).to_be_visible()
    hint_box = hint.bounding_box()
    banner_box = page.locator("[data-zone=banner]").bounding_box()
    assert hint_box is not None and banner_box is not None
    overlap = min(hint_box["y"] + hint_box["height"], banner_box["y"] + banner_box["height"]) - max(
        hint_box["y"], banner_box["y"]
    )
    assert overlap <= 0, f"the hint covers {overlap:.0f} px of the banner"
    screenshot(page, f"picker_{viewport}_specimen_hint", full_page=False)
