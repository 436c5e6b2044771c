"""The ticket's proof panel on a game page (issue 14, "the page"): the commitment's log index and
fingerprint in plain French from the purchase on, and the whole v2 proof checked in the
browser with WebCrypto — every check ✓ on a real proof, a ✗ where a proof was tampered with."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from browser_helpers import (
    EXPERT_WORDS,
    api_get,
    plain_part,
    player_with_balance,
    screenshot,
    ticket_id_on,
    wait_for_result,
)
from playwright.sync_api import Route, expect

pytestmark = pytest.mark.browser

CHECKS = [
    "key",
    "receipt",
    "commitment",
    "agreement",
    "unit",
    "commitment-entry",
    "receipt-entry",
    "order",
    "head",
]


def buy_in_auto(page: Any) -> dict[str, Any]:
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='5000']")
    page.get_by_role("button", name="Auto", exact=True).click()
    ticket_id = ticket_id_on(page)
    wait_for_result(page)
    return dict(api_get(page, f"/api/tickets/{ticket_id}"))


def checks_on(page: Any) -> dict[str, bool]:
    page.locator("#verify-in-browser").click()
    page.wait_for_selector("#proof-panel[data-verified]")
    items = page.locator(".proof-checks li")
    return {
        items.nth(i).get_attribute("data-check"): items.nth(i).get_attribute("data-ok") == "true"
        for i in range(items.count())
    }


@pytest.mark.parametrize(("width", "height"), [(360, 740), (1366, 768)])
def test_the_proof_panel_names_the_logged_commitment_and_checks_every_step_in_the_browser(
    new_page: Any, live_server: Any, width: int, height: int
) -> None:
    page = new_page(live_server.url, width=width, height=height)
    player_with_balance(page)
    ticket = buy_in_auto(page)
    receipt = ticket["receipt"]
    index = receipt["commitment_index"]
    logged = api_get(page, f"/api/log/entries?start={index}&end={index}")["entries"][0]
    root = logged["entry"]["commitment"]["root"]

    panel = page.locator("#proof-panel")
    expect(panel).to_be_visible()
    # For the player: what the proof shows, in plain French; the log's words for experts.
    expect(panel.locator(".proof-lead")).to_contain_text("personne, pas même nous")
    assert EXPERT_WORDS.search(plain_part(panel)) is None, plain_part(panel)
    fold = panel.locator(".proof-expert")
    expect(fold.locator("summary")).to_have_text("Pour les experts")
    commitment = fold.locator(".proof-commitment")
    expect(commitment).to_be_hidden()  # folded away until the player asks
    fold.locator("summary").click()
    expect(commitment).to_contain_text(
        "Ce ticket a été tiré d'un bloc scellé et publié avant sa vente : "
        f"engagement n° {index} du journal public (empreinte {root[:8]}…)."
    )
    assert commitment.locator(".fingerprint").get_attribute("title") == root
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    commitment.get_by_role("button", name="Copier l'empreinte complète de l'engagement").click()
    expect(commitment.locator(".copy")).to_have_text("Copié ✓")
    assert page.evaluate("navigator.clipboard.readText()") == root
    expect(fold.locator(".command")).to_have_text(
        f"grattage verify-ticket ticket-{ticket['id']}-preuve.json --log {live_server.url}"
    )
    expect(fold).to_contain_text(receipt["signature"])

    assert checks_on(page) == dict.fromkeys(CHECKS, True)
    expect(page.locator(".proof-checks .mark")).to_have_text(["✓"] * len(CHECKS))
    expect(panel.locator(".hint")).to_contain_text("Tout est vérifié")
    assert EXPERT_WORDS.search(plain_part(panel)) is None, plain_part(panel)  # verdict included
    expect(fold.locator(".monitor-command")).to_have_text("grattage monitor")
    panel.scroll_into_view_if_needed()
    screenshot(page, f"proof_panel_verified_{width}x{height}")
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width}px wide at {width}px"

    page.reload()  # the address names the ticket: its replay shows the same panel
    expect(page.locator("#replay-banner")).to_be_visible()
    expect(panel.locator(".proof-commitment")).to_contain_text(
        f"engagement n° {index} du journal public"
    )
    assert checks_on(page) == dict.fromkeys(CHECKS, True)


def _flip_hex(text: str) -> str:
    return ("0" if text[0] != "0" else "1") + text[1:]


def _salt(proof: dict[str, Any]) -> None:
    proof["unit"]["salt"] = _flip_hex(proof["unit"]["salt"])


def _head_root(proof: dict[str, Any]) -> None:
    proof["log"]["sth"]["root_hash"] = _flip_hex(proof["log"]["sth"]["root_hash"])


def _remapped_prize(proof: dict[str, Any]) -> None:
    """The issue's first forgery: a prize of the table re-mapped, its hash recomputed."""
    import hashlib

    from grattage.blocks.signing import canonical_json

    table = proof["commitment"]["table"]
    other_tier = 1 if proof["unit"]["tier"] == 1 else 0  # not the unit's: only the table lies
    table["tiers"][other_tier]["prize_cents"] -= 800
    proof["commitment"]["table_sha256"] = hashlib.sha256(canonical_json(table)).hexdigest()


