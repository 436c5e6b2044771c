"""docs/fairness.md's test vectors are what the code computes, and the code's checkers accept
them: the docs, ``tests/fixtures/golden/transparency_vectors.json`` and the code cannot drift.

The JSON file is written by ``transparency_vectors.py`` beside it, from fixed inputs."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.proofs_v2 import verify_disclosure, verify_ticket_proof
from grattage.blocks.signing import TreeHead, canonical_json, check_document
from grattage.blocks.tlog import verify_consistency, verify_inclusion
from grattage.games.astro import ALL_PHRASES, PHRASES
from grattage.games.randomness import SeededRandomness
from grattage.games.table import table_from_dict

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
FAIRNESS = ROOT / "docs" / "fairness.md"
HEX = re.compile(r"(?<![0-9a-fA-F])[0-9a-f]{16,}(?![0-9a-fA-F])")


@cache
def script() -> ModuleType:
    if str(GOLDEN) not in sys.path:  # the script imports its sibling, as when run directly
        sys.path.insert(0, str(GOLDEN))
    spec = importlib.util.spec_from_file_location(
        "transparency_vectors", GOLDEN / "transparency_vectors.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def stored() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "transparency_vectors.json").read_text("utf-8"))
    return data


def test_the_vectors_file_is_exactly_what_the_code_computes_from_the_fixed_inputs() -> None:
    assert script().render(script().compute()) == (GOLDEN / "transparency_vectors.json").read_text(
        "utf-8"
    )


@pytest.mark.parametrize("index", range(7))
def test_canonical_json_is_sorted_unspaced_ascii_with_escapes(index: int) -> None:
    vector = stored()["canonical_json"][index]
    encoded = canonical_json(vector["value"])
    assert encoded.decode("ascii") == vector["canonical"]
    assert hashlib.sha256(encoded).hexdigest() == vector["sha256"]


def test_canonical_json_escapes_non_ascii_as_lowercase_u_and_surrogate_pairs() -> None:
    texts = [vector["canonical"] for vector in stored()["canonical_json"]]
    assert "\\u00e9" in texts[1] and "\\u00d7" in texts[1]
    assert "\\ud83c\\udf20" in texts[3] and "\\u264c" in texts[3]
    assert "\\u007f" in texts[4] and "a/b" in texts[4] and "\\b\\f\\r" in texts[4]
    assert '\\"' in texts[2] and "\\\\" in texts[2] and "\\t" in texts[2] and "\\u0001" in texts[2]


def test_the_randomness_vectors_replay_with_the_seeded_stream() -> None:
    randomness = stored()["randomness"]
    for stream in randomness["streams"]:
        rng = SeededRandomness(bytes.fromhex(stream["seed"]))
        assert [rng.below(draw["n"]) for draw in stream["draws"]] == [
            draw["answer"] for draw in stream["draws"]
        ]
        # below(2**32) never rejects: it answers the words themselves
        whole = SeededRandomness(bytes.fromhex(stream["seed"]))
        assert [whole.below(2**32) for _ in range(8)] == stream["first_words"]
    rejection = randomness["rejection"]
    first, second = rejection["first_words"][:2]
    assert first >= rejection["limit"] > second
    assert rejection["answer"] == second % rejection["n"]
    assert (
        SeededRandomness(bytes.fromhex(rejection["seed"])).below(rejection["n"])
        == (rejection["answer"])
    )


def test_the_table_hash_is_the_sha256_of_the_table_s_canonical_json() -> None:
    vector = stored()["table_sha256"]
    assert canonical_json(vector["table"]).decode("ascii") == vector["canonical"]
    assert table_from_dict(vector["table"]).digest() == vector["sha256"]


def test_a_table_at_another_price_than_its_game_s_first_carries_it_and_hashes_apart() -> None:
    legacy, priced = stored()["table_sha256"], stored()["table_sha256_priced"]
    assert "price_cents" not in legacy["table"] and priced["table"]["price_cents"] == 200
    assert '"price_cents":200' in priced["canonical"]
    assert table_from_dict(priced["table"]).digest() == priced["sha256"] != legacy["sha256"]


def test_every_signed_document_of_the_vectors_verifies_with_the_operator_key() -> None:
    key = bytes.fromhex(stored()["operator_key"]["public_key"])
    for name in ("commitment", "receipt", "key_change"):
        vector = stored()[name]
        check_document(vector["kind"], vector["document"], key)
    TreeHead.from_json(stored()["sth"]["head"]).check(key)


def test_the_operator_key_is_rfc_8032_s_first_test_key() -> None:
    assert stored()["operator_key"]["public_key"] == (
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    )


def test_the_log_vectors_prove_inclusion_and_consistency() -> None:
    log = stored()["log"]
    leaves = [bytes.fromhex(item["leaf_hash"]) for item in log["entries"]]
    roots = [bytes.fromhex(root) for root in log["roots"]]
    for item in log["inclusion"]:
        path = [bytes.fromhex(node) for node in item["path"]]
        assert verify_inclusion(
            leaves[item["index"]], item["index"], item["tree_size"], path, roots[item["tree_size"]]
        )
    for item in log["consistency"]:
        proof = [bytes.fromhex(node) for node in item["proof"]]
        first, second = item["first"], item["second"]
        assert verify_consistency(first, second, roots[first], roots[second], proof)
        assert not verify_consistency(first, second, roots[first - 1], roots[second], proof)


def test_a_monitor_accepts_the_whole_vectors_log_and_its_head() -> None:
    vectors = stored()
    auditor = LogAuditor(bytes.fromhex(vectors["operator_key"]["public_key"]))
    for item in vectors["log"]["entries"]:
        auditor.feed(item["index"], item["entry"])
    auditor.accept_head(TreeHead.from_json(vectors["sth"]["head"]))


@pytest.mark.parametrize("name", ["cash_proof", "astro_proof", "cash_proof_losing"])
def test_the_vectors_proofs_verify_pinned_to_the_vectors_head(name: str) -> None:
    vectors = stored()
    pinned = TreeHead.from_json(vectors["sth"]["head"])
    verified = verify_ticket_proof(vectors[name], pinned=pinned)
    assert verified.pinned


def test_the_vectors_disclosure_rebuilds_the_committed_root() -> None:
    vector = stored()["disclosure"]
    verify_disclosure(vector["document"], workers=1)
    logged = stored()["log"]["entries"][-1]["entry"]
    assert logged["kind"] == "disclosure.published"
    assert logged["sha256"] == vector["file_sha256"]


def _vector_sections() -> str:
    text = FAIRNESS.read_text("utf-8")
    start = text.index("\n## Test vectors")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_every_hex_value_fairness_md_quotes_as_a_vector_is_in_the_vectors_file() -> None:
    quoted = set(HEX.findall(_vector_sections()))
    assert len(quoted) >= 20, "the vector sections quote the vectors"
    vectors = (GOLDEN / "transparency_vectors.json").read_text("utf-8")
    missing = sorted(value for value in quoted if value not in vectors)
    assert not missing, f"fairness.md quotes values the vectors do not hold: {missing}"


def test_the_phrases_fairness_md_lists_are_astro_s_in_the_order_the_draws_index_them() -> None:
    text = FAIRNESS.read_text("utf-8")
    table = text[text.index("| # | phrase | multiplier |") : text.index("Every space is U+0020")]
    listed: list[tuple[str, int | None]] = []
    for row in [line for line in table.splitlines()[2:] if line.startswith("|")]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        factor = None if cells[2] == "none" else int(cells[2])
        listed += [(phrase, factor) for phrase in re.findall(r"`([^`]+)`", cells[1])]
    assert listed == [(phrase, PHRASES[phrase]) for phrase in ALL_PHRASES]
