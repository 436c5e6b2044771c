"""A finger on the game pages (issue 16, item 5), with real touch input (the DevTools protocol's
Input.dispatchTouchEvent) on a 360×740 phone: a scratch may start anywhere in a zone's square —
in the corner outside a round zone's circle too — and slide onto it; a swipe that starts on the
ticket outside the zones scrolls the page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import player_with_balance, screenshot, ticket_id_on
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ROUND_ZONES = {"cash": "#winning .zone", "astro": "#discs .zone"}
PLAY = {"cash": "Jouez", "astro": "Jouer"}
REVEALED = re.compile(r"(^|\s)revealed(\s|$)")


class Finger:
    """One finger on the screen, through the DevTools protocol (the browser's real touch path:
    hit testing, touch-action, scrolling)."""

    def __init__(self, page: Any) -> None:
        self.devtools = page.context.new_cdp_session(page)

    def send(self, kind: str, x: float = 0, y: float = 0) -> None:
        points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
        self.devtools.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    def drag(self, path: list[tuple[float, float]]) -> None:
        self.send("touchStart", *path[0])
        for x, y in path[1:]:
            self.send("touchMove", x, y)
        self.send("touchEnd")


def phone_with_a_ticket(new_page: Any, live_server: Any, game: str) -> Any:
    page = new_page(live_server.url, width=360, height=740, has_touch=True, is_mobile=True)
    player_with_balance(page, 1000)
    page.goto(f"/{game}.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    if game == "astro":
        page.get_by_role("radio", name="Balance").click()
    page.get_by_role("button", name=PLAY[game], exact=True).click()
    ticket_id_on(page)
    return page


def from_the_corner_onto_the_circle(box: dict[str, float]) -> list[tuple[float, float]]:
    """From the square's top-left corner (outside the circle) to the centre, then to and fro
    across the circle's inner square, enough to uncover it."""
    left, top, size = box["x"], box["y"], box["width"]
    centre = (left + size / 2, top + size / 2)
    path = [(left + 2 + step * (centre[0] - left - 2) / 6, top + 2 + step * (centre[1] - top - 2) / 6)
            for step in range(7)]  # fmt: skip
    inner = size * 0.70
    rows = 6
    for row in range(rows):
        y = centre[1] - inner / 2 + inner * (row + 0.5) / rows
        xs = [centre[0] - inner / 2 + inner * step / 8 for step in range(9)]
        path += [(x, y) for x in (xs if row % 2 == 0 else reversed(xs))]
    return path


@pytest.mark.parametrize("game", ["cash", "astro"])
def test_a_finger_landing_in_a_round_zones_corner_and_sliding_onto_it_scratches_it(
    new_page: Any, live_server: Any, game: str
) -> None:
    page = phone_with_a_ticket(new_page, live_server, game)
    finger = Finger(page)
    zones = page.locator(ROUND_ZONES[game])
    assert zones.count() == 5
    for index in range(5):
        zone = zones.nth(index)
        zone.evaluate("element => element.scrollIntoView({block: 'center', behavior: 'instant'})")
        box = zone.bounding_box()
        assert box is not None
        finger.drag(from_the_corner_onto_the_circle(box))
        expect(zone).to_have_class(REVEALED, timeout=5000)
    screenshot(page, f"touch_{game}_round_zones_scratched", full_page=False)


TICKET_BACKGROUND_JS = {
    # Beside the title « Vos numéros », on the green of the ticket.
    "cash": "(() => { const t = document.querySelector('#ticket').getBoundingClientRect();"
    " const h = document.querySelector('.area-title').getBoundingClientRect();"
    " return [t.left + 8, (h.top + h.bottom) / 2]; })()",
    # The board's empty top-left corner, on the starry sky.
    "astro": "(() => { const b = document.querySelector('.astro-board').getBoundingClientRect();"
    " return [b.left + 6, b.top + 6]; })()",
}