def _receipt_position(proof: dict[str, Any]) -> None:
    proof["receipt"]["position"] += 1
    proof["unit"]["position"] += 1


def _sold_before_committed(proof: dict[str, Any]) -> None:
    proof["log"]["receipt_entry"]["index"] = proof["log"]["commitment_entry"]["index"]


@pytest.mark.parametrize(
    ("tamper", "failing"),
    [
        (_salt, {"unit"}),
        (_head_root, {"commitment-entry", "receipt-entry", "head"}),
        (_remapped_prize, {"commitment", "commitment-entry"}),
        (_receipt_position, {"receipt", "unit", "receipt-entry"}),
        (_sold_before_committed, {"receipt-entry", "order"}),
    ],
    ids=["unit-salt", "head-root", "remapped-prize", "receipt-position", "sold-first"],
)
def test_a_tampered_proof_shows_a_cross_on_the_check_it_breaks(
    new_page: Any,
    live_server: Any,
    tamper: Callable[[dict[str, Any]], None],
    failing: set[str],
) -> None:
    page = new_page(live_server.url, width=1366, height=768)
    player_with_balance(page)

    def tampered(route: Route) -> None:
        proof = route.fetch().json()
        tamper(proof)
        route.fulfill(
            status=200, content_type="application/json", body=json.dumps(proof).encode("ascii")
        )

    page.route("**/api/tickets/*/proof", tampered)
    buy_in_auto(page)
    results = checks_on(page)
    assert list(results) == CHECKS
    assert {name for name, ok in results.items() if not ok} == failing
    expect(page.locator("#proof-panel")).to_have_attribute("data-verified", "false")
    expect(page.locator(".proof-checks li.failed .mark").first).to_have_text("✗")
    expect(page.locator("#proof-panel .hint")).to_contain_text("Au moins une vérification a échoué")
    page.locator("#proof-panel").scroll_into_view_if_needed()
    screenshot(page, f"proof_panel_tampered_{tamper.__name__.strip('_')}")


TRICKY_JSON: Any = {
    "€ title": "Cash 500\u202f000\u00a0€ — «\u00a0test\u00a0»",
    "\U0001f600 beyond the BMP": "\U0001f600",
    "\ue000 private use": ["\ud800 lone surrogate", '"quotes" and \\ backslash'],
    "controls": "\b\f\n\r\t\x00\x1f\x7f\u2028",
    "Z": [0, -1, 9_007_199_254_740_991, True, False, None, {}, []],
    "a": {"b": {"c": ""}},
}


def test_the_pages_canonical_json_is_byte_for_byte_pythons(new_page: Any, live_server: Any) -> None:
    from grattage.blocks.signing import canonical_json

    page = new_page(live_server.url)
    page.goto("/login.html")
    text = json.dumps(TRICKY_JSON)  # ASCII with \u escapes: lone surrogates survive the trip
    in_the_page = page.evaluate(
        "text => import('/js/proof_check.js').then(m => m.canonicalJson(JSON.parse(text)))", text
    )
    assert in_the_page == canonical_json(TRICKY_JSON).decode("ascii")


