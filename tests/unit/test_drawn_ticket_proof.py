"""A drawn ticket's proof (blocks/proof_draw.py through proofs_v2.verify_ticket_proof): it
recomputes the draw offline — the receipt's chain link, the witness's round and cosigned head,
the operator's link, j, the swap — and each forgery of the operator's is named."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from drawn_log import BLOCK_ID, DrawnLog
from grattage.blocks.draw import draw_index
from grattage.blocks.proofs_v2 import verify_ticket_proof
from grattage.errors import VerificationFailed


@pytest.fixture(scope="module")
def drawn() -> DrawnLog:
    log = DrawnLog(size=120)
    log.run(rounds=8, per_round=9)
    log.sell(2, 10)  # round 10: no head cosigned for it, so these are drawn late, with 11
    log.publish(10)
    log.sell(1, 11)
    log.cosign(11)
    log.publish(11)
    return log


def checked(proof: dict[str, Any]):
    return verify_ticket_proof(json.loads(json.dumps(proof)))


def test_every_drawn_ticket_s_proof_verifies_and_names_its_unit(drawn):
    for sale in drawn.sales:
        verified = checked(drawn.proof(sale.n))
        assert verified.position == sale.unit and verified.draw is not None
        assert verified.draw.slot == sale.slot and verified.draw.late == (sale.round == 10)


def test_proofs_cover_every_way_a_slot_is_found(drawn):
    entries = [drawn.entries[s.drawn_index] for s in drawn.sales if s.drawn_index is not None]
    assert any(e["n_set_by"] is not None for e in entries)  # slot n set by an earlier draw
    assert any(e["j_set_by"] is not None for e in entries)  # slot j too
    assert any(e["n_set_by"] is None and e["j_set_by"] is None for e in entries)


def rebuilt(log: DrawnLog, change) -> DrawnLog:
    """The operator's forgery: a copy of the log with ``change`` applied to it."""
    forged = copy.deepcopy(log)
    change(forged)
    return forged


def _redraw(log: DrawnLog, n: int, *, number: int | None = None, link: bytes | None = None):
    entry = log.entries[log.sales[n].drawn_index]
    number = entry["beacon"]["round"] if number is None else number
    link = bytes.fromhex(entry["link"]) if link is None else link
    j = draw_index(
        log.beacon.link(number), link, BLOCK_ID, n, log.size, bytes.fromhex(entry["receipt_sha256"])
    )
    entry.update(beacon={**entry["beacon"], "round": number}, link=link.hex(), slot=j)


def test_a_draw_recomputed_with_another_round_is_refused(drawn):
    def change(log: DrawnLog) -> None:  # the slot of round r + 1, the entry still naming r
        entry = log.entries[log.sales[20].drawn_index]
        j = draw_index(
            log.beacon.link(log.sales[20].round + 1),
            bytes.fromhex(entry["link"]),
            BLOCK_ID,
            20,
            log.size,
            bytes.fromhex(entry["receipt_sha256"]),
        )
        assert j != entry["slot"]
        entry["slot"] = j

    with pytest.raises(VerificationFailed, match="slot re-derived from the round"):
        checked(rebuilt(drawn, change).proof(20))


def test_a_slot_not_derived_from_its_round_is_refused(drawn):
    def change(log: DrawnLog) -> None:
        entry = log.entries[log.sales[20].drawn_index]
        entry["slot"] = (entry["slot"] + 1) % log.size or 20

    with pytest.raises(VerificationFailed, match="the slot re-derived from the round"):
        checked(rebuilt(drawn, change).proof(20))


def test_a_draw_recomputed_with_another_chain_link_is_refused(drawn):
    forged = rebuilt(drawn, lambda log: _redraw(log, 30, link=log.chain.link(32)))
    with pytest.raises(VerificationFailed, match="is not link 31 of the committed chain"):
        checked(forged.proof(30))


