"""What the browser tests do again and again: make a player, scratch with the mouse, ask the API."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import expect

from grattage.games.money import format_euros
from support import person_named_after

CSRF = {"X-Grattage-CSRF": "1"}
PASSWORD = "correct horse battery staple"
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
CASH_ZONES = 25
ASTRO_ZONES = 7
WAIT_MS = 30_000


class PageTrouble:
    """What went wrong on the pages it watches: uncaught exceptions and console errors, which is
    where Chromium reports a Content-Security-Policy violation and a missing file.

    One kind of console error is not trouble: Chromium logs every 4xx answer of the API
    ("Failed to load resource: … status of 404"), and the API answers 4xx by design (no ticket
    yet, not logged in, balance too low); the pages turn those into messages the tests check.
    """

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.expected: list[re.Pattern[str]] = []

    def allow(self, pattern: str) -> None:
        """A test that breaks something on purpose (a lost answer) names the error it causes."""
        self.expected.append(re.compile(pattern))

    def watch(self, page: Any) -> None:
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on("console", self.console)

    def console(self, message: Any) -> None:
        if message.type != "error":
            return
        url = message.location.get("url", "")
        api_answer = urlsplit(url).path.startswith("/api/") and re.search(
            r"Failed to load resource: the server responded with a status of 4\d\d", message.text
        )
        error = f"console: {message.text} ({url})"
        if not api_answer and not any(pattern.search(error) for pattern in self.expected):
            self.errors.append(error)


def new_email() -> str:
    return f"joueur-{uuid.uuid4().hex[:10]}@example.org"


def same_text(text: str) -> str:
    """Compare amounts whatever space the page uses (narrow, no-break or plain)."""
    return re.sub(r"\s", "", text)


def euros(cents: int) -> str:
    return same_text(format_euros(cents))


def player_with_balance(page: Any, deposit_cents: int = 5000) -> str:
    """Sign up, log in and deposit through the API, in the page's context (shares its cookie)."""
    email = new_email()
    api = page.context.request
    created = api.post(
        "/api/players",
        data={
            "email": email,
            "password": PASSWORD,
            "first_name": "Camille",
            "last_name": person_named_after(email)["last_name"],
            "birth_date": "1990-05-17",
        },
    )
    assert created.status == 201, created.text()
    logged = api.post("/api/sessions", data={"email": email, "password": PASSWORD})
    assert logged.status == 200, logged.text()
    if deposit_cents:
        deposited = api.post("/api/me/deposits", data={"amount_cents": deposit_cents}, headers=CSRF)
        assert deposited.status == 201, deposited.text()
    return email


def player_with_balance_top_up(page: Any, deposit_cents: int) -> None:
    deposited = page.context.request.post(
        "/api/me/deposits", data={"amount_cents": deposit_cents}, headers=CSRF
    )
    assert deposited.status == 201, deposited.text()


def api_get(page: Any, path: str) -> Any:
    answer = page.context.request.get(path)
    assert answer.ok, f"GET {path}: {answer.status} {answer.text()}"
    return answer.json()


def scratch(page: Any, zone: Any, rows: int = 6) -> None:
    """Scratch a zone's canvas by hand: press, zigzag across it row by row, release."""
    canvas = zone.locator("canvas.scratch-cover")
    # In the middle of the screen, away from the sticky header that would catch the pointer.
    canvas.evaluate("element => element.scrollIntoView({block: 'center', behavior: 'instant'})")
    box = canvas.bounding_box()
    assert box is not None, "the zone has no scratch layer to scratch"
    zigzag(page, box, rows)


def zigzag(page: Any, box: dict[str, float], rows: int = 6) -> None:
    """Press in ``box``'s corner, zigzag across it row by row, release."""
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    page.mouse.move(left + 2, top + 2)
    page.mouse.down()
    for row in range(rows):
        y = top + height * (row + 0.5) / rows
        start, end = (left + 1, left + width - 1) if row % 2 == 0 else (left + width - 1, left + 1)
        page.mouse.move(start, y, steps=2)
        page.mouse.move(end, y, steps=6)
    page.mouse.up()


def route_prize(page: Any, prize_cents: int, game: str = "cash") -> None:
    """The server's real tickets, but each purchase's answer says it won ``prize_cents``: a
    big win on demand (the test tables have none), for the page's celebration only."""

    def answer(route: Any) -> None:
        response = route.fetch()
        ticket = response.json()
        ticket["prize_cents"] = prize_cents
        route.fulfill(response=response, json=ticket)

    page.route(f"**/api/games/{game}/tickets", answer)


