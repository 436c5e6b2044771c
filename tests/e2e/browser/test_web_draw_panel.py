"""A drawn ticket's proof panel (issue 15): the page recomputes the draw in the browser — the
receipt's chain, the witness's round and its cosigned head, the operator's link, j, the swap —
and says it in one plain French line; a proof whose round, link or slot was changed shows a
failure line, never « Tirage vérifié ». The same checker, run in Chromium on the drawn proofs
``verify-ticket`` checks (tests/drawn_log.py), agrees with Python."""

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

from drawn_forgeries import FORGERIES, drawn_log, log_key

pytestmark = pytest.mark.browser

DRAW_CHECKS = [
    "draw-previous",
    "draw-entry",
    "draw-round",
    "draw-round-link",
    "draw-cosigned",
    "draw-link",
    "draw-slot",
    "draw-unit",
]
CHECKS = ["key", "receipt", "commitment", "agreement", *DRAW_CHECKS, "unit"]
CHECKS += ["commitment-entry", "receipt-entry", "order", "head"]


def buy_drawn(page: Any) -> dict[str, Any]:
    page.goto("/cash.html")
    page.wait_for_selector("#balance[data-cents='5000']")
    page.get_by_role("button", name="Auto", exact=True).click()
    ticket_id = ticket_id_on(page)
    wait_for_result(page)
    return dict(api_get(page, f"/api/tickets/{ticket_id}"))


def checks_on(page: Any) -> dict[str, str]:
    page.locator("#verify-in-browser").click()
    page.wait_for_selector("#proof-panel[data-verified]")
    items = page.locator(".proof-checks li")
    return {
        items.nth(i).get_attribute("data-check"): items.nth(i).get_attribute("data-ok")
        for i in range(items.count())
    }


@pytest.mark.parametrize(("width", "height"), [(360, 740), (1366, 768)])
def test_a_drawn_ticket_s_draw_is_recomputed_in_the_browser_and_said_in_french(
    new_page: Any, drawn_server: Any, width: int, height: int
) -> None:
    page = new_page(drawn_server.url, width=width, height=height)
    player_with_balance(page)
    ticket = buy_drawn(page)
    assert ticket["receipt"]["format"] == "grattage-receipt/2"
    proof = api_get(page, f"/api/tickets/{ticket['id']}/proof")
    unit, drawn = proof["unit"]["position"], proof["draw"]["drawn_entry"]["entry"]
    size, n = proof["commitment"]["size"], ticket["receipt"]["sequence"]

    assert checks_on(page) == dict.fromkeys(CHECKS, "true")
    panel = page.locator("#proof-panel")
    expect(panel).to_have_attribute("data-verified", "true")
    verdict = panel.locator("#draw-verdict")
    expect(verdict).to_have_attribute("data-state", "ok")
    expect(verdict).to_contain_text(
        f"Tirage vérifié : votre ticket est le n° {unit} de son bloc, tiré au hasard après "
        f"votre achat parmi les {size - n} tickets encore invendus."
    )
    assert EXPERT_WORDS.search(plain_part(panel)) is None, plain_part(panel)
    fold = panel.locator(".proof-expert")
    note = fold.locator(".proof-expert-note")
    expect(note).to_be_hidden()  # for experts: the witness's round, the commands
    fold.locator("summary").click()
    expect(note).to_contain_text(f"tour n° {drawn['beacon']['round']} du témoin")
    # what one proof cannot show is said, not implied (the outsider's unit sold twice)
    expect(note).to_contain_text("Qu'aucune autre vente n'ait reçu cette unité")
    expect(panel.locator(".proof-checks li[data-check='draw-slot'] .check-detail")).to_have_text(
        f"case {drawn['slot']} tirée parmi les cases {n} à {size - 1}"
    )
    expert = panel.locator(".draw-expert")
    expect(expert.locator("dl")).to_be_visible()  # in the fold, opened above
    expect(expert).to_contain_text(drawn["link"])
    expect(expert).to_contain_text(str(drawn["slot"]))
    expect(panel.locator(".hint")).to_contain_text("Tout est vérifié")
    panel.scroll_into_view_if_needed()
    screenshot(page, f"draw_panel_verified_{width}x{height}")
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width}px wide at {width}px"


def _flip_hex(text: str) -> str:
    return ("0" if text[0] != "0" else "1") + text[1:]


def _another_round(proof: dict[str, Any], witness: Any) -> None:
    """The witness's own signed document of another round (the one before, if any): genuine,
    but not the draw's."""
    beacon = proof["draw"]["drawn_entry"]["entry"]["beacon"]
    other = beacon["round"] - 1 if beacon["round"] > 1 else beacon["round"] + 1
    document, _ = witness.round_document(other, beacon["chain_id"], wait=True)
    proof["draw"]["round"] = document


def _another_link(proof: dict[str, Any], witness: Any) -> None:
    entry = proof["draw"]["drawn_entry"]["entry"]
    entry["link"] = _flip_hex(entry["link"])


def _another_slot(proof: dict[str, Any], witness: Any) -> None:
    entry = proof["draw"]["drawn_entry"]["entry"]
    entry["slot"] = entry["slot"] + 1 if entry["slot"] + 1 < proof["commitment"]["size"] else 0


def _a_consistency_to_another_head(proof: dict[str, Any], witness: Any) -> None:
    proof["draw"]["consistency"] = [_flip_hex(node) for node in proof["draw"]["consistency"]]
    if not proof["draw"]["consistency"]:  # the same size: a root of another tree instead
        proof["draw"]["cosigned"]["sth"]["root_hash"] = _flip_hex(
            proof["draw"]["cosigned"]["sth"]["root_hash"]
        )


