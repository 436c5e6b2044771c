"""« Essayer gratuitement »: a visitor plays Cash and Astro with play money at the table's odds,
marked on every screen, and a logged-in player's real balance and ledger are never touched."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import (
    api_get,
    dismiss_any_big_win,
    player_with_balance,
    result_past_any_big_win,
    same_text,
    scratch,
    scratch_the_whole_astro_ticket,
    screenshot,
    ticket_id_on,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

VIEWPORTS = [pytest.param((360, 740), id="360x740"), pytest.param((1366, 768), id="1366x768")]
BANNER = "Mode essai — argent fictif, aucun gain réel"
START_CENTS = 5_000


def odds_of(page: Any, game: str) -> str:
    """« 1 chance sur 3,83 » from the try mode's own figures (its table's)."""
    games = {shown["name"]: shown for shown in api_get(page, "/api/try/games")["games"]}
    size, winning = games[game]["block_size"], games[game]["winning_tickets"]
    ratio = f"{size / winning:.2f}".rstrip("0").rstrip(".").replace(".", ",")
    return f"1 chance sur {ratio}"


def check_try_screen(page: Any, game: str) -> None:
    """What every try screen shows: the banner, the real game's odds, play money."""
    expect(page.locator("#try-banner")).to_contain_text(BANNER)
    expect(page.locator("#try-odds")).to_contain_text("Mêmes chances que le vrai jeu")
    odds = page.locator("#try-odds strong").inner_text()
    assert same_text(odds) == same_text(odds_of(page, game))
    expect(page.locator(".try-wallet")).to_contain_text("Solde fictif")
    expect(page.locator("#logout")).to_have_count(0)  # no account here: nothing to log out of
    expect(page).to_have_title(re.compile(r"^Essai gratuit — "))  # a tab says it is a try


def balance_cents(page: Any) -> int:
    return int(page.locator("#balance").get_attribute("data-cents") or "-1")


def play_again(page: Any, button: str) -> int:
    previous = page.locator("#ticket").get_attribute("data-ticket-id")
    page.get_by_role("button", name=button, exact=True).click()
    if previous:
        expect(page.locator("#ticket")).not_to_have_attribute("data-ticket-id", previous)
    return ticket_id_on(page)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_visitor_tries_cash_and_astro_with_play_money_at_the_table_s_odds(
    new_page: Any, live_server: Any, viewport: tuple[int, int]
) -> None:
    width, height = viewport
    page = new_page(live_server.url, width=width, height=height)
    tag = f"{width}x{height}"
    page.goto("/login.html")
    page.get_by_role("link", name="Essayer Cash").click()
    page.wait_for_url("**/essai/cash")
    page.wait_for_selector(f"#balance[data-cents='{START_CENTS}']")
    check_try_screen(page, "cash")
    expect(page.locator("#try-history-empty")).to_be_visible()
    screenshot(page, f"try_1_cash_start_{tag}")

    # Scratched by hand, then « Tout découvrir »: 5,00 € of play money, the prize credited.
    ticket_id = play_again(page, "Jouez")
    page.wait_for_selector(f"#balance[data-cents='{START_CENTS - 500}']")
    scratch(page, page.locator("#ticket .zone").first)
    page.get_by_role("button", name="Tout découvrir").click()
    prize = result_past_any_big_win(page)
    ticket = api_get(page, f"/api/try/tickets/{ticket_id}")
    assert (ticket["state"], ticket["prize_cents"]) == ("finished", prize)
    expected = START_CENTS - 500 + prize
    page.wait_for_selector(f"#balance[data-cents='{expected}']")
    check_try_screen(page, "cash")
    screenshot(page, f"try_2_cash_scratched_{tag}")

    play_again(page, "Auto")
    expected += result_past_any_big_win(page) - 500
    page.wait_for_selector(f"#balance[data-cents='{expected}']")
    expect(page.locator(".try-history-row")).to_have_count(2)

    # Astro, from the try header: its sign, Auto, then each zone by hand.
    page.get_by_role("link", name="Essai Astro").click()
    page.wait_for_url("**/essai/astro")
    page.wait_for_selector(f"#balance[data-cents='{expected}']")
    check_try_screen(page, "astro")
    page.get_by_role("radio", name="Lion").click()
    play_again(page, "Auto")
    expected += result_past_any_big_win(page) - 200
    page.wait_for_selector(f"#balance[data-cents='{expected}']")
    screenshot(page, f"try_3_astro_auto_{tag}")
    astro_id = play_again(page, "Jouer")
    expected += scratch_the_whole_astro_ticket(page) - 200
    dismiss_any_big_win(page)
    page.wait_for_selector(f"#balance[data-cents='{expected}']")
    assert api_get(page, f"/api/try/tickets/{astro_id}")["finished_by"] == "player"
    check_try_screen(page, "astro")
    rows = page.locator(".try-history-row")
    expect(rows).to_have_count(4)
    expect(rows.first).to_have_attribute("data-ticket-id", str(astro_id))
    assert api_get(page, "/api/try/session")["balance_cents"] == expected
    screenshot(page, f"try_4_astro_history_{tag}")

    # A row of the history replays its ticket, still in the try mode.
    rows.last.get_by_role("link").click()
    page.wait_for_url(f"**/essai/cash?ticket={ticket_id}")
    expect(page.locator("#replay-banner")).to_be_visible()
    expect(page.locator("#result")).to_have_attribute("data-prize-cents", str(prize))
    check_try_screen(page, "cash")
    # And the visitor never had an account: the player's API knows no one here.
    assert page.context.request.get("/api/me").status == 401
    expect(page.get_by_role("link", name="Créer un compte", exact=True)).to_be_visible()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_logged_in_player_s_try_never_touches_their_real_balance_or_ledger(
    new_page: Any, live_server: Any, viewport: tuple[int, int]
) -> None:
    width, height = viewport
    page = new_page(live_server.url, width=width, height=height)
    player_with_balance(page, 1_000)
    page.goto("/regles/cash")
    page.get_by_role("link", name="Essayer gratuitement").click()
    page.wait_for_url("**/essai/cash")
    page.wait_for_selector(f"#balance[data-cents='{START_CENTS}']")
    check_try_screen(page, "cash")
    for _ in range(3):
        play_again(page, "Auto")
        result_past_any_big_win(page)
    screenshot(page, f"try_5_player_trying_{width}x{height}")
    me = api_get(page, "/api/me")
    assert me["balance_cents"] == 1_000
    assert api_get(page, "/api/me/tickets")["tickets"] == []
    # The header takes the player back to their account, not to a sign-up.
    expect(page.get_by_role("link", name="Créer un compte")).to_have_count(0)
    play_for_real = page.get_by_role("link", name="Jouer pour de vrai")
    expect(play_for_real).to_have_attribute("href", "/cash.html")
    page.get_by_role("link", name="Mon compte").click()
    page.wait_for_url(f"{live_server.url}/")
    page.wait_for_selector("#balance[data-cents='1000']")
    assert same_text(page.locator("#balance").inner_text()) == same_text("10,00 €")


