"""The pages in a real browser (Chromium), against the app served on a local port (issue 4)."""

from __future__ import annotations

from typing import Any

import pytest
from browser_helpers import (
    ASTRO_ZONES,
    CASH_ZONES,
    CSRF,
    PASSWORD,
    WAIT_MS,
    PageTrouble,
    api_get,
    euros,
    new_email,
    player_with_balance,
    player_with_balance_top_up,
    same_text,
    scratch,
    scratch_by_touch,
    scratch_the_whole_astro_ticket,
    screenshot,
    ticket_id_on,
    wait_for_result,
)
from playwright.sync_api import expect

from support import person_named_after

pytestmark = pytest.mark.browser


def test_sign_up_deposit_and_scratch_every_cash_zone_by_hand(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    page.goto("/")
    page.wait_for_url("**/login.html?next=*")
    page.get_by_role("tab", name="Créer un compte").click()
    email = new_email()
    page.fill("#signup-email", email)
    page.fill("#signup-password", PASSWORD)
    page.fill("#signup-first-name", "Jean-Éric")
    page.fill("#signup-last-name", "D'" + person_named_after(email)["last_name"])
    page.fill("#signup-birth", "1988-02-29")
    page.get_by_role("button", name="Créer mon compte").click()
    page.wait_for_url(f"{live_server.url}/")
    page.wait_for_selector(".game-card[data-game=cash]")
    assert page.locator("#balance").get_attribute("data-cents") == "0"
    games = {game["name"]: game for game in api_get(page, "/api/games")["games"]}
    for name, game in games.items():
        card = page.locator(f".game-card[data-game={name}]")
        assert card.locator(".price").get_attribute("data-cents") == str(game["price_cents"])
        top_prize = card.locator(".top-prize").get_attribute("data-cents")
        assert top_prize == str(game["top_prize_cents"])
        assert card.locator(".badge:has-text('tableau reconstitué')").count() == (
            1 if game["reconstruction"] else 0
        )

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

    # One stroke across a star uncovers part of it: not enough to ask the server, and the page
    # has nothing to show under it yet.
    first = zones.first.locator("canvas").bounding_box()
    assert first is not None
    middle = first["y"] + first["height"] / 2
    page.mouse.move(first["x"] + 2, middle)
    page.mouse.down()
    page.mouse.move(first["x"] + first["width"] - 2, middle, steps=6)
    page.mouse.up()
    page.wait_for_timeout(300)
    assert 0 < float(zones.first.get_attribute("data-cleared") or "0") < 0.5
    assert zones.first.locator(".zone-content").inner_html() == ""
    assert api_get(page, f"/api/tickets/{ticket_id}")["revealed"] == {}

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


def test_tout_decouvrir_waits_for_the_ticket_and_focus_follows_the_keyboard(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    held: list[Any] = []
    # Held until the test lets it go (a lambda: Playwright inspects the handler's parameters).
    page.route("**/api/games/cash/tickets", lambda route: held.append(route))  # noqa: PLW0108
    page.get_by_role("button", name="Jouez", exact=True).focus()
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    assert len(held) == 1  # the purchase is in flight…
    reveal_all = page.get_by_role("button", name="Tout découvrir")
    expect(reveal_all).to_be_disabled()  # …and there is nothing to uncover yet
    held[0].continue_()
    ticket_id_on(page)
    expect(reveal_all).to_be_enabled()
    # Enter on « Jouez » lands the keyboard on the first zone to scratch, not on the page.
    assert page.evaluate("document.activeElement.dataset.zone") == "your_numbers/0"
    reveal_all.click()
    wait_for_result(page)
    expect(page.get_by_role("button", name="Jouez", exact=True)).to_be_focused()


def test_focus_moves_to_jouez_when_a_ticket_scratched_by_mouse_ends(
    new_page: Any, live_server: Any
) -> None:
    """Enter on « Jouez » puts the keyboard on the first star; the player then scratches every
    zone with the mouse (which moves no focus): at the end the keyboard is on « Jouez », not
    left on a zone of the finished ticket."""
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    page.get_by_role("button", name="Jouez", exact=True).focus()
    page.keyboard.press("Enter")
    ticket_id_on(page)
    expect(page.locator("[data-zone='your_numbers/0']")).to_be_focused()
    zones = page.locator("#ticket .zone")
    for index in range(CASH_ZONES):
        scratch(page, zones.nth(index))
    wait_for_result(page)
    expect(page.get_by_role("button", name="Jouez", exact=True)).to_be_focused()


def test_focus_moves_to_jouez_when_the_last_zone_is_uncovered_by_keyboard(
    new_page: Any, live_server: Any
) -> None:
    """However the ticket ended: Enter on its last zone leaves nothing to do on the ticket, so
    the keyboard goes on to « Jouez » (the next ticket), not left on a finished zone."""
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    page.get_by_role("button", name="Jouez", exact=True).click()
    ticket_id_on(page)
    zones = page.locator("#ticket .zone")
    for index in range(CASH_ZONES):
        zones.nth(index).focus()
        page.keyboard.press("Enter")
    wait_for_result(page)
    expect(page.get_by_role("button", name="Jouez", exact=True)).to_be_focused()


def test_a_cash_ticket_left_alone_is_revealed_by_the_inactivity_timer(
    new_page: Any, server_factory: Any
) -> None:
    server = server_factory(2)
    page = new_page(server.url)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    assert api_get(page, "/api/config")["inactivity_seconds"] == 2
    page.get_by_role("button", name="Jouez", exact=True).click()
    ticket_id = ticket_id_on(page)
    page.wait_for_timeout(1000)
    assert page.locator("#ticket .zone.revealed").count() == 0  # not before the delay
    prize_on_screen = wait_for_result(page, timeout=10_000)
    screenshot(page, "cash_inactivity_revealed")
    assert page.locator("#ticket .zone.revealed").count() == CASH_ZONES
    ticket = api_get(page, f"/api/tickets/{ticket_id}")
    assert ticket["state"] == "finished"
    assert prize_on_screen == ticket["prize_cents"]


def test_a_double_click_on_jouez_buys_one_ticket(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    purchases: list[str | None] = []
    page.on(
        "request",
        lambda request: (
            purchases.append(request.headers.get("idempotency-key"))
            if request.method == "POST" and request.url.endswith("/tickets")
            else None
        ),
    )
    page.get_by_role("button", name="Jouez", exact=True).dblclick()
    ticket_id_on(page)
    page.wait_for_selector("#balance[data-cents='500']")
    screenshot(page, "cash_double_click")
    history = api_get(page, "/api/me/tickets")["tickets"]
    assert len(history) == 1
    assert api_get(page, "/api/me")["balance_cents"] == 500
    assert purchases and all(purchases) and len(set(purchases)) == 1


def test_errors_are_readable_messages(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 0)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='0']")
    page.get_by_role("button", name="Jouez", exact=True).click()
    page.wait_for_selector("#play-notice:has-text('Solde insuffisant')")
    screenshot(page, "error_insufficient_balance")
    page.context.clear_cookies()  # the session is gone
    page.get_by_role("button", name="Jouez", exact=True).click()
    page.wait_for_selector("#notice:has-text('session a expiré')")
    page.wait_for_url("**/login.html?next=*")
    screenshot(page, "error_session_expired")


@pytest.mark.parametrize(
    "path", ["/login.html", "/", "/cash.html", "/astro.html", "/history.html", "/limits.html"]
)
def test_a_360_pixel_wide_screen_has_no_horizontal_scroll(
    new_page: Any, live_server: Any, path: str
) -> None:
    page = new_page(live_server.url, width=360, height=740)
    if path != "/login.html":
        player_with_balance(page, 1000)
    if path == "/history.html":  # a history with a row of each game
        for game, body in [("cash", {"mode": "auto"}), ("astro", {"mode": "play", "sign": "leo"})]:
            bought = page.context.request.post(
                f"/api/games/{game}/tickets", data=body, headers=CSRF
            )
            assert bought.status == 201, bought.text()
    page.goto(path)
    page.wait_for_load_state("networkidle")
    if path == "/cash.html":
        page.get_by_role("button", name="Auto", exact=True).click()
        wait_for_result(page)
    if path == "/astro.html":
        page.get_by_role("radio", name="Capricorne").click()
        page.get_by_role("button", name="Jouer", exact=True).click()
        ticket_id_on(page)
        screenshot(page, "narrow_360_astro_playing")
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        scratch_the_whole_astro_ticket(page)
        assert page.locator("#ticket .zone.revealed").count() == ASTRO_ZONES
    if path == "/":
        page.locator("details.prizes summary").first.click()
    if path == "/history.html":
        assert page.locator(".history-row").count() == 2
    screenshot(page, f"narrow_360{path.replace('/', '_').replace('.html', '')}")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"{path} is {width}px wide at 360px"


def test_pages_answer_without_their_html_suffix(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 0)
    for path, heading in [("/cash", "Cash"), ("/astro", "Astro"), ("/history", "Historique")]:
        page.goto(path)
        page.wait_for_selector(f"h1:has-text('{heading}')")
    page.goto("/login")
    page.wait_for_selector("#login-form")


def test_a_purchase_whose_answer_is_lost_is_not_bought_twice_on_retry(
    new_page: Any, live_server: Any, page_trouble: PageTrouble
) -> None:
    page_trouble.allow(r"ERR_CONNECTION_RESET \(.*/api/games/cash/tickets\)")
    page = new_page(live_server.url)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    keys: list[str | None] = []

    def lose_the_first_answer(route: Any) -> None:
        keys.append(route.request.headers.get("idempotency-key"))
        if len(keys) == 1:
            route.fetch()  # the server sells the ticket…
            route.abort("connectionreset")  # …but the page never hears about it
        else:
            route.continue_()

    page.route("**/api/games/cash/tickets", lose_the_first_answer)
    page.get_by_role("button", name="Auto", exact=True).click()
    page.wait_for_selector("#play-notice:has-text('Connexion au serveur impossible')")
    page.get_by_role("button", name="Auto", exact=True).click()
    wait_for_result(page)
    screenshot(page, "cash_lost_answer_retried")
    assert len(keys) == 2 and keys[0] == keys[1]
    assert len(api_get(page, "/api/me/tickets")["tickets"]) == 1
    me = api_get(page, "/api/me")
    page.wait_for_selector(f"#balance[data-cents='{me['balance_cents']}']")


def test_the_next_ticket_never_shows_the_previous_result(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    player_with_balance(page, 2000)
    page.goto("/cash.html")
    play_button = page.get_by_role("button", name="Jouez", exact=True)
    play_button.click()
    first = ticket_id_on(page)
    page.get_by_role("button", name="Tout découvrir").click()
    play_button.click()  # waits until « Jouez » is back, which is once the result is shown
    # So the first result is on screen, unless the second ticket has already replaced it.
    assert page.locator("#result").get_attribute("data-prize-cents") is not None or (
        page.locator("#ticket").get_attribute("data-ticket-id") != str(first)
    )
    expect(page.locator("#ticket")).not_to_have_attribute(
        "data-ticket-id", str(first), timeout=WAIT_MS
    )
    page.wait_for_timeout(2000)  # longer than the old ticket's reveal animation
    second = ticket_id_on(page)
    assert api_get(page, f"/api/tickets/{second}")["state"] == "playing"
    assert page.locator("#result").inner_text() == ""
    assert page.locator("#total").inner_text() == "—"
    assert page.locator("#ticket .zone.revealed").count() == 0
    screenshot(page, "cash_next_ticket_clean")


def test_a_phone_scratches_with_a_finger(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url, width=390, height=844, has_touch=True, is_mobile=True)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.get_by_role("button", name="Jouez", exact=True).click()
    ticket_id = ticket_id_on(page)
    zones = page.locator("#ticket .zone")
    for index in range(CASH_ZONES):
        zone = zones.nth(index)
        scratch_by_touch(page, zone)
        zone.locator(".zone-content .number").wait_for()
    prize_on_screen = wait_for_result(page)
    screenshot(page, "phone_scratched_by_touch")
    ticket = api_get(page, f"/api/tickets/{ticket_id}")
    assert (ticket["state"], ticket["finished_by"]) == ("finished", "player")
    assert prize_on_screen == ticket["prize_cents"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_sold_out_game_says_so(new_page: Any, server_factory: Any) -> None:
    server = server_factory(30, blocks=1)
    page = new_page(server.url)
    player_with_balance(page, 10_000)
    player_with_balance_top_up(page, 10_000)
    for _ in range(40):  # the whole block of the test table
        bought = page.context.request.post(
            "/api/games/cash/tickets", data={"mode": "auto"}, headers=CSRF
        )
        assert bought.status == 201, bought.text()
    page.goto("/cash.html")
    page.wait_for_selector("#notice:has-text('épuisé')")  # told before trying
    with page.expect_response("**/api/games/cash/tickets") as refused:
        page.get_by_role("button", name="Jouez", exact=True).click()
    assert refused.value.status == 409
    assert refused.value.json()["error"] == "sold_out"
    page.wait_for_selector("#play-notice:has-text('Ce jeu est épuisé')")
    screenshot(page, "cash_sold_out")
    page.goto("/")
    page.wait_for_selector(".game-card[data-game=cash] .sold-out")
    assert page.locator(".game-card[data-game=astro] a.btn").is_visible()


@pytest.mark.parametrize(("width", "height"), [(360, 740), (1366, 768)])
def test_the_sign_up_form_asks_for_names_and_refuses_a_name_no_one_has_in_french(
    new_page: Any, live_server: Any, width: int, height: int
) -> None:
    page = new_page(live_server.url, width=width, height=height)
    page.goto("/login.html?signup")
    for field in ("#signup-first-name", "#signup-last-name", "#signup-birth"):
        expect(page.locator(field)).to_be_visible()
    assert page.locator("#signup-birth").get_attribute("min") == "1900-01-01"
    page.fill("#signup-email", new_email())
    page.fill("#signup-password", PASSWORD)
    page.fill("#signup-first-name", "Zoé")
    page.fill("#signup-last-name", "R2D2")
    page.fill("#signup-birth", "1990-05-17")
    page.get_by_role("button", name="Créer mon compte").click()
    expect(page.get_by_text("Inscription refusée", exact=False)).to_be_visible()
    assert page.url.endswith("/login.html?signup")
    screenshot(page, f"signup_refused_{width}")