def test_a_link_that_does_not_hash_to_the_chain_is_refused(drawn):
    link = hashlib.sha256(b"the operator's own link").digest()
    forged = rebuilt(drawn, lambda log: _redraw(log, 0, link=link))
    with pytest.raises(VerificationFailed, match="is not link 1 of the committed chain"):
        checked(forged.proof(0))


def test_a_receipt_inserted_into_the_chain_afterwards_is_refused(drawn):
    def change(log: DrawnLog) -> None:
        sale = log.sales[12]
        receipt = {**sale.receipt, "ticket_id": 999}
        sale.receipt = log.resign(receipt)
        log.entries[sale.receipt_index]["receipt"] = sale.receipt

    with pytest.raises(VerificationFailed, match="the draw's receipt_sha256"):
        checked(rebuilt(drawn, change).proof(12))  # its draw was of another receipt
    with pytest.raises(VerificationFailed, match="does not chain on the block's previous"):
        checked(rebuilt(drawn, change).proof(13))  # the next receipt chained on the old one


def test_a_receipt_logged_after_its_round_could_be_known_is_refused(drawn):
    def change(log: DrawnLog) -> None:
        round_at = next(
            i
            for i, e in enumerate(log.entries)
            if e["kind"] == "draw.round" and e["round"]["round"] == log.sales[40].round
        )
        for pair in log.entries[round_at]["cosigned"]:  # a smaller head, cosigned
            smaller = log.head(log.sales[40].receipt_index)
            cosignature = {
                **pair["cosignature"],
                "tree_size": smaller.tree_size,
                "root_hash": smaller.root_hash.hex(),
                "sth_timestamp": smaller.timestamp_ms,
            }
            pair["sth"] = smaller.to_json()
            pair["cosignature"] = log.witness.sign_document("cosignature", cosignature)

    forged = rebuilt(drawn, change)
    with pytest.raises(
        VerificationFailed, match="cosigned for round .* does not cover the receipt"
    ):
        checked(forged.proof(40))


def test_a_head_the_witness_did_not_cosign_is_refused(drawn):
    def change(log: DrawnLog) -> None:
        for entry in log.entries:
            if entry["kind"] == "draw.round":
                for pair in entry["cosigned"]:
                    pair["cosignature"] = log.operator.sign_document(
                        "cosignature", pair["cosignature"]
                    )

    with pytest.raises(VerificationFailed, match="cosignature's signature does not verify"):
        checked(rebuilt(drawn, change).proof(5))


def test_a_cosignature_made_after_the_round_is_refused(drawn):
    def change(log: DrawnLog) -> None:
        for entry in log.entries:
            if entry["kind"] == "draw.round":
                for pair in entry["cosigned"]:
                    late = {
                        **pair["cosignature"],
                        "time_ms": log.round_time(entry["round"]["round"]),
                    }
                    pair["cosignature"] = log.witness.sign_document("cosignature", late)

    with pytest.raises(VerificationFailed, match="cosigned after round"):
        checked(rebuilt(drawn, change).proof(5))


def test_a_unit_the_swap_does_not_give_is_refused(drawn):
    sold = drawn.sales[3].unit

    def change(log: DrawnLog) -> None:
        log.entries[log.sales[50].drawn_index]["unit"] = sold  # a unit drawn twice

    forged = rebuilt(drawn, change)
    proof = forged.proof(50)
    proof["unit"] = {k: v for k, v in forged.unit_part(sold).items() if k != "ticket"}
    proof["ticket"] = forged.unit_part(sold)["ticket"]
    with pytest.raises(VerificationFailed, match=f"gives the sale unit .*, the draw says {sold}"):
        checked(proof)


def test_a_proof_of_another_unit_than_the_draw_s_is_refused(drawn):
    proof = drawn.proof(7)
    other = drawn.sales[8].unit
    proof["unit"] = {k: v for k, v in drawn.unit_part(other).items() if k != "ticket"}
    proof["ticket"] = drawn.unit_part(other)["ticket"]
    with pytest.raises(
        VerificationFailed, match=f"the sale's draw gave unit {drawn.sales[7].unit}"
    ):
        checked(proof)