def ticket_id_on(page: Any) -> int:
    # Locator waits, not wait_for_function: the pages' CSP forbids eval (no 'unsafe-eval').
    from playwright.sync_api import expect

    expect(page.locator("#ticket")).to_have_attribute("data-ticket-id", re.compile(r"\d"))
    return int(page.locator("#ticket").get_attribute("data-ticket-id") or "0")


def wait_for_result(page: Any, timeout: float = 15_000) -> int:
    """Wait for the result message to appear by itself, its count-up over (a win's amount counts
    up, celebration.js); return the prize it states (cents)."""
    page.wait_for_selector("#result[data-prize-cents]:not([data-counting])", timeout=timeout)
    return int(page.locator("#result").get_attribute("data-prize-cents") or "-1")


def result_past_any_big_win(page: Any, timeout: float = 15_000) -> int:
    """:func:`wait_for_result`, then the big-win screen closed with « Continuer » if the prize
    opened it (1 000 € and more: a random ticket of a small test table may well be one)."""
    prize = wait_for_result(page, timeout)
    dismiss_any_big_win(page)
    return prize


def dismiss_any_big_win(page: Any) -> None:
    """The big-win screen, if open, closed with « Continuer »."""
    if page.locator("#big-win[open]").count():
        page.get_by_role("button", name="Continuer").click()
        expect(page.locator("#big-win[open]")).to_have_count(0)


def screenshot(page: Any, name: str, full_page: bool = True) -> Path:
    """Save a screenshot under ``test-artifacts/`` (gitignored) for a human to look at: the whole
    page, or (``full_page=False``) the window as the player sees it."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(600)  # let the reveal and message animations end
    path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def scratch_by_touch(page: Any, zone: Any, rows: int = 6) -> None:
    """Scratch with a finger: touch events through the DevTools protocol (real touch input)."""
    canvas = zone.locator("canvas.scratch-cover")
    canvas.evaluate("element => element.scrollIntoView({block: 'center', behavior: 'instant'})")
    box = canvas.bounding_box()
    assert box is not None, "the zone has no scratch layer to scratch"
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    devtools = page.context.new_cdp_session(page)

    def touch(kind: str, x: float, y: float) -> None:
        points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
        devtools.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", left + width / 2, top + 2)
    for row in range(rows):
        y = top + height * (row + 0.5) / rows
        xs = [left + width * step / 8 for step in range(1, 8)]
        for x in xs if row % 2 == 0 else reversed(xs):
            touch("touchMove", x, y)
    touch("touchEnd", 0, 0)
    devtools.detach()


def scratch_astro_discs_and_gain(page: Any) -> None:
    """The five discs scratched by pointer, then the gain by keyboard (Enter/Space reveals
    the focused zone): everything but the banner, which unlocks only then."""
    for index in range(5):
        disc = page.locator(f"[data-zone='symbols/{index}']")
        scratch(page, disc)
        disc.locator("svg").wait_for()
    gain = page.locator("[data-zone=gain]")
    gain.focus()
    page.keyboard.press("Space")
    gain.locator(".gain-amount").wait_for()


def scratch_the_whole_astro_ticket(page: Any) -> int:
    """What its regulation asks in « Jouer »: the five discs, the gain, then the banner, each
    by hand (Astro offers no « Tout découvrir »). The prize the result states."""
    scratch_astro_discs_and_gain(page)
    banner = page.locator("[data-zone=banner]")
    expect(banner).not_to_have_class(re.compile(r"(^|\s)locked(\s|$)"), timeout=WAIT_MS)
    scratch(page, banner)
    return wait_for_result(page)


EXPERT_WORDS = re.compile(
    r"grattage |--|engagement|journal|témoin|tour n°|unité|empreinte|SHA|Merkle|\d{4,}"
)
"""What the plain part of a proof panel never says: commands, the log's and the draw's jargon,
a number of four digits or more without its French grouping (« 9 466 933 »)."""


def plain_part(panel: Any) -> str:
    """The proof panel's text a player reads without opening « Pour les experts »."""
    return str(
        panel.evaluate(
            "p => { const c = p.cloneNode(true);"
            " c.querySelectorAll('details').forEach(d => d.remove()); return c.textContent; }"
        )
    )
