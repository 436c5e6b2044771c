"""Key rotation, to the byte: a ``key.change`` is signed by the old key and countersigned by the
new; from the index after it the new key signs entries and heads, before it the old. The
monitor and the proof checker follow it, and name every document signed by a key that does
not rule where it stands."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from forged_logs import reforged, vector_entries, vector_keys

from grattage.blocks.key_history import (
    KeyChain,
    make_key_change,
    possession_message,
)
from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.proofs_v2 import verify_ticket_proof
from grattage.blocks.signing import (
    Signer,
    TreeHead,
    canonical_json,
    document_message,
    verify_signature,
)
from grattage.blocks.tlog import Frontier, entry_leaf_hash
from grattage.errors import VerificationFailed

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"
OLD = Signer(bytes(range(32)))
NEW = Signer(bytes(range(1, 33)))
OTHER = Signer(bytes(range(2, 34)))
BLOCK = "ab" * 16
TIME = "2026-12-01T12:00:00.000000Z"


def vectors() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "transparency_vectors.json").read_text("utf-8"))
    return data


# -- the document's bytes ------------------------------------------------------------------------
def test_the_old_key_signs_the_change_with_the_new_key_s_countersignature_in_it() -> None:
    change = make_key_change(OLD, NEW, 7, TIME)
    assert set(change) == {
        "format",
        "old_key_id",
        "new_public_key",
        "new_key_id",
        "from_index",
        "time",
        "new_key_signature",
        "signature",
    }
    bare = {k: v for k, v in change.items() if k not in ("signature", "new_key_signature")}
    possession = b"grattage/key-possession/1\x00" + canonical_json(bare)
    assert possession_message(change) == possession
    countersignature = base64.b64decode(change["new_key_signature"])
    assert verify_signature(NEW.public_key, possession, countersignature)
    without_signature = {k: v for k, v in change.items() if k != "signature"}
    message = b"grattage/key-change/1\x00" + canonical_json(without_signature)
    assert message == document_message("key-change", change)
    assert verify_signature(OLD.public_key, message, base64.b64decode(change["signature"]))


def test_the_vectors_key_change_is_rfc_8032_s_first_key_handing_over_to_its_second() -> None:
    rotation = vectors()["rotation"]
    change = rotation["key_change"]["document"]
    first, second = (bytes.fromhex(key["public_key"]) for key in rotation["history"])
    assert first.hex() == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    assert second.hex() == "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"
    assert possession_message(change)[:26].hex() == rotation["key_change"]["possession_prefix"]
    chain = KeyChain(first)
    chain.follow(rotation["change_index"], change)
    assert [p.to_json() for p in chain.periods] == rotation["history"]
    assert vectors()["key_change"]["document"] == change


def test_a_monitor_follows_the_vectors_log_across_the_rotation() -> None:
    data = vectors()
    auditor = LogAuditor(bytes.fromhex(data["operator_key"]["public_key"]))
    for item in [*data["log"]["entries"], *data["rotation"]["entries"]]:
        auditor.feed(item["index"], item["entry"])
    auditor.accept_head(TreeHead.from_json(data["rotation"]["sth"]["head"]))
    assert auditor.public_key.hex() == data["rotation"]["history"][1]["public_key"]
    state = LogAuditor.from_json(json.loads(json.dumps(auditor.to_json())))
    assert state.keys.periods == auditor.keys.periods


@pytest.mark.parametrize("name", ["astro_proof", "cash_proof"])
def test_a_proof_across_the_rotation_verifies_with_either_key_pinned(name: str) -> None:
    data = vectors()
    proof = data["rotation"][name]
    head = TreeHead.from_json(data["rotation"]["sth"]["head"])
    for pinned_key in (key["public_key"] for key in data["rotation"]["history"]):
        verified = verify_ticket_proof(proof, pinned=head, public_key=bytes.fromhex(pinned_key))
        assert verified.pinned


# -- a small log with a rotation ----------------------------------------------------------------
def commitment(signer: Signer = OLD) -> dict[str, Any]:
    return signer.sign_document(
        "commitment",
        {
            "format": "grattage-commitment/2",
            "block_id": BLOCK,
            "game": "cash",
            "rules_version": "cash/2009-03-16/design-v2",
            "price_cents": 500,
            "size": 4,
            "table": {"block_size": 4, "tiers": [{"prize_cents": 1000, "count": 1}]},
            "table_sha256": "00" * 32,
            "leaf": "grattage-unit/2",
            "root": "11" * 32,
            "created_at": TIME,
            "key_id": signer.key_id,
        },
    )


def receipt(sequence: int, signer: Signer, key_id: str | None = None) -> dict[str, Any]:
    return signer.sign_document(
        "receipt",
        {
            "format": "grattage-receipt/1",
            "ticket_id": 100 + sequence,
            "player": "cd" * 16,
            "block_id": BLOCK,
            "sequence": sequence,
            "position": sequence,
            "stake_cents": 500,
            "time": TIME,
            "commitment_index": 0,
            "key_id": key_id or signer.key_id,
        },
    )


def entry(kind: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "kind": kind, "time": TIME, **fields}


def rotated_log() -> list[dict[str, Any]]:
    """Commitment, opened, sale 0 (old key), the change at 3 (from 4), sale 1 (new key)."""
    return [
        entry("block.commitment", commitment=commitment()),
        entry("block.opened", block_id=BLOCK, commitment_index=0),
        entry("sale.receipt", receipt=receipt(0, OLD)),
        entry("key.change", key_change=make_key_change(OLD, NEW, 4, TIME)),
        entry("sale.receipt", receipt=receipt(1, NEW)),
    ]


def head_of(entries: list[dict[str, Any]], signer: Signer) -> TreeHead:
    frontier = Frontier()
    for item in entries:
        frontier.append(entry_leaf_hash(canonical_json(item)))
    return signer.sign_tree_head(len(entries), 1, frontier.root())


def audit(entries: list[dict[str, Any]], head_signer: Signer = NEW) -> LogAuditor:
    auditor = LogAuditor(OLD.public_key)
    head = head_of(entries, head_signer)
    auditor.check_head(head)
    for index, item in enumerate(entries):
        auditor.feed(index, item)
    auditor.accept_head(head)
    return auditor


def test_a_rotated_log_is_clean_with_its_head_signed_by_the_new_key() -> None:
    auditor = audit(rotated_log())
    assert [p.from_index for p in auditor.keys.periods] == [0, 4]
    assert auditor.keys.at(3).key_id == OLD.key_id and auditor.keys.at(4).key_id == NEW.key_id
    assert audit(rotated_log()[:3], head_signer=OLD).public_key == OLD.public_key


def test_a_head_that_holds_the_change_signed_by_the_old_key_is_named() -> None:
    with pytest.raises(VerificationFailed, match=r"size 5 .* is signed by the retired key"):
        audit(rotated_log(), head_signer=OLD)


def test_a_head_signed_by_a_key_not_in_the_history_is_named() -> None:
    with pytest.raises(VerificationFailed, match="not in the log's key history"):
        audit(rotated_log(), head_signer=OTHER)


def test_a_receipt_signed_by_the_old_key_after_the_rotation_is_named() -> None:
    entries = rotated_log()
    entries[4] = entry("sale.receipt", receipt=receipt(1, OLD))
    with pytest.raises(VerificationFailed, match=r"^entry 4: the receipt at index 4 is signed by "):
        audit(entries)
    # even when it claims the new key's id: its signature is the old key's
    entries[4] = entry("sale.receipt", receipt=receipt(1, OLD, key_id=NEW.key_id))
    with pytest.raises(VerificationFailed, match=r"^entry 4: .* the retired key"):
        audit(entries)


def test_a_receipt_naming_a_key_the_log_has_not_brought_in_yet_is_named() -> None:
    entries = rotated_log()
    entries[2] = entry("sale.receipt", receipt=receipt(0, NEW))
    with pytest.raises(VerificationFailed, match=r"^entry 2: .* not in the log's key history"):
        audit(entries)


def changed(**edits: Any) -> list[dict[str, Any]]:
    entries = rotated_log()
    change = dict(entries[3]["key_change"])
    change.update(edits)
    entries[3] = entry("key.change", key_change=OLD.sign_document("key-change", change))
    return entries


@pytest.mark.parametrize(
    ("entries", "rule"),
    [
        (
            [*rotated_log()[:3], entry("key.change", key_change=NEW.sign_document(
                "key-change", make_key_change(OLD, NEW, 4, TIME)))],
            "not signed by the key in force",
        ),
        (changed(new_key_signature=make_key_change(OLD, OTHER, 4, TIME)["new_key_signature"]),
         "proof of possession"),
        (
            [*rotated_log()[:3], entry("key.change", key_change=make_key_change(OLD, NEW, 5, TIME))],
            "the new key rules from index 4",
        ),
        (changed(new_key_id=OTHER.key_id), "new_key_id is not its new key's id"),
        (changed(old_key_id=NEW.key_id), "as the old key"),
    ],
    ids=["signed by the new key only", "countersigned by another key", "from_index",
         "new key id", "old key id"],
)  # fmt: skip
def test_a_key_change_that_does_not_hold_is_named(entries: list[dict[str, Any]], rule: str) -> None:
    auditor = LogAuditor(OLD.public_key)
    with pytest.raises(VerificationFailed, match=rf"^entry 3: .*{rule}"):
        for index, item in enumerate(entries):
            auditor.feed(index, item)


def test_a_key_never_comes_back() -> None:
    entries = rotated_log()
    entries.append(entry("key.change", key_change=make_key_change(NEW, OLD, 6, TIME)))
    auditor = LogAuditor(OLD.public_key)
    with pytest.raises(VerificationFailed, match="^entry 5: .*never comes back"):
        for index, item in enumerate(entries):
            auditor.feed(index, item)


def test_a_monitor_state_written_before_rotations_still_loads_with_its_one_key() -> None:
    state = audit(rotated_log()[:3], head_signer=OLD).to_json()
    del state["keys"]
    auditor = LogAuditor.from_json(state)
    for index, item in enumerate(rotated_log()[3:], start=3):
        auditor.feed(index, item)
    auditor.accept_head(head_of(rotated_log(), NEW))


# -- proofs across the rotation ------------------------------------------------------------------
def test_a_proof_without_its_key_changes_is_refused() -> None:
    proof = copy.deepcopy(vectors()["rotation"]["cash_proof"])
    del proof["log"]["key_changes"]
    with pytest.raises(VerificationFailed, match="not in the log's key history"):
        verify_ticket_proof(proof)


def test_a_proof_whose_receipt_is_signed_by_the_old_key_after_the_change_is_refused() -> None:
    """The vectors' Astro sale at index 12 re-signed by the retired key, its log rebuilt."""
    old, new = vector_keys()
    entries = vector_entries(rotated=True)
    receipt_12 = old.sign_document("receipt", {**entries[12]["receipt"], "key_id": old.key_id})
    entries[12] = {**entries[12], "receipt": receipt_12}
    proof = reforged(vectors()["rotation"]["astro_proof"], entries, new)
    with pytest.raises(VerificationFailed, match="receipt at index 12 is signed by the retired"):
        verify_ticket_proof(proof)
    assert verify_ticket_proof(
        reforged(vectors()["rotation"]["astro_proof"], vector_entries(True), new)
    )


