"""The monitor's rules of the draw (blocks/draw_audit.py through LogAuditor), on drawn logs
built from the spec (tests/drawn_log.py): a clean log passes — late sales included — and each
of the operator's forgeries is named at its entry."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from drawn_log import BLOCK_ID, PERIOD_MS, DrawnLog
from grattage.blocks.draw import draw_index
from grattage.blocks.log_audit import LogAuditor
from grattage.errors import VerificationFailed


def audited(log: DrawnLog, *, state_at: int | None = None) -> LogAuditor:
    """Feed every entry (saving and reloading the state at ``state_at``), accept the head."""
    auditor = LogAuditor(log.operator.public_key)
    for index, entry in enumerate(log.entries):
        if index == state_at:
            auditor = LogAuditor.from_json(json.loads(json.dumps(auditor.to_json())))
        auditor.feed(index, json.loads(json.dumps(entry)))
    auditor.accept_head(log.head())
    return auditor


def clean(rounds: int = 6, per_round: int = 4) -> DrawnLog:
    log = DrawnLog(size=60)
    log.run(rounds, per_round)
    return log


def drawn_entries(log: DrawnLog) -> list[int]:
    return [i for i, e in enumerate(log.entries) if e["kind"] == "sale.drawn"]


def redraw(log: DrawnLog, index: int, *, number: int | None = None, link: bytes | None = None):
    """The operator rewrites a sale.drawn entry consistently with another round or link."""
    entry = log.entries[index]
    number = entry["beacon"]["round"] if number is None else number
    link = bytes.fromhex(entry["link"]) if link is None else link
    j = draw_index(
        log.beacon.link(number),
        link,
        BLOCK_ID,
        entry["sequence"],
        log.size,
        bytes.fromhex(entry["receipt_sha256"]),
    )
    entry.update(beacon={**entry["beacon"], "round": number}, link=link.hex(), slot=j)


def test_a_clean_drawn_log_passes_and_its_state_survives_a_restart():
    log = clean()
    log.end()
    audited(log)
    audited(log, state_at=len(log.entries) // 2)


def test_a_late_sale_drawn_with_the_next_round_that_covers_it_passes():
    log = DrawnLog(size=60)
    log.run(2, 3)
    log.sell(2, 4)  # round 4: the witness never cosigns a head for it
    log.publish(4)
    log.sell(1, 5)
    log.cosign(5)
    drawn = log.publish(5)
    assert [s.n for s in drawn] == [6, 7, 8]
    assert log.entries[drawn[0].drawn_index]["beacon"]["round"] == 5
    audited(log)


def test_a_draw_recomputed_with_another_round_is_named():
    log = clean()
    index = drawn_entries(log)[9]
    entry = log.entries[index]
    j = draw_index(
        log.beacon.link(entry["beacon"]["round"] - 1),
        bytes.fromhex(entry["link"]),
        BLOCK_ID,
        entry["sequence"],
        log.size,
        bytes.fromhex(entry["receipt_sha256"]),
    )
    entry["slot"] = j if j != entry["slot"] else (j + 1) % log.size
    with pytest.raises(VerificationFailed, match=f"entry {index}: draw 9: the slot re-derived"):
        audited(log)


def test_a_draw_naming_an_earlier_round_it_knew_is_named():
    log = clean()
    index = drawn_entries(log)[9]
    redraw(log, index, number=log.entries[index]["beacon"]["round"] - 1)
    # an earlier round never covers a later receipt: either rule names it
    with pytest.raises(VerificationFailed, match=f"entry {index}: draw 9(: no head| is late)"):
        audited(log)


def test_a_draw_with_another_chain_link_is_named():
    log = clean()
    index = drawn_entries(log)[5]
    redraw(log, index, link=log.chain.link(7))  # d_7, a real link, not sale 5's d_6
    with pytest.raises(VerificationFailed, match=f"entry {index}: draw 5: the link does not hash"):
        audited(log)


def test_a_link_that_does_not_hash_to_the_previous_one_is_named():
    log = clean()
    index = drawn_entries(log)[0]
    redraw(log, index, link=hashlib.sha256(b"a link of the operator's choice").digest())
    with pytest.raises(VerificationFailed, match=f"entry {index}: draw 0: the link does not"):
        audited(log)


def test_a_resolution_out_of_order_is_named():
    log = clean()
    first, second = drawn_entries(log)[2:4]
    log.entries[first], log.entries[second] = log.entries[second], log.entries[first]
    with pytest.raises(VerificationFailed, match=f"entry {first}: draw 3 where draw 2 was next"):
        audited(log)


def test_a_receipt_with_no_resolution_a_few_rounds_on_is_named():
    log = clean(rounds=2)
    late = log.sell(1, 4)[0]  # never drawn...
    at = log.append("draw.round", round=log.round_document(15), cosigned=[])  # ...11 rounds on
    with pytest.raises(
        VerificationFailed,
        match=f"entry {at}: the receipt at entry {late.receipt_index} .* has no resolution",
    ):
        audited(log)


def test_an_undrawn_receipt_is_late_by_the_head_s_time():
    log = clean(rounds=2)
    log.sell(1, 4)
    log.head_ms = log.round_time(4) + 11 * PERIOD_MS
    with pytest.raises(VerificationFailed, match=r"has no resolution 10 rounds \(and 10 s\) after"):
        audited(log)


def test_a_late_draw_that_an_earlier_round_covered_is_named():
    log = DrawnLog(size=60)
    log.run(2, 2)
    log.sell(1, 4)
    log.cosign(4)
    log.cosign(5)
    saved = log.cosigned.pop(4)  # the operator skips round 4 (its value was bad for it)...
    log.publish(5)
    late = log.sales[-1]
    log.cosigned[4] = saved
    # ...but round 4 had been logged with a head covering the receipt: put it back, before.
    round_4 = {"v": 1, "kind": "draw.round", "time": log.entries[0]["time"]}
    round_4 |= {"round": log.round_document(4), "cosigned": saved}
    at = late.drawn_index - 1  # before round 5's entry
    log.entries.insert(at, round_4)
    for entry in log.entries[at + 1 :]:
        if entry["kind"] == "sale.drawn":
            entry["receipt_index"] += entry["receipt_index"] >= at
    with pytest.raises(VerificationFailed, match="but round 4 covered its receipt"):
        audited(log)


def test_a_unit_drawn_twice_is_named():
    log = clean()
    index = drawn_entries(log)[6]
    log.entries[index]["unit"] = log.sales[2].unit
    with pytest.raises(VerificationFailed, match=f"entry {index}: position .* sold twice"):
        audited(log)


@pytest.mark.parametrize("member", ["unit", "slot_unit", "n_set_by", "j_set_by"])
def test_a_draw_the_permutation_contradicts_is_named(member):
    log = clean(rounds=10)
    index = next(
        i for i in drawn_entries(log) if log.entries[i]["j_set_by"] is not None
    )  # a draw whose slot j an earlier draw set
    entry = log.entries[index]
    entry[member] = {
        "unit": next(u for u in range(log.size) if u not in {s.unit for s in log.sales}),
        "slot_unit": entry["slot_unit"] + 1,
        "n_set_by": 0 if entry["n_set_by"] is None else None,
        "j_set_by": None,
    }[member]  # a unit never sold (so not 'sold twice'), or a setter that is not the last
    with pytest.raises(VerificationFailed, match=f"its {member} is"):
        audited(log)


def test_a_receipt_inserted_into_the_chain_afterwards_is_named():
    log = clean()
    at = log.sales[5].receipt_index
    forged: dict[str, Any] = copy.deepcopy(log.entries[at])
    forged["receipt"]["ticket_id"] = 999
    forged["receipt"] = log.resign(forged["receipt"])
    log.entries[at] = forged  # the operator's receipt in place of a buyer's, same index
    with pytest.raises(VerificationFailed, match="does not chain on the block's previous receipt"):
        audited(log)


def test_a_receipt_logged_after_its_round_was_known_is_named():
    log = DrawnLog(size=60)
    log.run(2, 2)
    log.sell(1, 4)
    log.cosign(4)
    log.sell(1, 4)  # logged after the only head cosigned for round 4: not covered
    drawn = log.publish(4)
    assert len(drawn) == 1
    log.cosign(5)
    log.publish(5)
    entry = log.entries[log.sales[-1].drawn_index]
    redraw(log, log.sales[-1].drawn_index, number=4)  # drawn as if round 4 had covered it
    assert entry["beacon"]["round"] == 4
    with pytest.raises(VerificationFailed, match="no head cosigned for round 4 covers"):
        audited(log)


def test_a_head_the_witness_did_not_cosign_is_named():
    log = clean()
    index = next(i for i, e in enumerate(log.entries) if e["kind"] == "draw.round")
    pair = log.entries[index]["cosigned"][0]
    pair["cosignature"] = log.operator.sign_document(
        "cosignature", {**pair["cosignature"], "witness_key_id": log.witness.key_id}
    )
    with pytest.raises(VerificationFailed, match=f"entry {index}: the cosignature's signature"):
        audited(log)


def test_a_cosignature_of_another_head_is_named():
    log = clean()
    index = next(i for i, e in enumerate(log.entries) if e["kind"] == "draw.round")
    pair = log.entries[index]["cosigned"][0]
    pair["sth"] = log.head(pair["sth"]["tree_size"] - 1).to_json()
    with pytest.raises(VerificationFailed, match="the cosignature is of another tree head"):
        audited(log)


def test_a_round_value_that_is_not_the_witness_s_is_named():
    log = clean()
    index = [i for i, e in enumerate(log.entries) if e["kind"] == "draw.round"][2]
    document = dict(log.entries[index]["round"])
    document["value"] = log.beacon.link(document["round"] + 1).hex()
    log.entries[index]["round"] = log.witness.sign_document("beacon-round", document)
    with pytest.raises(VerificationFailed, match=f"entry {index}: round .* does not hash down"):
        audited(log)


def test_a_cosigned_head_of_another_log_is_named():
    log = clean()
    other = clean(rounds=8, per_round=5)  # another, longer history of the block: a fork
    pair = other.cosign(9)  # the witness was shown the fork...
    log.sell(40, 9)  # ...and the monitor this log, longer still
    assert pair["sth"]["tree_size"] < len(log.entries)
    log.append("draw.round", round=log.round_document(9), cosigned=[pair])
    auditor = LogAuditor(log.operator.public_key)
    for index, entry in enumerate(log.entries):
        auditor.feed(index, entry)
    head = log.head()
    cosigned = auditor.draws.largest_cosigned
    assert cosigned is not None and cosigned.tree_size < head.tree_size
    proof = [bytes.fromhex(n) for n in log.consistency(cosigned.tree_size, head.tree_size)]
    with pytest.raises(VerificationFailed, match="not a prefix of the log's head"):
        auditor.check_cosigned(head, proof)


def test_a_sale_of_a_drawn_block_with_a_receipt_v1_is_named():
    log = clean(rounds=1)
    at = log.sales[0].receipt_index
    receipt = dict(log.entries[at]["receipt"])
    receipt.update(format="grattage-receipt/1", position=0)
    log.entries[at]["receipt"] = log.resign(receipt)
    with pytest.raises(VerificationFailed, match="drawn block's sale has a grattage-receipt/1"):
        audited(log)


def test_a_drawn_block_that_ends_with_sales_not_drawn_is_named():
    log = clean(rounds=2)
    log.sell(1, 9)
    log.end()
    with pytest.raises(VerificationFailed, match="ended with 1 sales not drawn"):
        audited(log)


def test_a_draw_with_an_earlier_round_that_covered_the_receipt_is_named():
    """A receipt names round 6 but a head cosigned for round 5 covers it too: drawing it with
    round 5 would let the operator pick between two rounds once the first is out."""
    log = DrawnLog(size=60)
    log.sell(1, 5)
    log.sell(1, 6)
    log.cosign(5)
    log.publish(5)
    log.cosign(6)
    log.publish(6)
    index = log.sales[1].drawn_index
    assert index is not None
    redraw(log, index, number=5)
    with pytest.raises(VerificationFailed, match=f"entry {index}: draw 1 is late with a round"):
        audited(log)


def test_a_monitor_records_a_receipt_still_undrawn_at_the_head_s_time_and_goes_on():
    log = clean(rounds=2)
    late = log.sell(1, 4)[0]
    log.head_ms = log.round_time(4) + 11 * PERIOD_MS  # the drawer is down at the monitor's run
    auditor = LogAuditor(log.operator.public_key)
    auditor.draws.record_timing = True
    for index, entry in enumerate(log.entries):
        auditor.feed(index, json.loads(json.dumps(entry)))
    auditor.accept_head(log.head())
    assert list(auditor.draws.timing_violations) == [late.receipt_index]
    assert "has no resolution 10 rounds" in auditor.draws.timing_violations[late.receipt_index]
    kept = LogAuditor.from_json(json.loads(json.dumps(auditor.to_json())))
    assert kept.draws.timing_violations == auditor.draws.timing_violations
    kept.draws.record_timing = True
    log.cosign(16)  # it comes back and draws the sale late: recorded once, not twice
    log.publish(16)
    log.run(2, 2, first_round=17)
    for index in range(kept.frontier.size, len(log.entries)):
        kept.feed(index, json.loads(json.dumps(log.entries[index])))
    kept.accept_head(log.head())
    assert list(kept.draws.timing_violations) == [late.receipt_index]
    assert kept.head is not None and kept.head.tree_size == len(log.entries)


def audited_with_margin(log: DrawnLog, margin_ms: int) -> LogAuditor:
    auditor = LogAuditor(log.operator.public_key)
    auditor.draws.margin_ms = margin_ms
    for index, entry in enumerate(log.entries):
        auditor.feed(index, json.loads(json.dumps(entry)))
    auditor.accept_head(log.head())
    return auditor


def test_a_receipt_naming_a_round_later_than_its_time_gives_is_named():
    """The operator sells half a period before round 2 but names round 4 (whose value it
    prefers): no margin up to a period gives that round (only 2 or 3), so a monitor told no
    margin names it too."""
    log = DrawnLog(size=60)
    log.run(1, 2)  # round 2
    log.sell(1, 4, at_ms=log.round_time(2) - PERIOD_MS // 2)
    log.cosign(4)
    log.publish(4)
    with pytest.raises(VerificationFailed, match="receipt 2 names round 4 .*a round the operator"):
        audited(log)


def test_a_receipt_naming_the_next_round_but_one_is_named_by_a_monitor_told_the_margin():
    """With 100 ms of margin, a sale 300 ms before round 3 is drawn with round 3; naming
    round 4 is a choice only a monitor that knows the margin can name (one that does not
    accepts either of the two rounds some margin would give)."""
    log = DrawnLog(size=60)
    log.run(1, 2)
    log.sell(1, 4, at_ms=log.round_time(3) - 300)
    log.cosign(4)
    log.publish(4)
    audited(log)  # 3 or 4: a margin of a whole period would give round 4
    with pytest.raises(VerificationFailed, match="receipt 2 names round 4, .*give round 3"):
        audited_with_margin(log, 100)


def test_a_clean_drawn_log_passes_a_monitor_told_the_margin():
    log = clean()
    log.end()
    audited_with_margin(log, 100)


def test_a_sale_that_follows_its_block_s_previous_round_passes():
    """A sale whose own time gives an earlier round takes its block's previous receipt's
    round: a block's rounds never go back."""
    log = DrawnLog(size=60)
    log.sell(1, 5)
    log.sell(1, 5, at_ms=log.round_time(2) - PERIOD_MS // 2)
    log.cosign(5)
    log.publish(5)
    audited(log)
    audited_with_margin(log, 100)
