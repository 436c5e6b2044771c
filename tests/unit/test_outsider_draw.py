"""The docs are enough to check the draw: a verifier written from docs/fairness.md, witness.md
and draw.md alone (tests/unit/outsider_draw.py, nothing of grattage) accepts the drawn proofs
and the draws files the code makes — the golden vector's too — and refuses the forgeries."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from outsider_draw import replay_file, verify_draw
from outsider_verifier import Refused, verify

from drawn_log import BLOCK_KEY, DrawnLog

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden"


@pytest.fixture(scope="module")
def drawn() -> DrawnLog:
    log = DrawnLog(size=90)
    log.run(rounds=6, per_round=8)
    log.sell(2, 9)  # late: drawn with round 10
    log.sell(1, 10)
    log.cosign(10)
    log.publish(10)
    return log


def test_every_drawn_proof_the_code_makes_passes_the_outsider(drawn):
    for sale in drawn.sales:
        proof = json.loads(json.dumps(drawn.proof(sale.n)))
        assert verify_draw(proof) == sale.unit


def test_the_outsider_replays_a_draws_file_and_the_golden_vector(drawn):
    permutation = replay_file(
        drawn.draws_file(), BLOCK_KEY, drawn.chain_head, drawn.witness.public_key
    )
    assert permutation == drawn.permutation
    vector = json.loads((GOLDEN / "draws_file_vectors.json").read_text("ascii"))
    data = bytes.fromhex(
        vector["header"]
        + len(vector["chain_document"]).to_bytes(4, "big").hex()
        + vector["chain_document"].encode("ascii").hex()
        + vector["rounds"]
        + vector["receipt_hashes"]
        + vector["round_ordinals"]
        + vector["slots"]
        + vector["units"]
    )
    replayed = replay_file(
        data,
        bytes.fromhex(vector["block_key"]),
        bytes.fromhex(vector["chain_head"]),
        bytes.fromhex(vector["witness_public_key"]),
    )
    assert replayed == vector["final_permutation"]


@pytest.mark.parametrize(
    "forge",
    [
        lambda p: p["draw"]["drawn_entry"]["entry"].update(
            slot=p["draw"]["drawn_entry"]["entry"]["slot"] ^ 1
        ),
        lambda p: p["draw"].update(round=p["draw"]["round"] | {"value": "00" * 32}),
        lambda p: p["draw"]["cosigned"]["cosignature"].update(time_ms=10**13),
        lambda p: p["draw"].update(consistency=["00" * 32]),
        lambda p: p["unit"].update(position=(p["unit"]["position"] + 1) % 90),
    ],
    ids=["slot", "round value", "cosigned late", "consistency", "unit"],
)
def test_the_outsider_refuses_a_forged_draw(drawn, forge):
    proof = json.loads(json.dumps(drawn.proof(20)))
    forge(proof)
    with pytest.raises(Refused):
        verify_draw(proof)


def test_the_outsider_refuses_a_file_with_a_forged_unit(drawn):
    forged = copy.deepcopy(drawn)
    forged.entries[forged.sales[5].drawn_index]["unit"] = forged.sales[4].unit
    with pytest.raises(Refused, match="draw 5: the unit"):
        replay_file(forged.draws_file(), BLOCK_KEY, drawn.chain_head, drawn.witness.public_key)


def test_the_outsider_s_v1_receipt_check_is_not_fooled_by_a_drawn_proof(drawn):
    with pytest.raises(Refused, match="receipt"):  # a drawn receipt is v2: it has no position
        verify(json.loads(json.dumps(drawn.proof(3))))
