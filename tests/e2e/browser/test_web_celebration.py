"""A win, celebrated with taste (issue 16, item 4): the amount counts up to the exact prize, a big
win (from 1 000 €) gets its own screen, the sounds are made in the browser and a mute switch is
remembered on the device; reduced motion and replays are respected."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import pytest
from browser_helpers import (
    euros,
    player_with_balance,
    route_prize,
    same_text,
    scratch,
    screenshot,
    ticket_id_on,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

VIEWPORTS = [(360, 740), (1366, 768)]
BIG_WIN_CENTS = 150_000  # 1 500 €: above the 1 000 € of the big-win screen
WAIT_MS = 30_000

# What the page did, seen from inside it: every text of #result, every AudioContext made and
# every sound started. An init script runs before the page's own and is not bound by its CSP.
WATCH = """
(() => {
  const seen = { texts: [], writes: [], contexts: 0, sounds: 0 };
  window.__seen = seen;
  const Original = window.AudioContext;
  if (Original) {
    window.AudioContext = class extends Original {
      constructor(...args) { super(...args); seen.contexts += 1; }
    };
    for (const Node of [window.OscillatorNode, window.AudioBufferSourceNode]) {
      const start = Node.prototype.start;
      Node.prototype.start = function (...args) { seen.sounds += 1; return start.apply(this, args); };
    }
  }
  document.addEventListener("DOMContentLoaded", () => {
    const result = document.getElementById("result");
    if (!result) return;
    new MutationObserver(() => {
      const text = result.textContent;
      if (text) seen.writes.push(text);  // every write, a repeated one too
      if (text && text !== seen.texts[seen.texts.length - 1]) seen.texts.push(text);
    }).observe(result, { childList: true, characterData: true, subtree: true });
  });
})();
"""


def watched_page(new_page: Any, url: str, width: int, height: int, **options: Any) -> Any:
    page = new_page(url, width=width, height=height, **options)
    page.add_init_script(WATCH)
    return page


def watched_game_page(
    new_page: Any, url: str, path: str, cents: int, width: int, height: int, **options: Any
) -> Any:
    """A watched page on the game at ``path``, for a player holding ``cents``."""
    page = watched_page(new_page, url, width, height, **options)
    player_with_balance(page, cents)
    page.goto(path)
    page.wait_for_selector(f"#balance[data-cents='{cents}']")
    return page


def seen(page: Any) -> dict[str, Any]:
    return page.evaluate("window.__seen")


def amounts_in(texts: list[str]) -> list[int]:
    """The euros each text of the result states (its last amount), in whole cents."""
    found = []
    for text in texts:
        numbers = re.findall(r"(\d[\d\s]*)(?:,(\d\d))?\s*€", text)
        whole, decimals = numbers[-1]
        found.append(int(re.sub(r"\s", "", whole)) * 100 + int(decimals or 0))
    return found


def buy_auto(page: Any) -> int:
    previous = page.locator("#ticket").get_attribute("data-ticket-id")
    page.evaluate("window.__seen.texts = []; window.__seen.writes = []")
    page.get_by_role("button", name="Auto", exact=True).click()
    if previous:
        expect(page.locator("#ticket")).not_to_have_attribute(
            "data-ticket-id", previous, timeout=WAIT_MS
        )
    ticket_id = ticket_id_on(page)
    page.wait_for_selector("#result[data-prize-cents]", timeout=WAIT_MS)
    return ticket_id


def buy_until_a_win(page: Any) -> tuple[int, int]:
    """Auto tickets until one wins (half of the test table does): its id and prize."""
    for _ in range(20):
        ticket_id = buy_auto(page)
        prize = int(page.locator("#result").get_attribute("data-prize-cents") or "0")
        if prize:
            return ticket_id, prize
        page.wait_for_selector("#result[data-prize-cents]:not([data-counting])")
    pytest.fail("no winning Cash ticket in 20")


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_a_win_counts_up_from_its_first_euro_and_ends_on_the_exact_prize_with_a_jingle(
    new_page: Any, live_server: Any, width: int, height: int
) -> None:
    page = watched_game_page(new_page, live_server.url, "/cash.html", 10_000, width, height)
    _, prize = buy_until_a_win(page)
    expect(page.locator("#result")).to_have_attribute("data-counting", "")
    screenshot(page, f"celebration_count_up_{width}")
    page.wait_for_selector("#result[data-prize-cents]:not([data-counting])", timeout=5_000)
    result = page.locator("#result")
    assert same_text(result.inner_text()) == same_text(f"Bravo ! Vous gagnez {euros(prize)}.")
    texts = seen(page)["texts"]
    amounts = amounts_in(texts)
    assert amounts[0] > 0, texts  # never « Vous gagnez 0 € » (the outsider saw it twice)…
    writes = seen(page)["writes"]
    assert all(a != b for a, b in pairwise(writes)), writes  # …no text twice…
    assert amounts == sorted(amounts), texts  # …always up…
    assert len(set(amounts)) >= 3, texts  # …in several steps…
    assert amounts[-1] == prize, texts  # …to the prize itself
    assert result.get_attribute("aria-busy") is None  # read aloud once, the final amount
    assert page.locator("#big-win").count() == 0  # under 1 000 €: no big-win screen
    assert seen(page)["sounds"] > 0  # sound on by default: the jingle played
    screenshot(page, f"celebration_win_{width}")


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_a_big_win_shows_its_screen_which_continuer_and_escape_close(
    new_page: Any, live_server: Any, width: int, height: int
) -> None:
    page = watched_game_page(new_page, live_server.url, "/cash.html", 2000, width, height)
    route_prize(page, BIG_WIN_CENTS)
    buy_auto(page)
    dialog = page.get_by_role("dialog", name="Gros lot !")
    expect(dialog).to_be_visible()
    continuer = dialog.get_by_role("button", name="Continuer")
    expect(continuer).to_be_focused()
    page.wait_for_selector("#result[data-prize-cents]:not([data-counting])", timeout=5_000)
    page.wait_for_timeout(1200)  # the screen's own count-up
    assert same_text(dialog.locator(".big-win-amount").inner_text()) == euros(BIG_WIN_CENTS)
    assert same_text(page.locator("#result").inner_text()) == same_text(
        f"Bravo ! Vous gagnez {euros(BIG_WIN_CENTS)}."
    )
    screenshot(page, f"celebration_big_win_{width}")
    continuer.click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("button", name="Auto", exact=True)).to_be_focused()

    buy_auto(page)
    expect(dialog).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("button", name="Auto", exact=True)).to_be_focused()


def test_with_reduced_motion_the_final_amount_is_there_at_once(
    new_page: Any, live_server: Any
) -> None:
    page = watched_game_page(
        new_page, live_server.url, "/cash.html", 2000, 1366, 768, reduced_motion="reduce"
    )
    route_prize(page, BIG_WIN_CENTS)
    buy_auto(page)
    final = same_text(f"Bravo ! Vous gagnez {euros(BIG_WIN_CENTS)}.")
    assert same_text(page.locator("#result").inner_text()) == final
    assert page.locator("#result[data-counting]").count() == 0
    assert {same_text(text) for text in seen(page)["texts"]} == {final}  # no step before it
    dialog = page.get_by_role("dialog", name="Gros lot !")
    expect(dialog).to_be_visible()
    assert same_text(dialog.locator(".big-win-amount").inner_text()) == euros(BIG_WIN_CENTS)
    assert (
        dialog.locator(".confetti .piece").first.evaluate(
            "piece => getComputedStyle(piece).animationName"
        )
        == "none"
    )  # the confetti stay still
    screenshot(page, "celebration_big_win_reduced_motion")
    dialog.get_by_role("button", name="Continuer").click()


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_the_mute_switch_is_remembered_and_a_muted_page_starts_no_sound(
    new_page: Any, live_server: Any, width: int, height: int
) -> None:
    page = watched_page(new_page, live_server.url, width, height)
    player_with_balance(page, 2000)
    page.goto("/cash.html")
    toggle = page.locator("#sound-toggle")
    expect(toggle).to_have_text("Son activé")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    toggle.click()
    expect(toggle).to_have_text("Son coupé")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    page.reload()
    page.wait_for_selector("#balance[data-cents='2000']")
    expect(toggle).to_have_text("Son coupé")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    screenshot(page, f"celebration_muted_{width}")

    route_prize(page, 1000)
    buy_auto(page)  # a click, then a win: each could have woken the sound
    page.wait_for_selector("#result[data-prize-cents]:not([data-counting])", timeout=5_000)
    assert seen(page)["contexts"] == 0
    assert seen(page)["sounds"] == 0

    toggle.click()
    expect(toggle).to_have_text("Son activé")
    page.reload()
    expect(toggle).to_have_text("Son activé")
    expect(toggle).to_have_attribute("aria-pressed", "true")


def test_a_replay_from_the_history_shows_the_win_at_once_and_silently(
    new_page: Any, live_server: Any
) -> None:
    page = watched_game_page(new_page, live_server.url, "/cash.html", 10_000, 1366, 768)
    ticket_id, prize = buy_until_a_win(page)
    page.wait_for_selector("#result[data-prize-cents]:not([data-counting])", timeout=5_000)

    # Replayed as if it were a big win: still no screen, no count, no sound.
    def as_big(route: Any) -> None:
        response = route.fetch()
        ticket = response.json()
        ticket["prize_cents"] = BIG_WIN_CENTS
        route.fulfill(response=response, json=ticket)

    page.route(f"**/api/tickets/{ticket_id}", as_big)
    page.goto("/history.html")
    page.locator(f".history-row[data-ticket-id='{ticket_id}'] a").click()
    page.wait_for_url(f"**/cash.html?ticket={ticket_id}")
    page.wait_for_selector("#replay-banner:not([hidden])")
    page.wait_for_selector("#result[data-prize-cents]")
    final = same_text(f"Bravo ! Vous gagnez {euros(BIG_WIN_CENTS)}.")
    assert same_text(page.locator("#result").inner_text()) == final
    page.locator("#game-title").click()  # a gesture on the page: the sound may wake, not play
    page.wait_for_timeout(1200)
    assert {same_text(text) for text in seen(page)["texts"]} == {final}
    assert page.locator("#big-win").count() == 0
    assert seen(page)["sounds"] == 0
    assert prize > 0


def test_an_astro_win_counts_up_too_and_ends_on_its_own_message(
    new_page: Any, live_server: Any
) -> None:
    page = watched_game_page(new_page, live_server.url, "/astro.html", 10_000, 360, 740)
    page.get_by_role("radio", name="Lion").click()
    for _ in range(20):
        previous = page.locator("#ticket").get_attribute("data-ticket-id")
        page.evaluate("window.__seen.texts = []; window.__seen.writes = []")
        page.get_by_role("button", name="Auto", exact=True).click()
        if previous:
            expect(page.locator("#ticket")).not_to_have_attribute(
                "data-ticket-id", previous, timeout=WAIT_MS
            )
        page.wait_for_selector("#result[data-prize-cents]:not([data-counting])", timeout=WAIT_MS)
        prize = int(page.locator("#result").get_attribute("data-prize-cents") or "0")
        if prize:
            break
    else:
        pytest.fail("no winning Astro ticket in 20")
    message = same_text(page.locator("#result").inner_text())
    assert message.startswith("Gagné!") and message.endswith(euros(prize))
    amounts = amounts_in(seen(page)["texts"])
    # It counts in whole euros from the first: a 2 € win can only show 1 € then 2 € (a CI run
    # met one and failed on « at least 3 amounts »).
    assert amounts[0] > 0 and amounts[-1] == prize, amounts
    assert len(set(amounts)) >= min(3, prize // 100), amounts
    screenshot(page, "celebration_astro_win_360")


def test_scratching_by_hand_makes_a_soft_throttled_scratch_sound(
    new_page: Any, live_server: Any
) -> None:
    page = watched_game_page(new_page, live_server.url, "/cash.html", 2000, 1366, 768)
    page.get_by_role("button", name="Jouez", exact=True).click()
    ticket_id_on(page)
    zone = page.locator("[data-zone='your_numbers/0']")
    moves = page.evaluate(
        """() => {
          window.__moves = 0;
          document.addEventListener("pointermove", () => { window.__moves += 1; });
        }"""
    )
    assert moves is None
    before = seen(page)["sounds"]
    scratch(page, zone)
    made = seen(page)["sounds"] - before
    assert made > 0  # the scratch is heard…
    assert made < page.evaluate("window.__moves") / 2  # …but not on every move of the pointer