def test_a_receipt_naming_another_key_than_its_signer_is_refused_even_without_rotation() -> None:
    """Before rotations, verify-ticket checked the receipt's signature but never its key_id."""
    old, _ = vector_keys()
    entries = vector_entries(rotated=False)
    renamed = old.sign_document("receipt", {**entries[6]["receipt"], "key_id": "ab" * 32})
    entries[6] = {**entries[6], "receipt": renamed}
    proof = reforged(vectors()["cash_proof"], entries, old)
    with pytest.raises(VerificationFailed, match="receipt at index 6 names the key 'abab"):
        verify_ticket_proof(proof)


def test_a_proof_whose_receipt_is_signed_by_the_new_key_before_its_change_is_refused() -> None:
    _, new = vector_keys()
    entries = vector_entries(rotated=True)
    early = new.sign_document("receipt", {**entries[6]["receipt"], "key_id": new.key_id})
    entries[6] = {**entries[6], "receipt": early}
    proof = reforged(vectors()["rotation"]["cash_proof"], entries, new)
    with pytest.raises(VerificationFailed, match="index 6 is signed by the not yet in force key"):
        verify_ticket_proof(proof)


def test_a_proof_whose_key_change_is_signed_by_the_new_key_only_is_refused() -> None:
    _, new = vector_keys()
    entries = vector_entries(rotated=True)
    by_the_new_key = new.sign_document("key-change", entries[11]["key_change"])
    entries[11] = {**entries[11], "key_change": by_the_new_key}
    proof = reforged(vectors()["rotation"]["astro_proof"], entries, new)
    with pytest.raises(VerificationFailed, match="^entry 11: the key change is not signed by"):
        verify_ticket_proof(proof)


def test_a_proof_whose_head_is_signed_by_a_key_not_in_the_history_is_refused() -> None:
    proof = reforged(vectors()["rotation"]["astro_proof"], vector_entries(rotated=True), OTHER)
    with pytest.raises(VerificationFailed, match="size 13 .* not in the log's key history"):
        verify_ticket_proof(proof)
    with pytest.raises(VerificationFailed, match="key you pinned .* not in the proof's key"):
        verify_ticket_proof(vectors()["rotation"]["astro_proof"], public_key=OTHER.public_key)
