"""The back office in French at a phone's and a laptop's size, in a real browser under the
site's CSP: an operator looks a player up, opens their file, suspends them with a reason and
finds it in the audit log; no screen scrolls sideways; axe finds no serious or critical
violation. Each screen is saved (test-artifacts/) for a person to look at."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_helpers import PASSWORD, player_with_balance, screenshot
from playwright.sync_api import expect

from grattage.service import accounts, operators, suspensions

pytestmark = pytest.mark.browser

OPERATOR = "bureau@operator.example"
VIEWPORTS = {"phone": (360, 740), "laptop": (1366, 768)}
REASON = "Usurpation d'identité signalée"


@pytest.fixture(scope="module")
def operator(live_server: Any) -> str:
    operators.create(live_server.app.state.platform, OPERATOR, PASSWORD)
    return OPERATOR


def no_sideways_scroll(page: Any, screen: str) -> None:
    wide = page.evaluate(
        "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right"
        " > document.documentElement.clientWidth + 1).slice(0, 8).map(e => e.tagName + '#' + e.id"
        " + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right) + ' in '"
        " + [e.parentElement, e.parentElement.parentElement].map(p => p.tagName + '#' + p.id + '.' + p.className + ':' + getComputedStyle(p).overflowX + ':' + Math.round(p.getBoundingClientRect().width)).join(' < '))"
    )
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.evaluate("document.documentElement.clientWidth")
    assert width <= viewport, f"{screen}: {width} px wide in a {viewport} px window: {wide}"


def serious_violations(page: Any) -> list[str]:
    results = Axe().run(page)
    return [
        f"{violation['id']} ({violation['impact']}): {[n['target'] for n in violation['nodes'][:3]]}"
        for violation in results.response["violations"]
        if violation["impact"] in {"serious", "critical"}
    ]


def look(page: Any, name: str) -> None:
    """One screen: no sideways scroll, nothing serious for axe, and a screenshot of it."""
    no_sideways_scroll(page, name)
    assert serious_violations(page) == [], name
    screenshot(page, name)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_an_operator_finds_a_player_suspends_them_with_a_reason_and_sees_it_audited(
    new_page: Any, live_server: Any, operator: str, viewport: str
) -> None:
    platform = live_server.app.state.platform
    email = f"eloise.{viewport}@example.org"
    player = accounts.register(
        platform,
        email,
        PASSWORD,
        date(1990, 4, 2),
        first_name="Éloïse",
        last_name=f"Dupré-{viewport}",
    )
    accounts.deposit(platform, player, 9_876)
    width, height = VIEWPORTS[viewport]
    page = new_page(live_server.url, width=width, height=height)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto("/admin/")
    expect(page.locator("#login")).to_be_visible()
    look(page, f"back_office_login_{viewport}")
    page.locator("#login-form input[name=email]").fill(operator)
    page.locator("#login-form input[name=password]").fill("pas le bon mot de passe")
    page.get_by_role("button", name="Se connecter").click()
    expect(page.locator("#flash")).to_have_text(
        "Identifiants refusés, ou session expirée\u00a0: connectez-vous."
    )
    page.locator("#login-form input[name=password]").fill(PASSWORD)
    page.get_by_role("button", name="Se connecter").click()
    expect(page.locator("#who-email")).to_have_text(operator)
    expect(page.locator("#blocks-rows tr").first).to_be_visible()
    look(page, f"back_office_blocks_{viewport}")

    first_block = page.locator("#blocks-rows tr").first
    first_block.get_by_role("button", name=re.compile("^Détails du bloc")).click()
    expect(page.locator("#block-title")).to_contain_text("Bloc n°")
    for _ in range(100):  # both charts drawn and loaded (up to 10 s)
        if page.evaluate(
            "[...document.querySelectorAll('.charts img')].every(i => i.complete && i.naturalWidth)"
        ):
            break
        page.wait_for_timeout(100)
    look(page, f"back_office_block_{viewport}")

    search = page.locator("#player-search")
    search.locator("input[name=q]").fill(f"DUPRE-{viewport}")
    search.get_by_role("button", name="Rechercher").click()
    rows = page.locator("#player-rows tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(email)
    expect(rows.first).to_contain_text("actif")
    page.locator("#players").scroll_into_view_if_needed()
    look(page, f"back_office_players_{viewport}")

    rows.first.get_by_role("button", name=f"Ouvrir la fiche de {email}").click()
    expect(page.locator("#player-title")).to_have_text(
        f"Joueur n° {player} — Éloïse Dupré-{viewport}"
    )
    expect(page.locator("#player-account")).to_contain_text("98,76\u00a0€")
    expect(page.locator("#player-movements tr")).to_have_count(1)
    expect(page.locator("#player-movements")).to_contain_text("dépôt")
    look(page, f"back_office_player_{viewport}")

    form = page.locator("#suspension-form")
    form.locator("input[name=reason]").fill("\u200b\u200b\u200b")  # three invisible characters
    form.get_by_role("button", name="Suspendre le compte").click()
    expect(page.locator("#flash")).to_have_text(
        "Le motif doit compter de 3 à 500 caractères visibles, sans caractère invisible."
    )
    form.locator("input[name=reason]").fill(REASON)
    form.get_by_role("button", name="Suspendre le compte").click()
    expect(page.locator("#flash")).to_have_text(f"Joueur n° {player} suspendu.")
    expect(page.locator("#player-account")).to_contain_text(REASON)
    expect(page.locator("#player-account")).to_contain_text("suspendu")
    expect(form.get_by_role("button", name="Lever la suspension")).to_be_visible()
    look(page, f"back_office_player_suspended_{viewport}")

    audit = page.locator("#audit-rows tr").first
    expect(audit).to_contain_text("joueur suspendu")
    expect(audit).to_contain_text(REASON)
    expect(audit).to_contain_text(f"operator:{operator}")
    page.locator("#audit").scroll_into_view_if_needed()
    page.get_by_role("button", name="Vérifier la chaîne").click()
    expect(page.locator("#audit-result")).to_have_text(re.compile("^Chaîne intacte\u00a0: "))
    look(page, f"back_office_audit_{viewport}")

    page.locator("#reports").scroll_into_view_if_needed()
    expect(page.locator("#report-head th").first).to_have_text("Bloc")
    look(page, f"back_office_reports_{viewport}")
    suspended = accounts_log_in_refused(platform, email)
    assert suspended == "account_suspended"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_suspended_player_is_told_in_french_that_the_account_is_suspended(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    width, height = VIEWPORTS[viewport]
    page = new_page(live_server.url, width=width, height=height)
    email = player_with_balance(page, 1000)
    page.goto("/")
    platform = live_server.app.state.platform
    with platform.uow.read() as repos:
        player = repos.players.by_email(email)
    assert player is not None
    suspensions.suspend(platform, player.id, REASON, actor=f"operator:{OPERATOR}")
    page.goto("/login.html")
    page.locator("#login-email").fill(email)
    page.locator("#login-password").fill(PASSWORD)
    page.locator("#login-form").get_by_role("button", name="Se connecter").click()
    expect(page.locator("#notice")).to_contain_text(
        "Votre compte est suspendu par l'opérateur\u00a0: vous ne pouvez ni vous connecter"
    )
    no_sideways_scroll(page, "suspended log-in")
    screenshot(page, f"player_suspended_log_in_{viewport}")


def accounts_log_in_refused(platform: Any, email: str) -> str:
    try:
        accounts.log_in(platform, email, PASSWORD)
    except Exception as error:  # the refusal's code is what the player site maps to French
        return str(getattr(error, "code", error))
    return "logged in"