def test_a_try_whose_session_ended_goes_on_in_a_new_one_without_a_reload(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url, width=360, height=740, has_touch=True)
    page.goto("/essai/cash")
    page.wait_for_selector(f"#balance[data-cents='{START_CENTS}']")
    play_again(page, "Auto")
    result_past_any_big_win(page)
    kept = [cookie for cookie in page.context.cookies() if cookie["name"] != "grattage_try"]
    page.context.clear_cookies()  # the try session's cookie gone (expired, purged, deleted)
    page.context.add_cookies(kept)
    play_again(page, "Auto")
    result_past_any_big_win(page)
    expect(page.locator(".notice.error:visible")).to_have_count(0)
    # Bought in a new session (whose history holds this ticket only), whatever it won.
    assert len(api_get(page, "/api/try/tickets")["tickets"]) == 1


def test_a_visitor_refused_a_try_session_for_too_many_is_told_so_in_french(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url, width=360, height=740, has_touch=True)
    page.route(
        "**/api/try/sessions",
        lambda route: route.fulfill(
            status=429,
            headers={"Retry-After": "600"},
            content_type="application/json",
            json={"error": "rate_limited", "message": "too many try sessions from this address"},
        ),
    )
    page.goto("/essai/cash")
    expect(page.locator("#notice")).to_contain_text("Trop de demandes depuis votre connexion")
    screenshot(page, "try_refused_rate_limited_360")


def in_the_window(page: Any, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("game", ["cash", "astro"])
def test_a_try_ticket_says_on_itself_that_it_is_a_try_wherever_the_view_is(
    new_page: Any, live_server: Any, game: str, viewport: tuple[int, int]
) -> None:
    """After Auto the view scrolls to the ticket, away from the banner and the header: the
    ticket itself says it is a try, readable, over none of its zones."""
    from test_web_ticket_contrast import AA_NORMAL_TEXT, worst_contrast

    width, height = viewport
    page = new_page(live_server.url, width=width, height=height)
    page.goto(f"/essai/{game}")
    page.wait_for_selector(f"#balance[data-cents='{START_CENTS}']")
    if game == "astro":
        page.get_by_role("radio", name="Lion").click()
    play_again(page, "Auto")
    result_past_any_big_win(page)
    if page.locator("#big-win").count():
        page.get_by_role("button", name="Continuer").click()
    ribbon = page.locator("#ticket .try-ribbon")
    expect(ribbon).to_have_text("ESSAI — argent fictif")
    expect(ribbon).to_be_visible()
    assert in_the_window(page, "#ticket .try-ribbon"), "the view after Auto does not show it"
    screenshot(page, f"try_ribbon_{game}_{width}x{height}", full_page=False)
    box = ribbon.bounding_box()
    assert box is not None
    for zone in page.locator("#ticket .zone").all():
        other = zone.bounding_box()
        assert other is not None
        apart = (
            box["x"] + box["width"] <= other["x"]
            or other["x"] + other["width"] <= box["x"]
            or box["y"] + box["height"] <= other["y"]
            or other["y"] + other["height"] <= box["y"]
        )
        assert apart, f"the ribbon covers {zone.get_attribute('data-zone')}"
    assert worst_contrast(page, ribbon) >= AA_NORMAL_TEXT


def test_a_real_ticket_carries_no_try_ribbon(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url, width=360, height=740)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    expect(page.locator("#ticket")).to_be_visible()
    expect(page.locator(".try-ribbon")).to_have_count(0)
