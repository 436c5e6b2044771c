"""The page's draw checker (web/static/js/proof_draw.js, run by Node) agrees with the Python
one: the same j, K and attempts on every unit vector of docs/draw.md
(tests/fixtures/golden/draw_vectors.json), ✓ on every drawn ticket's proof that
``verify-ticket`` accepts, and a ✗ on the check a forgery breaks where ``verify-ticket``
refuses it."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import playwright
import pytest

from drawn_forgeries import FORGERIES, drawn_log, log_key
from drawn_log import DrawnLog
from grattage.blocks.hashchain import hash_times
from grattage.blocks.proofs_v2 import verify_ticket_proof
from grattage.errors import VerificationFailed

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "tests" / "unit" / "js" / "check_draws.mjs"
VECTORS = json.loads((ROOT / "tests/fixtures/golden/draw_vectors.json").read_text("utf-8"))
# The machine's Node, else the one Playwright ships with its driver (a dependency of the
# tests): the check never silently skips.
PLAYWRIGHT_NODE = Path(playwright.__file__).parent / "driver" / "node"
NODE = shutil.which("node") or (str(PLAYWRIGHT_NODE) if PLAYWRIGHT_NODE.exists() else None)

pytestmark = pytest.mark.skipif(
    NODE is None,
    reason="NO NODE FOUND: the page's checker runs in Node here (apt-get install nodejs)",
)

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


def in_node(job: dict[str, Any]) -> dict[str, Any]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(RUNNER)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.fixture(scope="module")
def drawn() -> DrawnLog:
    return drawn_log()


def checked_in_node(
    log: DrawnLog, proofs: list[dict[str, Any]], walk_limit: int | None = None
) -> list[dict[str, Any]]:
    job: dict[str, Any] = {"proofs": [{"proof": p, "log_key": log_key(log)} for p in proofs]}
    if walk_limit is not None:
        job["walk_limit"] = walk_limit
    answers: list[dict[str, Any]] = in_node(job)["proofs"]
    return answers


def test_the_pages_draw_gives_every_unit_vector_of_draw_md() -> None:
    vectors = VECTORS["unit_draws"]
    answers = in_node({"unit_draws": vectors})["unit_draws"]
    for vector, answer in zip(vectors, answers, strict=True):
        assert answer["K"] == vector["K"]
        assert answer["j"] == str(vector["j"])
        assert answer["attempts"] == len(vector["attempts"])
    assert any(len(v["attempts"]) > 1 for v in vectors)  # the rejection loop was taken


def test_the_pages_draw_gives_every_slot_of_the_replayed_block() -> None:
    replay = VECTORS["block_replay"]
    sales = [
        {**sale, "block_id": replay["block_id"], "size": replay["size"]} for sale in replay["sales"]
    ]
    answers = in_node({"unit_draws": sales})["unit_draws"]
    assert [a["j"] for a in answers] == [str(sale["j"]) for sale in replay["sales"]]


def test_the_pages_hash_walk_is_python_s_and_reports_its_progress() -> None:
    seed = hashlib.sha256(b"a link").digest()
    walks = [
        {"value": seed.hex(), "times": 10_000},
        {"value": seed.hex(), "times": 0},
        {"value": seed.hex(), "times": 11, "limit": 10},
    ]
    answers = in_node({"walks": walks})["walks"]
    assert answers[0] == {"value": hash_times(seed, 10_000).hex(), "progress": [4096, 8192]}
    assert answers[1] == {"value": seed.hex(), "progress": []}
    assert answers[2] == {"value": None, "progress": []}  # beyond its limit: not walked at all


def test_every_drawn_proof_python_accepts_is_checked_in_the_page(drawn: DrawnLog) -> None:
    proofs = [drawn.proof(sale.n) for sale in drawn.sales]
    answers = checked_in_node(drawn, proofs)
    for sale, proof, answer in zip(drawn.sales, proofs, answers, strict=True):
        verified = verify_ticket_proof(json.loads(json.dumps(proof)))
        results = {r["id"]: r["ok"] for r in answer["results"]}
        assert [r["id"] for r in answer["results"]] == CHECKS
        assert results == dict.fromkeys(CHECKS, True), (sale.n, answer["results"])
        facts = answer["facts"]
        assert facts["verified"] is True
        assert facts["unit"] == verified.position == sale.unit
        assert facts["slot"] == sale.slot and facts["round"] == verified.draw.round
        assert facts["late"] == verified.draw.late == (sale.round == 10)


def test_a_hash_walk_beyond_the_limit_is_left_to_verify_ticket_never_passed(
    drawn: DrawnLog,
) -> None:
    sale = drawn.sales[40]  # link 41, round 6: both walks beyond a limit of 5 hashes
    (answer,) = checked_in_node(drawn, [drawn.proof(sale.n)], walk_limit=5)
    results = {r["id"]: r for r in answer["results"]}
    for name in ("draw-round-link", "draw-link"):
        assert results[name]["ok"] is None and results[name]["skipped"] is True
        assert "grattage verify-ticket" in results[name]["detail"]
    assert all(r["ok"] is True for r in answer["results"] if not r.get("skipped"))
    assert answer["facts"]["unit"] == sale.unit  # j and the swap are still recomputed
    assert answer["facts"]["verified"] is None  # neither verified nor failed: partly checked


def test_each_forgery_python_refuses_is_a_cross_in_the_page_on_the_check_it_breaks(
    drawn: DrawnLog,
) -> None:
    proofs = [forge(drawn) for forge, _, _ in FORGERIES]
    for proof, (_, _, refusal) in zip(proofs, FORGERIES, strict=True):
        with pytest.raises(VerificationFailed, match=refusal):
            verify_ticket_proof(json.loads(json.dumps(proof)))
    answers = checked_in_node(drawn, proofs)
    for answer, (forge, broken, _) in zip(answers, FORGERIES, strict=True):
        failed = [r["id"] for r in answer["results"] if r["ok"] is not True]
        assert failed and failed[0] == broken, (forge.__name__, answer["results"])
        assert set(failed) <= set(DRAW_CHECKS), (forge.__name__, failed)
        assert answer["facts"]["verified"] is False, forge.__name__  # no « Tirage vérifié »
