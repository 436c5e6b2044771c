"""Responsible gaming in a real browser, under the site's CSP, as a player uses it (issue 16):
« Mes limites » found from the header, limits set and reached, self-exclusion, the reality
check, and the prevention message on every page — at a phone's and a laptop's size."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from browser_helpers import CSRF, PASSWORD, api_get, player_with_balance, same_text, screenshot
from playwright.sync_api import expect
from sqlalchemy import select, update

from grattage.adapters.tables import players, sessions

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": (360, 740), "laptop": (1366, 768)}
PAGES = ["/login.html", "/", "/cash.html", "/astro.html", "/history.html", "/limits.html"]


def open_at(new_page: Any, server: Any, viewport: str) -> Any:
    width, height = VIEWPORTS[viewport]
    return new_page(server.url, width=width, height=height, has_touch=viewport == "phone")


def player_with_limits(page: Any, limits: dict[str, int]) -> Any:
    """A player holding 30 € who has just set ``limits`` (lowering applies at once)."""
    player_with_balance(page, 3000)
    assert page.context.request.put("/api/me/limits", data=limits, headers=CSRF).ok
    return page


def no_horizontal_scroll(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width}px wide"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_player_finds_my_limits_from_the_header_and_lowers_and_raises_them_in_french(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    page = open_at(new_page, live_server, viewport)
    player_with_balance(page, 3000)
    page.goto("/")
    page.get_by_role("navigation").get_by_role("link", name="Mes limites").click()
    page.wait_for_url("**/limits.html")
    expect(page.get_by_role("heading", name="Mes limites de jeu")).to_be_visible()
    expect(page.locator("#deposit-limit")).to_contain_text("il vous reste")
    expect(page.locator("#cooling")).to_have_text("7\u00a0jours")  # the default cooling-off
    expect(page.locator("#totals")).to_contain_text("déposés")
    assert "30,00€déposés" in same_text(page.locator("#totals").inner_text())
    expect(page.locator("#days tr")).to_have_count(1)

    page.get_by_label("Nouvelle limite de dépôts par semaine (€)").fill("45,50")
    page.get_by_role("button", name="Enregistrer mes limites").click()
    message = page.locator("#limits-message")
    expect(message).to_contain_text("Votre limite de dépôts est maintenant de")
    assert "45,50€parsemaine" in same_text(message.inner_text())
    assert api_get(page, "/api/me/limits")["deposit"]["weekly_limit_cents"] == 4550
    assert "ilvousreste15,50€" in same_text(page.locator("#deposit-limit").inner_text())

    page.get_by_label("Nouvelle limite de mises par semaine (€)").fill("5000")
    page.get_by_role("button", name="Enregistrer mes limites").click()
    expect(message).to_contain_text("prendra effet le")
    expect(page.locator("#stake-limit .pending")).to_contain_text("Hausse demandée à")

    page.get_by_label("Nouvelle limite de mises par semaine (€)").fill("abc")
    page.get_by_role("button", name="Enregistrer mes limites").click()
    expect(message).to_contain_text("doit être un montant en euros, avec au plus deux décimales")
    expect(page.get_by_label("Nouvelle limite de mises par semaine (€)")).to_be_focused()
    no_horizontal_scroll(page)
    screenshot(page, f"limits_{viewport}")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_purchase_past_the_stake_limit_says_which_limit_what_is_left_and_when_it_resets(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    page = player_with_limits(open_at(new_page, live_server, viewport), {"stake_weekly_cents": 700})
    api = page.context.request
    assert api.post("/api/games/cash/tickets", data={"mode": "auto"}, headers=CSRF).ok
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents]")
    page.get_by_role("button", name="Jouez", exact=True).click()
    notice = page.locator("#play-notice")
    expect(notice).to_contain_text("Ce ticket dépasserait votre limite de mises de")
    said = same_text(notice.inner_text())
    assert "7,00€parsemaine:ilvousreste2,00€jusqu'aulundi" in said, said
    expect(notice).to_contain_text("quand votre compteur repart à zéro")
    link = notice.get_by_role("link", name="Voir mes limites")
    expect(link).to_have_attribute("href", "/limits.html")
    screenshot(page, f"limit_reached_{viewport}")
    link.click()
    page.wait_for_url("**/limits.html")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_player_excludes_themself_in_the_browser_is_logged_out_and_refused_at_log_in(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    page = open_at(new_page, live_server, viewport)
    email = player_with_balance(page, 1000)
    page.goto("/limits.html")
    page.get_by_label("Durée de l'exclusion").select_option(label="30 jours")
    page.get_by_role("button", name="M'exclure du jeu…").click()
    dialog = page.get_by_role("dialog", name="Confirmer votre exclusion")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Vous allez vous exclure du jeu pendant 30 jours.")
    expect(dialog).to_contain_text("ni raccourcie ni levée")
    expect(dialog.get_by_role("button", name="Annuler")).to_be_focused()
    screenshot(page, f"exclusion_confirm_{viewport}")
    dialog.get_by_role("button", name="Annuler").click()
    assert api_get(page, "/api/me/exclusion")["excluded"] is False  # cancelling changes nothing

    page.get_by_role("button", name="M'exclure du jeu…").click()
    dialog.get_by_role("button", name="Oui, m'exclure").click()
    state = page.locator("#exclusion-state")
    expect(state).to_contain_text("Vous êtes exclu du jeu jusqu'au")
    expect(page.locator("#exclusion-section")).to_be_hidden()
    expect(state).to_contain_text("Vous êtes maintenant déconnecté.")
    screenshot(page, f"exclusion_done_{viewport}")
    # Every session of the account ended with the exclusion: none is left to play with.
    assert page.context.request.get("/api/me").status == 401

    page.get_by_role("link", name="Page de connexion").click()
    page.wait_for_url("**/login.html")
    page.locator("#login-email").fill(email)
    page.locator("#login-password").fill(PASSWORD)
    page.locator("#login-form").get_by_role("button", name="Se connecter").click()
    notice = page.locator("#notice")
    expect(notice).to_contain_text("vous ne pouvez ni vous connecter")
    until = (datetime.now(UTC) + timedelta(days=30)).astimezone(ZoneInfo("Europe/Paris"))
    expect(notice).to_contain_text(re.compile(rf"jusqu'au {until.day} \w+ {until.year} à"))
    screenshot(page, f"exclusion_log_in_refused_{viewport}")


def started_minutes_ago(server: Any, email: str, minutes: float) -> None:
    """Move the player's sessions' start back (their last use stays): the check falls due as
    if they had played that long, without a test that lasts an hour."""
    engine = server.app.state.platform.uow.engine
    theirs = select(players.c.id).where(players.c.email == email).scalar_subquery()
    with engine.begin() as connection:
        connection.execute(
            update(sessions)
            .where(sessions.c.player_id == theirs)
            .values(created_at=datetime.now(UTC) - timedelta(minutes=minutes))
        )


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_reality_check_appears_on_a_page_left_open_and_stop_playing_logs_out(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    page = open_at(new_page, live_server, viewport)
    email = player_with_balance(page, 2000)
    assert page.context.request.post(
        "/api/games/cash/tickets", data={"mode": "auto"}, headers=CSRF
    ).ok
    won = api_get(page, "/api/me/activity")["totals"]["prizes_cents"]
    started_minutes_ago(live_server, email, 60 - 3 / 60)  # due in 3 s: nobody clicks meanwhile
    page.goto("/cash.html")
    expect(page.locator("#session-clock")).to_contain_text("Session")
    expect(page.get_by_role("dialog")).to_have_count(0)
    dialog = page.get_by_role("dialog", name="Point sur votre session de jeu")
    expect(dialog).to_be_visible(timeout=15_000)
    expect(dialog).to_contain_text("Vous jouez depuis 1\u00a0h\u00a000.")
    said = same_text(dialog.inner_text())
    spent = 500 - won
    word, amount = ("Dépensenette", spent) if spent >= 0 else ("Gainnet", -spent)
    net = f"{word}{amount // 100},{amount % 100:02d}€"
    assert "Misesdelasession5,00€" in said and net in said, said
    assert "Cerappelrevienttoutesles60minutesdejeu." in said
    expect(dialog.get_by_role("button", name="Continuer")).to_be_focused()
    for _ in range(5):  # a check is answered, not dismissed: Chromium closes a modal after a
        page.keyboard.press("Escape")  # few refused Escapes, and the page opens it again
        page.wait_for_timeout(100)
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Continuer")).to_be_focused()
    screenshot(page, f"reality_check_{viewport}")
    dialog.get_by_role("button", name="Arrêter de jouer").click()
    page.wait_for_url("**/login.html")
    assert page.context.request.get("/api/me").status == 401


def test_the_reality_check_continue_closes_it_until_the_next_interval(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    email = player_with_balance(page, 1000)
    started_minutes_ago(live_server, email, 61)
    page.goto("/")
    dialog = page.get_by_role("dialog", name="Point sur votre session de jeu")
    expect(dialog).to_contain_text("Vous jouez depuis 1\u00a0h\u00a001.")
    dialog.get_by_role("button", name="Continuer").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    page.reload()
    expect(page.locator("#session-clock")).to_contain_text("1\u00a0h\u00a001")
    expect(page.get_by_role("dialog")).to_have_count(0)  # given once per interval


@pytest.mark.parametrize("path", PAGES)
def test_every_page_carries_the_prevention_message_and_the_under_18_mark(
    new_page: Any, live_server: Any, path: str
) -> None:
    page = new_page(live_server.url, width=360, height=740)
    if path != "/login.html":
        player_with_balance(page, 0)
    page.goto(path)
    footer = page.locator("footer.prevention")
    expect(footer).to_contain_text("Interdit aux moins de 18\u00a0ans.")
    expect(footer).to_contain_text("Joueurs Info Service")
    expect(footer.get_by_role("link", name=re.compile(r"09\s74\s75\s13\s13"))).to_have_attribute(
        "href", "tel:+33974751313"
    )
    expect(footer).to_contain_text("(appel non surtaxé)")
    if path != "/login.html":
        expect(
            page.get_by_role("navigation").get_by_role("link", name="Mes limites")
        ).to_be_visible()
    no_horizontal_scroll(page)


def test_a_reality_check_is_owed_until_answered_a_reload_does_not_dodge_it(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    email = player_with_balance(page, 1000)
    started_minutes_ago(live_server, email, 61)
    page.goto("/cash.html")
    dialog = page.get_by_role("dialog", name="Point sur votre session de jeu")
    expect(dialog).to_be_visible()
    page.reload()  # the server gave this check once: the page keeps it until it is answered
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Vous jouez depuis 1\u00a0h\u00a001.")
    dialog.get_by_role("button", name="Continuer").click()
    page.reload()
    expect(page.locator("#session-clock")).to_contain_text("Session")
    expect(page.get_by_role("dialog")).to_have_count(0)


def test_a_reality_check_shows_in_every_tab_and_one_answer_closes_it_everywhere(
    new_page: Any, live_server: Any
) -> None:
    playing = new_page(live_server.url)
    email = player_with_balance(playing, 1000)
    started_minutes_ago(live_server, email, 60 - 3 / 60)  # due in 3 s, before this tab asks
    playing.goto("/cash.html")
    expect(playing.locator("#session-clock")).to_contain_text("Session")
    playing.wait_for_timeout(3500)
    other = playing.context.new_page()  # the same session, in a second tab
    other.goto("/limits.html")  # its GET /api/me is the request the server gives the check to
    in_other = other.get_by_role("dialog", name="Point sur votre session de jeu")
    in_playing = playing.get_by_role("dialog", name="Point sur votre session de jeu")
    expect(in_other).to_be_visible()
    expect(in_playing).to_be_visible()  # the tab the player is using shows it too
    in_playing.get_by_role("button", name="Continuer").click()
    expect(in_other).to_have_count(0)
    expect(in_playing).to_have_count(0)


def test_stop_playing_in_one_tab_sends_every_tab_of_the_session_to_the_log_in(
    new_page: Any, live_server: Any
) -> None:
    playing = new_page(live_server.url)
    email = player_with_balance(playing, 1000)
    started_minutes_ago(live_server, email, 61)
    playing.goto("/cash.html")
    other = playing.context.new_page()
    other.goto("/history.html")
    in_playing = playing.get_by_role("dialog", name="Point sur votre session de jeu")
    expect(other.get_by_role("dialog", name="Point sur votre session de jeu")).to_be_visible()
    in_playing.get_by_role("button", name="Arrêter de jouer").click()
    playing.wait_for_url("**/login.html")
    other.wait_for_url("**/login.html**")  # not left on a page of a session that is over


def test_a_cash_ticket_is_not_finished_by_inactivity_while_the_reality_check_is_up(
    new_page: Any, server_factory: Any
) -> None:
    server = server_factory(2)
    page = new_page(server.url)
    email = player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    started_minutes_ago(server, email, 61)  # the purchase's answer brings the check
    page.get_by_role("button", name="Jouez", exact=True).click()
    dialog = page.get_by_role("dialog", name="Point sur votre session de jeu")
    expect(dialog).to_be_visible()
    ticket_id = int(page.locator("#ticket").get_attribute("data-ticket-id") or "0")
    page.wait_for_timeout(6_000)  # three inactivity delays behind the modal
    assert page.locator("#ticket .zone.revealed").count() == 0
    assert api_get(page, f"/api/tickets/{ticket_id}")["state"] == "playing"
    dialog.get_by_role("button", name="Continuer").click()
    page.wait_for_timeout(1_000)
    assert page.locator("#ticket .zone.revealed").count() == 0  # the whole delay again
    expect(page.locator("#ticket .zone.revealed")).to_have_count(25, timeout=10_000)
    assert api_get(page, f"/api/tickets/{ticket_id}")["finished_by"] == "inactivity"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_refused_deposit_is_explained_beside_the_deposit_form(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    page = player_with_limits(
        open_at(new_page, live_server, viewport), {"deposit_weekly_cents": 4000}
    )
    # The lobby's cards can arrive after the player has used the form and push it down (a
    # slow network; it happened in CI): they are held back until the message is shown.
    held: list[Any] = []

    def hold(route: Any) -> None:
        held.append(route)

    page.route("**/api/games", hold)
    page.goto("/")
    page.get_by_label("Montant en euros").fill("20")
    page.get_by_role("button", name="Déposer").click()
    message = page.locator("#deposit-message")
    expect(message).to_contain_text("Ce dépôt dépasserait votre limite de dépôts")
    for route in held:
        route.continue_()
    page.unroute("**/api/games")
    expect(page.locator(".game-card")).to_have_count(2)
    expect(message).to_be_in_viewport()
    expect(page.locator("#notice")).to_be_hidden()
    screenshot(page, f"deposit_refused_{viewport}")
