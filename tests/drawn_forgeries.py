"""Forged drawn-ticket proofs (tests/drawn_log.py), each with the check of the page's checker
(web/static/js/proof_draw.js) it breaks and the words of ``verify-ticket``'s refusal: the
operator's forgeries (it holds its own key: it re-logs and re-signs), and a witness document
swapped. Shared by the Node and the Chromium runs of the page's checker."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from typing import Any

from drawn_log import BLOCK_ID, DrawnLog
from grattage.blocks.draw import draw_index


def drawn_log() -> DrawnLog:
    """The log of tests/unit/test_drawn_ticket_proof.py: 72 sales in time, 3 drawn late."""
    log = DrawnLog(size=120)
    log.run(rounds=8, per_round=9)
    log.sell(2, 10)  # round 10: no head cosigned for it, so these are drawn late, with 11
    log.publish(10)
    log.sell(1, 11)
    log.cosign(11)
    log.publish(11)
    return log


def log_key(log: DrawnLog) -> dict[str, Any]:
    """GET /api/log/key of that log."""
    return {
        "algorithm": "Ed25519",
        "public_key": log.operator.public_key.hex(),
        "key_id": log.operator.key_id,
    }


def _forged(log: DrawnLog, change: Callable[[DrawnLog], None]) -> DrawnLog:
    forged = copy.deepcopy(log)
    change(forged)
    return forged


def _proof(log: DrawnLog, n: int) -> dict[str, Any]:
    """A copy of sale n's proof: its witness documents are the log's own, shared."""
    return copy.deepcopy(log.proof(n))


def _slot_of_the_next_round(log: DrawnLog) -> dict[str, Any]:
    """The slot of round r + 1, the entry still naming r."""

    def change(log: DrawnLog) -> None:
        entry = log.entries[log.sales[20].drawn_index]
        link, receipt_hash = bytes.fromhex(entry["link"]), bytes.fromhex(entry["receipt_sha256"])
        value = log.beacon.link(log.sales[20].round + 1)
        entry["slot"] = draw_index(value, link, BLOCK_ID, 20, log.size, receipt_hash)

    return _forged(log, change).proof(20)


def _another_round_document(log: DrawnLog) -> dict[str, Any]:
    proof = _proof(log, 20)
    proof["draw"]["round"] = log.round_document(log.sales[20].round + 1)
    return proof


def _a_round_the_operator_signed(log: DrawnLog) -> dict[str, Any]:
    proof = _proof(log, 20)
    proof["draw"]["round"] = log.operator.sign_document("beacon-round", proof["draw"]["round"])
    return proof


def _redrawn_with_link(log: DrawnLog, n: int, link: bytes) -> dict[str, Any]:
    def change(log: DrawnLog) -> None:
        entry = log.entries[log.sales[n].drawn_index]
        receipt_hash = bytes.fromhex(entry["receipt_sha256"])
        value = log.beacon.link(entry["beacon"]["round"])
        slot = draw_index(value, link, BLOCK_ID, n, log.size, receipt_hash)
        entry.update(link=link.hex(), slot=slot)

    return _forged(log, change).proof(n)


def _another_link(log: DrawnLog) -> dict[str, Any]:
    return _redrawn_with_link(log, 30, log.chain.link(32))


def _a_link_of_no_chain(log: DrawnLog) -> dict[str, Any]:
    return _redrawn_with_link(log, 0, hashlib.sha256(b"the operator's own link").digest())


def _another_slot(log: DrawnLog) -> dict[str, Any]:
    def change(log: DrawnLog) -> None:
        entry = log.entries[log.sales[20].drawn_index]
        entry["slot"] = (entry["slot"] + 1) % log.size or 20

    return _forged(log, change).proof(20)


def _a_receipt_inserted_before(log: DrawnLog) -> dict[str, Any]:
    def change(log: DrawnLog) -> None:
        sale = log.sales[12]
        sale.receipt = log.resign({**sale.receipt, "ticket_id": 999})
        log.entries[sale.receipt_index]["receipt"] = sale.receipt

    return _forged(log, change).proof(13)  # receipt 13 chained on the old receipt 12


def _a_head_the_witness_did_not_cosign(log: DrawnLog) -> dict[str, Any]:
    proof = _proof(log, 5)
    pair = proof["draw"]["cosigned"]
    pair["cosignature"] = log.operator.sign_document("cosignature", pair["cosignature"])
    return proof


def _cosigned_after_the_round(log: DrawnLog) -> dict[str, Any]:
    proof = _proof(log, 5)
    pair = proof["draw"]["cosigned"]
    late = {**pair["cosignature"], "time_ms": log.round_time(pair["cosignature"]["round"])}
    pair["cosignature"] = log.witness.sign_document("cosignature", late)
    return proof


def _a_unit_drawn_twice(log: DrawnLog) -> dict[str, Any]:
    sold = log.sales[3].unit
    assert sold is not None

    def change(log: DrawnLog) -> None:
        log.entries[log.sales[50].drawn_index]["unit"] = sold

    forged = _forged(log, change)
    proof = forged.proof(50)
    proof["unit"] = {k: v for k, v in forged.unit_part(sold).items() if k != "ticket"}
    return proof


def _another_unit_than_the_draws(log: DrawnLog) -> dict[str, Any]:
    proof = _proof(log, 7)
    other = log.sales[8].unit
    assert other is not None
    proof["unit"] = {k: v for k, v in log.unit_part(other).items() if k != "ticket"}
    return proof


def _a_drawn_entry_not_in_the_head(log: DrawnLog) -> dict[str, Any]:
    proof = _proof(log, 9)
    proof["draw"]["drawn_entry"]["entry"]["slot_unit"] += 1
    return proof


FORGERIES: list[tuple[Callable[[DrawnLog], dict[str, Any]], str, str]] = [
    (_slot_of_the_next_round, "draw-slot", "slot re-derived from the round"),
    (_another_round_document, "draw-round", "the round given is not round"),
    (_a_round_the_operator_signed, "draw-round", "signature does not verify"),
    (_another_link, "draw-link", "is not link 31 of the committed chain"),
    (_a_link_of_no_chain, "draw-link", "is not link 1 of the committed chain"),
    (_another_slot, "draw-slot", "slot re-derived from the round"),
    (_a_receipt_inserted_before, "draw-previous", "does not chain on the block's previous"),
    (_a_head_the_witness_did_not_cosign, "draw-cosigned", "signature does not verify"),
    (_cosigned_after_the_round, "draw-cosigned", "cosigned after round"),
    (_a_unit_drawn_twice, "draw-unit", "gives the sale unit"),
    (_another_unit_than_the_draws, "draw-unit", "the sale's draw gave unit"),
    (_a_drawn_entry_not_in_the_head, "draw-entry", "not included in the signed tree head"),
]
