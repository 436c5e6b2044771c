"""French typography on every player page, as a phone shows it (issue 16, item 7): no plain
space before « : ; ! ? », inside « » or inside a number, which would let a line wrap there."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import CSRF, player_with_balance, wait_for_result

pytestmark = pytest.mark.browser

# …nor inside a number (« 500 000 ») or before its unit (« 10 € », « 75 % »): an operator's
# table title « Cash 500 000 € » broke as « Cash 500 / 000 € » at 360 px.
PLAIN_SPACE_PUNCTUATION = re.compile(r"\S[ ][:;!?»]|«[ ]|\d[ ]\d{3}(?!\d)|\d[ ][€%]")


def plain_spaces_on(page: Any) -> list[str]:
    # Code (the expert's command line) keeps its own spacing.
    text = page.evaluate(
        "(() => { const copy = document.body.cloneNode(true);"
        " copy.querySelectorAll('code, pre, script, style').forEach((n) => n.remove());"
        " return copy.textContent; })()"
    )
    return [
        text[max(0, m.start() - 30) : m.end() + 10] for m in PLAIN_SPACE_PUNCTUATION.finditer(text)
    ]


@pytest.mark.parametrize(
    "path",
    [
        "/login.html",
        "/",
        "/cash.html",
        "/astro.html",
        "/history.html",
        "/limits.html",
        "/regles/cash",
        "/regles/astro",
        "/essai/cash",
        "/essai/astro",
    ],
)
def test_no_page_shows_a_plain_space_before_french_punctuation_nor_inside_a_number(
    new_page: Any, live_server: Any, path: str
) -> None:
    page = new_page(live_server.url, width=360, height=740)
    if path != "/login.html":
        player_with_balance(page, 1000)
        bought = page.context.request.post(
            "/api/games/cash/tickets", data={"mode": "auto"}, headers=CSRF
        )
        assert bought.ok, bought.text()
    page.goto(path)
    page.wait_for_load_state("networkidle")
    if path in ("/cash.html", "/essai/cash"):  # a result, then an error notice by a script
        page.get_by_role("button", name="Auto", exact=True).click()
        wait_for_result(page)
    if path == "/astro.html":
        page.get_by_role("button", name="Jouer", exact=True).click()  # no sign chosen yet
        page.wait_for_selector("#play-notice:not([hidden])")
    assert plain_spaces_on(page) == []


# Every word of the page (a run without a plain space: « 5,00 € » and « 1 000 » are one) whose
# letters lie on more than one line, with its text.
BROKEN_WORDS_JS = """() => {
  const broken = [];
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement.checkVisibility()) continue;
    for (const match of node.data.matchAll(/[^ \\n\\t]+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0)
        .map((r) => Math.round(r.bottom)));
      if (lines.size > 1) broken.push(match[0]);
    }
  }
  return broken;
}"""


@pytest.mark.parametrize("game", ["cash", "astro"])
def test_no_word_of_a_game_page_is_broken_across_two_lines_on_a_360_pixel_phone(
    new_page: Any, live_server: Any, game: str
) -> None:
    page = new_page(live_server.url, width=360, height=740)
    player_with_balance(page, 1000)
    page.goto(f"/{game}.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    assert page.evaluate(BROKEN_WORDS_JS) == []  # the specimen, and Astro's twelve signs
    if game == "astro":
        page.get_by_role("radio", name="Sagittaire").click()
    page.get_by_role("button", name="Auto", exact=True).click()
    wait_for_result(page)
    if page.locator("#big-win").count():
        page.get_by_role("button", name="Continuer").click()
    assert page.evaluate(BROKEN_WORDS_JS) == []  # the ticket, its result, the proof panel