def test_a_setter_that_did_not_set_the_slot_is_refused(drawn):
    n = next(
        s.n
        for s in drawn.sales
        if s.drawn_index is not None and drawn.entries[s.drawn_index]["n_set_by"] is not None
    )
    proof = drawn.proof(n)
    setter = drawn.entries[drawn.sales[n].drawn_index]["n_set_by"]
    proof["draw"]["n_set_entry"] = drawn.logged(
        drawn.sales[setter - 1].drawn_index, len(drawn.entries)
    )
    with pytest.raises(VerificationFailed, match="is not sale .*'s|did not set slot"):
        checked(proof)


def test_an_entry_that_is_not_in_the_head_is_refused(drawn):
    proof = drawn.proof(9)
    proof["draw"]["drawn_entry"]["entry"]["slot_unit"] += 1
    with pytest.raises(
        VerificationFailed, match="sale's draw is not included in the signed tree head"
    ):
        checked(proof)


def test_a_draw_with_an_earlier_round_than_its_receipt_s_is_refused():
    """Sale 1 names round 12, but the head cosigned for round 11 covers it too: drawn with 11,
    the operator would have picked between two rounds once the first was out."""
    log = DrawnLog(size=30)
    log.sell(1, 11)
    late = log.sell(1, 12)[0]
    log.cosign(11)
    log.publish(11)
    log._draw(late, 11)
    with pytest.raises(VerificationFailed, match="was drawn with the earlier round 11"):
        checked(log.proof(1))


def test_a_cosigned_head_the_proof_s_head_does_not_extend_is_refused(drawn):
    def change(log: DrawnLog) -> None:
        for entry in log.entries:
            if entry["kind"] != "draw.round":
                continue
            for pair in entry["cosigned"]:  # the witness was shown another log of that size
                size = pair["sth"]["tree_size"]
                fork = log.operator.sign_tree_head(size, log.head_ms, hashlib.sha256(b"x").digest())
                cosignature = {
                    **pair["cosignature"],
                    "root_hash": fork.root_hash.hex(),
                    "sth_timestamp": fork.timestamp_ms,
                }
                pair["sth"] = fork.to_json()
                pair["cosignature"] = log.witness.sign_document("cosignature", cosignature)

    with pytest.raises(VerificationFailed, match="does not extend the head the witness cosigned"):
        checked(rebuilt(drawn, change).proof(5))


def test_a_setter_whose_draw_set_another_slot_is_refused(drawn):
    def round_of(sale: int) -> Any:
        return drawn.entries[drawn.sales[sale].drawn_index]["beacon"]

    # A slot set by a sale of the same round: the setter's draw comes after every head the
    # witness cosigned for that round, so the forgery below changes none of them (an earlier
    # round's would be refused first, as a head the proof's head does not extend).
    n = next(
        s.n
        for s in drawn.sales
        if s.drawn_index is not None
        and (m := drawn.entries[s.drawn_index]["n_set_by"]) is not None
        and round_of(m) == round_of(s.n)
    )
    setter = drawn.entries[drawn.sales[n].drawn_index]["n_set_by"]

    def change(log: DrawnLog) -> None:
        log.entries[log.sales[setter].drawn_index]["slot"] += 1

    with pytest.raises(VerificationFailed, match=f"sale {setter}'s draw did not set slot {n}"):
        checked(rebuilt(drawn, change).proof(n))


def test_a_round_other_than_the_one_the_draw_names_is_refused(drawn):
    proof = drawn.proof(4)
    proof["draw"]["round"] = drawn.round_document(drawn.sales[4].round + 1)
    with pytest.raises(VerificationFailed, match="the round given is not round"):
        checked(proof)


def test_a_round_value_the_witness_did_not_publish_is_refused(drawn):
    proof = drawn.proof(4)
    document = {**proof["draw"]["round"], "value": "00" * 32}
    proof["draw"]["round"] = drawn.operator.sign_document("beacon-round", document)
    with pytest.raises(VerificationFailed, match="beacon-round's signature"):
        checked(proof)
