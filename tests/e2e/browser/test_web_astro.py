"""Astro in a real browser: a chosen sign in Auto, each zone scratched by hand in « Jouer »
(its regulation, art. 4.3: no « Tout découvrir »), the banner locked until phase one."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import (
    ASTRO_ZONES,
    WAIT_MS,
    api_get,
    euros,
    player_with_balance,
    same_text,
    scratch,
    scratch_astro_discs_and_gain,
    scratch_the_whole_astro_ticket,
    screenshot,
    ticket_id_on,
    wait_for_result,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_astro_with_a_chosen_sign_in_auto(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 10_000)
    page.goto("/astro.html")
    page.wait_for_selector("#balance[data-cents='10000']")
    assert page.locator(".sign-choice svg").count() == 12
    page.get_by_role("radio", name="Scorpion").click()
    page.wait_for_selector("#chosen-sign[data-sign=scorpio] svg")
    screenshot(page, "astro_auto_1_sign_chosen")

    # Play until a ticket wins (half of the test table wins), checking every ticket on the way.
    for _ in range(20):
        previous = page.locator("#ticket").get_attribute("data-ticket-id")
        page.get_by_role("button", name="Auto", exact=True).click()
        if previous:  # locator waits: the pages' CSP forbids eval (wait_for_function)
            expect(page.locator("#ticket")).not_to_have_attribute(
                "data-ticket-id", previous, timeout=WAIT_MS
            )
        ticket_id = ticket_id_on(page)
        prize_on_screen = wait_for_result(page)
        ticket = api_get(page, f"/api/tickets/{ticket_id}")
        check_astro_ticket_on_screen(page, ticket, prize_on_screen)
        if ticket["prize_cents"]:
            break
    else:
        pytest.fail("no winning Astro ticket in 20: cannot check the win message")
    screenshot(page, "astro_auto_2_win")
    me = api_get(page, "/api/me")
    page.wait_for_selector(f"#balance[data-cents='{me['balance_cents']}']")


def test_astro_offers_no_tout_decouvrir_its_player_scratches_each_zone(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/astro.html")
    page.get_by_role("radio", name="Vierge").click()
    page.get_by_role("button", name="Jouer", exact=True).click()
    ticket_id = ticket_id_on(page)
    expect(page.get_by_role("button", name="Tout découvrir")).to_have_count(0)
    prize = scratch_the_whole_astro_ticket(page)
    ticket = api_get(page, f"/api/tickets/{ticket_id}")
    assert (ticket["state"], ticket["prize_cents"]) == ("finished", prize)
    assert ticket["finished_by"] == "player"


def check_astro_ticket_on_screen(page: Any, ticket: dict[str, Any], prize_on_screen: int) -> None:
    assert (ticket["mode"], ticket["sign"], ticket["state"]) == ("auto", "scorpio", "finished")
    assert prize_on_screen == ticket["prize_cents"]
    assert page.locator("#ticket .zone.revealed").count() == ASTRO_ZONES
    document = ticket["document"]
    for index, symbol in enumerate(document["symbols"]):
        disc = page.locator(f"[data-zone='symbols/{index}'] .zone-content")
        assert disc.get_attribute("data-symbol") == symbol
    banner_text = page.locator("[data-zone=banner] .banner-text").inner_text()
    assert same_text(banner_text) == same_text(document["banner"]["text"])  # French spaces
    message = same_text(page.locator("#result").inner_text())
    if ticket["prize_cents"]:
        # The win message: gain × multiplier = prize.
        assert euros(document["gain_cents"]) in message
        assert message.endswith(euros(ticket["prize_cents"]))
        if document["banner"]["multiplier"]:
            assert f"×{document['banner']['multiplier']}=" in message
        assert page.locator(".disc.is-sign").count() == 2
    else:
        assert "Pasdegain" in message


def test_the_astro_banner_cannot_be_scratched_before_phase_one(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/astro.html")
    page.get_by_role("radio", name="Cancer").focus()
    page.keyboard.press("ArrowRight")  # the signs are a radio group: arrows pick the next one
    page.wait_for_selector("#chosen-sign[data-sign=leo]")
    reveal_bodies: list[str] = []
    page.on(
        "request",
        lambda request: (
            reveal_bodies.append(request.post_data or "")
            if request.url.endswith("/reveal")
            else None
        ),
    )
    page.get_by_role("button", name="Jouer", exact=True).click()
    ticket_id = ticket_id_on(page)
    banner = page.locator("[data-zone=banner]")
    assert "locked" in (banner.get_attribute("class") or "")
    assert banner.get_attribute("aria-disabled") == "true"

    scratch(page, banner)  # with the mouse…
    banner.focus()
    page.keyboard.press("Enter")  # …and with the keyboard
    page.wait_for_timeout(300)
    assert not any("banner" in body for body in reveal_bodies)
    assert "revealed" not in (banner.get_attribute("class") or "")
    assert banner.get_attribute("data-cleared") is None  # the coating was not even scratched
    assert api_get(page, f"/api/tickets/{ticket_id}")["locked_zones"] == ["banner"]
    screenshot(page, "astro_banner_locked")

    scratch_astro_discs_and_gain(page)
    expect(banner).not_to_have_class(re.compile(r"(^|\s)locked(\s|$)"), timeout=WAIT_MS)
    assert not page.locator("#result").inner_text()  # the game is not over yet
    scratch(page, banner)
    banner.locator(".banner-text").wait_for()
    prize_on_screen = wait_for_result(page)
    screenshot(page, "astro_banner_after_phase_one")
    ticket = api_get(page, f"/api/tickets/{ticket_id}")
    assert ticket["state"] == "finished"
    assert prize_on_screen == ticket["prize_cents"]


@pytest.mark.parametrize(
    ("title", "badges"),
    [("Astro (tableau de lots reconstitué)", 0), ("Astro", 1)],
    ids=["title-says-it", "title-silent"],
)
def test_a_reconstructed_table_is_said_once_under_the_game_s_title(
    new_page: Any, live_server: Any, title: str, badges: int
) -> None:
    """The real Astro's title already says « tableau de lots reconstitué »: no badge repeats it;
    a title that does not say it gets the badge."""
    page = new_page(live_server.url, width=360, height=740)
    player_with_balance(page, 1000)

    def reconstructed(route: Any) -> None:
        answer = route.fetch().json()
        for game in answer["games"]:
            if game["name"] == "astro":
                game.update(title=title, reconstruction=True)
        route.fulfill(json=answer)

    page.route("**/api/games", reconstructed)
    page.goto("/astro.html")
    expect(page.locator("#game-title")).to_have_text(title)
    head = page.locator(".game-head")
    expect(head.locator(".game-sub")).to_contain_text("Ticket à")
    expect(head.locator(".badge")).to_have_count(badges)
    assert head.inner_text().count("reconstitué") == 1, head.inner_text()
    screenshot(page, f"astro_title_reconstruction_{badges}_badge", full_page=False)
