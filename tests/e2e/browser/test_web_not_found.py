"""An address that leads nowhere (issue 16, French everywhere): a browser asking for a page
gets a French 404 page in the site's layout, under the real CSP, with a way home and to the
rules; the API keeps its JSON 404s (docs/api.md)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import screenshot
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("width", "height"), [(360, 740), (1366, 768)])
@pytest.mark.parametrize("path", ["/regles/zzz", "/essai/zzz", "/nulle-part.html"])
def test_an_unknown_page_answers_a_french_404_page_with_a_way_home(
    new_page: Any, live_server: Any, page_trouble: Any, path: str, width: int, height: int
) -> None:
    page = new_page(live_server.url, width=width, height=height)
    # The browser logs the 404 of the page itself: that one is the point of the test.
    page_trouble.allow(rf"status of 404 .*{re.escape(path)}\)$")
    answer = page.goto(path)
    assert answer is not None and answer.status == 404
    assert answer.headers["content-type"].startswith("text/html")
    assert "content-security-policy" in answer.headers
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.get_by_role("heading", level=1)).to_have_text("Page introuvable")
    expect(page.locator("main")).not_to_contain_text("Not Found")
    expect(page.locator("footer.prevention")).to_contain_text("Joueurs Info Service")
    assert page.evaluate("getComputedStyle(document.body).backgroundImage") != "none"  # the CSS
    expect(page.get_by_role("link", name="Revenir à l'accueil")).to_have_attribute("href", "/")
    expect(page.get_by_role("link", name="Les règles de Cash")).to_have_attribute(
        "href", "/regles/cash"
    )
    screenshot(
        page, f"not_found_{path.strip('/').replace('/', '_')}_{width}x{height}", full_page=False
    )
    page.get_by_role("link", name="Revenir à l'accueil").click()
    page.wait_for_url("**/login.html*")  # a visitor's way in


def test_the_api_keeps_its_json_404_even_for_a_browser(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    answer = page.context.request.get("/api/zzz", headers={"Accept": "text/html,*/*"})
    assert answer.status == 404
    assert answer.json()["error"] == "not_found"
    plain = page.context.request.get("/regles/zzz", headers={"Accept": "application/json"})
    assert plain.status == 404 and plain.json()["error"] == "not_found"
