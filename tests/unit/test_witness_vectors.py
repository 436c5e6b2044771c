"""The witness's golden vectors: what docs/witness.md prints is what the code signs and checks."""

from __future__ import annotations

import json
from pathlib import Path

from witness_vectors import vectors

from grattage.blocks.beacon import check_chain, check_cosignature, check_round
from grattage.blocks.signing import TreeHead

ROOT = Path(__file__).parents[2]
GOLDEN = json.loads((ROOT / "tests/fixtures/golden/witness_vectors.json").read_text())


def test_the_code_still_makes_the_golden_vectors_byte_for_byte():
    assert vectors() == GOLDEN


def test_the_golden_documents_pass_every_check():
    key = bytes.fromhex(GOLDEN["witness_public_key"])
    chain = check_chain(GOLDEN["chain"], key)
    known = None
    for document in GOLDEN["rounds"]:
        checked = check_round(document, chain, key, known)
        known = (checked.round, checked.value)
    head = TreeHead.from_json(GOLDEN["sth"])
    head.check(bytes.fromhex(GOLDEN["operator_public_key"]))
    check_cosignature(GOLDEN["cosignature"], key, head, chain)


def test_the_docs_print_the_golden_signatures():
    docs = (ROOT / "docs/witness.md").read_text()
    for document in [GOLDEN["chain"], *GOLDEN["rounds"], GOLDEN["cosignature"]]:
        assert document["signature"] in docs
    assert GOLDEN["witness_public_key"] in docs and GOLDEN["links"][0] in docs