@pytest.mark.parametrize("game", ["cash", "astro"])
def test_a_swipe_starting_on_the_ticket_outside_the_zones_scrolls_the_page(
    new_page: Any, live_server: Any, game: str
) -> None:
    page = phone_with_a_ticket(new_page, live_server, game)
    page.evaluate("window.scrollTo(0, 0)")
    x, y = page.evaluate(TICKET_BACKGROUND_JS[game])
    assert 0 < y < 740, f"the ticket's background is out of the window at y={y}"
    hit = page.evaluate(f"document.elementFromPoint({x}, {y}).closest('.zone, canvas') === null")
    assert hit, "the swipe must start outside the zones"
    Finger(page).drag([(x, y - step * 40) for step in range(6) if y - step * 40 > 0])
    page.wait_for_timeout(400)
    assert page.evaluate("window.scrollY") > 50


def swipe_up_from(page: Any, x: float, y: float) -> int:
    """A finger's upward swipe from (x, y); how far the page scrolled."""
    before = page.evaluate("window.scrollY")
    Finger(page).drag([(x, y - step * 40) for step in range(6) if y - step * 40 > 0])
    page.wait_for_timeout(400)
    return int(page.evaluate("window.scrollY") - before)


@pytest.mark.parametrize("game", ["cash", "astro"])
def test_a_swipe_on_a_zone_there_is_nothing_to_scratch_on_scrolls_the_page(
    new_page: Any, live_server: Any, game: str
) -> None:
    """Before a purchase the specimen's zones are locked: a finger on them means to scroll."""
    page = new_page(live_server.url, width=360, height=740, has_touch=True, is_mobile=True)
    player_with_balance(page, 1000)
    page.goto(f"/{game}.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    zone = page.locator("#ticket .zone").first
    expect(zone).to_have_class(re.compile(r"(^|\s)locked(\s|$)"))
    box = zone.bounding_box()
    assert box is not None and box["y"] + box["height"] / 2 < 740
    assert swipe_up_from(page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2) > 50


def from_the_corner_across_the_box(box: dict[str, float]) -> list[tuple[float, float]]:
    """From 2 px inside the box's top-left corner (outside its rounded corner), then to and fro
    across the whole box, enough to uncover it."""
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    path = [(left + 2, top + 2)]
    rows = 6
    for row in range(rows):
        y = top + height * (row + 0.5) / rows
        xs = [left + 4 + (width - 8) * step / 10 for step in range(11)]
        path += [(x, y) for x in (xs if row % 2 == 0 else reversed(xs))]
    return path


def reveal_by_keyboard(page: Any, selector: str) -> None:
    zone = page.locator(selector)
    zone.focus()
    page.keyboard.press("Enter")
    expect(zone).to_have_class(REVEALED)


ROUNDED_BOXES = {
    "cash_star": ("cash", "#yours .zone >> nth=0"),
    "astro_gain": ("astro", "[data-zone=gain]"),
    "astro_banner": ("astro", "[data-zone=banner]"),
}


@pytest.mark.parametrize("name", ROUNDED_BOXES)
def test_a_finger_landing_in_a_rounded_boxs_corner_and_sliding_across_scratches_it(
    new_page: Any, live_server: Any, name: str
) -> None:
    game, selector = ROUNDED_BOXES[name]
    page = phone_with_a_ticket(new_page, live_server, game)
    if selector.endswith("banner]"):  # the banner unlocks once the rest is uncovered
        for index in range(5):
            reveal_by_keyboard(page, f"[data-zone='symbols/{index}']")
        reveal_by_keyboard(page, "[data-zone=gain]")
    zone = page.locator(selector)
    expect(zone).not_to_have_class(re.compile(r"(^|\s)locked(\s|$)"), timeout=30_000)
    zone.evaluate("element => element.scrollIntoView({block: 'center', behavior: 'instant'})")
    box = zone.bounding_box()
    assert box is not None
    Finger(page).drag(from_the_corner_across_the_box(box))
    expect(zone).to_have_class(REVEALED, timeout=5000)
    screenshot(page, f"touch_{name}_from_corner", full_page=False)