@pytest.mark.parametrize(
    ("tamper", "broken"),
    [
        (_another_round, "draw-round"),
        (_another_link, "draw-entry"),  # the link is in the logged entry: not in the head then
        (_another_slot, "draw-entry"),
        (_a_consistency_to_another_head, "draw-cosigned"),
    ],
    ids=["another-round", "another-link", "another-slot", "another-head"],
)
def test_a_tampered_draw_shows_a_failure_line_not_a_success(
    new_page: Any,
    drawn_server: Any,
    tamper: Callable[[dict[str, Any], Any], None],
    broken: str,
) -> None:
    page = new_page(drawn_server.url, width=1366, height=768)
    player_with_balance(page)
    witness = drawn_server.app.state.platform.witness

    def tampered(route: Route) -> None:
        proof = route.fetch().json()
        tamper(proof, witness)
        route.fulfill(
            status=200, content_type="application/json", body=json.dumps(proof).encode("ascii")
        )

    page.route("**/api/tickets/*/proof", tampered)
    buy_drawn(page)
    results = checks_on(page)
    failed = [name for name, ok in results.items() if ok != "true"]
    assert failed and failed[0] == broken, results
    assert set(failed) <= set(DRAW_CHECKS), failed
    assert all(results[name] == "false" for name in failed)
    panel = page.locator("#proof-panel")
    expect(panel).to_have_attribute("data-verified", "false")
    verdict = panel.locator("#draw-verdict")
    expect(verdict).to_have_attribute("data-state", "failed")
    expect(verdict).to_contain_text("Tirage non vérifié : ")
    expect(verdict).not_to_contain_text("Tirage vérifié")
    expect(panel.locator(f".proof-checks li[data-check='{broken}'] .mark")).to_have_text("✗")
    expect(panel.locator(".hint")).to_contain_text("Au moins une vérification a échoué")
    panel.scroll_into_view_if_needed()
    screenshot(page, f"draw_panel_tampered_{tamper.__name__.strip('_')}")


def _walks_left_to_verify_ticket(route: Route) -> None:
    """proof_draw.js as served, with no hash walk allowed: the page of a very large block."""
    script = route.fetch().text()
    assert "export const WALK_LIMIT = 250_000;" in script
    route.fulfill(
        status=200,
        content_type="text/javascript",
        body=script.replace("export const WALK_LIMIT = 250_000;", "export const WALK_LIMIT = 0;"),
    )


def test_a_walk_too_long_for_the_page_is_said_not_checked_and_left_to_verify_ticket(
    new_page: Any, drawn_server: Any
) -> None:
    page = new_page(drawn_server.url, width=360, height=740)
    page.route("**/js/proof_draw.js", _walks_left_to_verify_ticket)
    player_with_balance(page)
    buy_drawn(page)
    results = checks_on(page)
    skipped = {"draw-round-link", "draw-link"}
    assert results == {name: "skipped" if name in skipped else "true" for name in CHECKS}
    panel = page.locator("#proof-panel")
    expect(panel).to_have_attribute("data-verified", "partial")
    expect(panel.locator("#draw-verdict")).to_have_attribute("data-state", "partial")
    expect(panel.locator("#draw-verdict")).to_contain_text(
        "Tirage vérifié en partie : votre ticket est bien le n° "
    )
    assert EXPERT_WORDS.search(plain_part(panel)) is None, plain_part(panel)
    expect(panel.locator(".proof-expert-note")).to_contain_text(
        "Reste à vérifier, avec « grattage verify-ticket », que ce tour descend bien de la "
        "chaîne que le témoin a publiée d'avance et que ce maillon est bien celui de la chaîne "
        "que l'opérateur a engagée avant la vente"
    )
    expect(panel.locator(".proof-checks li.skipped .mark")).to_have_text(["–", "–"])
    expect(panel.locator(".proof-checks li[data-check='draw-link']")).to_contain_text(
        "non vérifié dans le navigateur"
    )
    hint = panel.locator(".hint")
    expect(hint).to_contain_text("2 vérifications (marquées –) demandent trop de calculs")
    expect(hint).to_contain_text("« Pour les experts » dit comment la vérifier hors ligne")
    expect(hint).not_to_contain_text("Tout est vérifié")
    panel.scroll_into_view_if_needed()
    screenshot(page, "draw_panel_partial_360x740")


def test_chromium_s_checker_agrees_with_python_on_every_drawn_proof_and_forgery(
    new_page: Any, live_server: Any
) -> None:
    """tests/drawn_log.py's proofs, honest and forged, checked by the page's own module in
    Chromium: ✓ where ``verify-ticket`` accepts, ✗ first on the check each forgery breaks."""
    log = drawn_log()
    honest = [log.proof(sale.n) for sale in log.sales[:: len(log.sales) // 12]]
    forged = [forge(log) for forge, _, _ in FORGERIES]
    page = new_page(live_server.url)
    page.goto("/login.html")
    answers = page.evaluate(
        """([proofs, key]) => import('/js/proof_check.js').then(async (m) => {
          const answers = [];
          for (const proof of proofs) {
            const drawFacts = {};
            const results = await m.checkProof(proof, key, { drawFacts });
            answers.push({ results, verified: drawFacts.verified, unit: drawFacts.unit });
          }
          return answers;
        })""",
        [json.loads(json.dumps(honest + forged)), log_key(log)],
    )
    for answer in answers[: len(honest)]:
        assert {r["id"]: r["ok"] for r in answer["results"]} == dict.fromkeys(CHECKS, True)
        assert answer["verified"] is True
    for answer, (forge, broken, _) in zip(answers[len(honest) :], FORGERIES, strict=True):
        failed = [r["id"] for r in answer["results"] if r["ok"] is not True]
        assert failed and failed[0] == broken, (forge.__name__, failed)
        assert answer["verified"] is False, forge.__name__