def test_a_ticket_in_play_shows_its_commitment_and_is_checked_once_finished(
    new_page: Any, live_server: Any
) -> None:
    page = new_page(live_server.url)
    player_with_balance(page)
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='5000']")
    page.get_by_role("button", name="Jouez", exact=True).click()
    ticket_id_on(page)
    panel = page.locator("#proof-panel")
    expect(panel.locator(".proof-commitment")).to_contain_text("engagement n° ")
    expect(page.locator("#verify-in-browser")).to_be_disabled()  # the salt would tell the prize
    expect(panel.locator(".hint")).to_have_text(
        "La vérification complète sera possible une fois le ticket terminé."
    )
    page.get_by_role("button", name="Tout découvrir").click()
    wait_for_result(page)
    expect(page.locator("#verify-in-browser")).to_be_enabled()
    assert checks_on(page) == dict.fromkeys(CHECKS, True)


def test_a_browser_without_ed25519_is_told_so_in_french(new_page: Any, live_server: Any) -> None:
    page = new_page(live_server.url)
    page.add_init_script(  # a browser whose WebCrypto knows SHA-256 but not Ed25519
        """
        const importKey = crypto.subtle.importKey.bind(crypto.subtle);
        crypto.subtle.importKey = (format, key, algorithm, ...rest) =>
          algorithm && algorithm.name === "Ed25519"
            ? Promise.reject(new DOMException("Unrecognized name", "NotSupportedError"))
            : importKey(format, key, algorithm, ...rest);
        """
    )
    player_with_balance(page)
    buy_in_auto(page)
    page.locator("#verify-in-browser").click()
    expect(page.locator("#proof-panel .hint")).to_contain_text(
        "Votre navigateur ne sait pas vérifier les signatures Ed25519"
    )
    assert page.locator(".proof-checks li").count() == 0


def test_tickets_sold_before_and_after_a_key_rotation_are_checked_in_the_browser(
    new_page: Any, server_factory: Any
) -> None:
    """A server of its own, whose operator key rotates between two purchases: both proofs carry
    the key change and check ✓ against the history GET /api/log/key publishes."""
    from grattage.service.key_rotation import rotate_key

    server = server_factory(30, blocks=2)
    page = new_page(server.url, width=1366, height=768)
    player_with_balance(page)
    before = buy_in_auto(page)
    rotation = rotate_key(server.app.state.platform)
    assert checks_on(page) == dict.fromkeys(CHECKS, True)  # sold before, proven after
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents]")
    page.get_by_role("button", name="Auto", exact=True).click()
    ticket_id = ticket_id_on(page)
    wait_for_result(page)
    after = dict(api_get(page, f"/api/tickets/{ticket_id}"))
    assert checks_on(page) == dict.fromkeys(CHECKS, True)
    assert after["receipt"]["key_id"] == rotation.new_key_id != before["receipt"]["key_id"]
    expect(page.locator(".proof-checks li[data-check='key'] .check-detail")).to_contain_text(
        "après 1 changement de clé"
    )


DRAWN_FACTS = {"verified": True, "unit": 9_466_933, "size": 12_000_000, "n": 13, "round": 1113}


def test_a_drawn_ticket_s_verdict_is_plain_french_with_its_numbers_grouped(
    new_page: Any, live_server: Any
) -> None:
    """The outsider's ticket: unit 9466933 of 12000000, 13 sold before it, witness round 1113
    (the test blocks are too small for numbers of four digits)."""
    page = new_page(live_server.url)
    page.goto("/login.html")
    said = page.evaluate(
        "facts => import('/js/proof_panel.js').then(m => m.drawSentences(facts))", DRAWN_FACTS
    )
    assert said["state"] == "ok"
    assert said["plain"] == (
        "Tirage vérifié : votre ticket est le n°\u00a09\u202f466\u202f933 de son bloc, tiré au "
        "hasard après votre achat parmi les 11\u202f999\u202f987 tickets encore invendus."
    )
    assert EXPERT_WORDS.search(said["plain"]) is None
    assert "tour n°\u00a01\u202f113 du témoin" in said["expert"]
    assert "grattage verify-ticket --log … --replay" in said["expert"]
