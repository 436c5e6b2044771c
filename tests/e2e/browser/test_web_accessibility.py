"""Accessibility, checked by axe-core (the axe-playwright-python package ships it) on every
player page at a phone's and a laptop's size, under the site's CSP (issue 16): no serious or
critical violation, text contrast at WCAG AA included (axe's color-contrast rule)."""

from __future__ import annotations

from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from browser_helpers import CSRF, player_with_balance, route_prize, wait_for_result

pytestmark = pytest.mark.browser

VIEWPORTS = {"phone": (360, 740), "laptop": (1366, 768)}
PAGES = ["/login.html", "/", "/cash.html", "/astro.html", "/history.html", "/limits.html"]
PAGES += ["/regles/cash", "/regles/astro"]  # public: a visitor reads them before signing up
PAGES += ["/essai/cash", "/essai/astro"]  # public too: « Essayer gratuitement »
BLOCKING = {"serious", "critical"}


def blocking_violations(page: Any) -> list[str]:
    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        if violation["impact"] not in BLOCKING:
            continue
        for node in violation["nodes"][:3]:
            found.append(f"{violation['id']} ({violation['impact']}): {node['target']} "
                         f"{node.get('failureSummary', '')[:160]}")  # fmt: skip
    return found


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("path", PAGES)
def test_axe_finds_no_serious_or_critical_violation_on_the_page(
    new_page: Any, live_server: Any, path: str, viewport: str
) -> None:
    width, height = VIEWPORTS[viewport]
    page = new_page(live_server.url, width=width, height=height)
    if path != "/login.html":
        player_with_balance(page, 1000)
        assert page.context.request.post(
            "/api/games/astro/tickets", data={"mode": "auto", "sign": "leo"}, headers=CSRF
        ).ok
    page.goto(path)
    page.wait_for_load_state("networkidle")
    if path in ("/cash.html", "/essai/cash"):  # with a ticket and its result on screen
        page.get_by_role("button", name="Auto", exact=True).click()
        wait_for_result(page)
    assert blocking_violations(page) == []


def test_axe_finds_no_serious_or_critical_violation_in_the_dialogs(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url, width=360, height=740)
    player_with_balance(page, 1000)
    page.goto("/limits.html")
    page.get_by_role("button", name="M'exclure du jeu…").click()
    page.get_by_role("dialog").wait_for()
    assert blocking_violations(page) == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_axe_finds_no_serious_or_critical_violation_on_the_big_win_screen(
    new_page: Any, live_server: Any, viewport: str
) -> None:
    width, height = VIEWPORTS[viewport]
    page = new_page(live_server.url, width=width, height=height)
    player_with_balance(page, 1000)
    page.goto("/cash.html")
    page.get_by_role("button", name="Son activé").click()  # the switch, in its other state
    route_prize(page, 150_000)
    page.get_by_role("button", name="Auto", exact=True).click()
    page.get_by_role("dialog", name="Gros lot !").wait_for()
    wait_for_result(page)
    assert blocking_violations(page) == []
