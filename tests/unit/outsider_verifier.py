"""A verifier of grattage ticket proofs (format grattage-ticket-proof/2), written from
docs/fairness.md and docs/games.md alone — as an outsider would, without the project's code.

It imports the standard library, ``cryptography`` (for Ed25519) and its own
:mod:`outsider_designs` (the games' draws), nothing of grattage.
``verify(proof, pinned_head, pinned_key)`` raises :class:`Refused` naming the first check that
fails, and answers "PINNED" or "UNPINNED". Key rotations are followed as fairness.md's "Key
rotation" says: each part is checked with the key in force at its log index.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from outsider_designs import Stream, astro_design, cash_design


class Refused(Exception):
    """The proof does not hold."""


def require(condition: bool, what: str) -> None:
    if not condition:
        raise Refused(what)


# -- bytes -------------------------------------------------------------------------------------
def canonical(value: Any) -> bytes:
    """fairness.md, "Canonical JSON"."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def check_signature(public_key: bytes, message: bytes, signature_b64: str, what: str) -> None:
    signature = base64.b64decode(signature_b64, validate=True)
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except InvalidSignature:
        raise Refused(f"{what}: bad signature") from None


def check_document(kind: str, document: dict[str, Any], public_key: bytes) -> None:
    """fairness.md, "Signed documents and the operator key"."""
    unsigned = {k: v for k, v in document.items() if k != "signature"}
    message = b"grattage/" + kind.encode() + b"/1\x00" + canonical(unsigned)
    check_signature(public_key, message, document["signature"], kind)


def check_head(head: dict[str, Any], public_key: bytes) -> None:
    """fairness.md, "Signed documents and the operator key": the STH bytes."""
    require(head["format"] == "grattage-sth/1", "not a tree head")
    message = (
        b"grattage/sth/1\x00"
        + head["tree_size"].to_bytes(8, "big")
        + head["timestamp"].to_bytes(8, "big")
        + bytes.fromhex(head["root_hash"])
    )
    check_signature(public_key, message, head["signature"], "tree head")


def root_from_path(index: int, size: int, leaf: bytes, path: list[bytes]) -> bytes | None:
    """RFC 9162 §2.1.3.2, as fairness.md quotes it."""
    if not 0 <= index < size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn % 2 == 1 or fn == sn:
            r = sha256(b"\x01" + p + r)
            while fn % 2 == 0 and fn != 0:
                fn //= 2
                sn //= 2
        else:
            r = sha256(b"\x01" + r + p)
        fn //= 2
        sn //= 2
    return r if sn == 0 else None


# -- the proof (fairness.md, "A ticket's proof": what verify-ticket checks) --------------------
def logged(
    part: dict[str, Any], kind: str, member: str, document: Any, head: dict[str, Any]
) -> int:
    entry = part["entry"]
    require(entry["kind"] == kind and entry[member] == document, f"the {kind} entry is another")
    return included(part, head)


def key_at(keys: list[tuple[int, bytes]], index: int) -> bytes:
    """fairness.md, "Key rotation": the key in force at ``index`` (a head of size n: index n)."""
    return [key for start, key in keys if start <= index][-1]


def key_history(
    first: bytes, changes: list[dict[str, Any]], head: dict[str, Any]
) -> list[tuple[int, bytes]]:
    """fairness.md, "Key rotation": (from_index, key) of every key, from the first key on."""
    keys = [(0, first)]
    for part in changes:
        require(part["entry"]["kind"] == "key.change", "a key_changes part is no key.change")
        index = included(part, head)
        change = part["entry"]["key_change"]
        old = key_at(keys, index)
        require(index >= keys[-1][0], "key changes out of order")
        check_document("key-change", change, old)
        require(change["format"] == "grattage-key-change/1", "not a key change")
        require(change["old_key_id"] == sha256(old).hex(), "the change names another old key")
        new = bytes.fromhex(change["new_public_key"])
        require(change["new_key_id"] == sha256(new).hex(), "new_key_id is not the new key's")
        bare = {k: v for k, v in change.items() if k not in ("signature", "new_key_signature")}
        possession = b"grattage/key-possession/1\x00" + canonical(bare)
        check_signature(new, possession, change["new_key_signature"], "key possession")
        require(change["from_index"] == index + 1, "from_index is not the next index")
        require(new not in [key for _, key in keys], "a key came back")
        keys.append((index + 1, new))
    return keys


def signed_at(kind: str, document: dict[str, Any], keys: list[tuple[int, bytes]], at: int) -> None:
    key = key_at(keys, at)
    require(document["key_id"] == sha256(key).hex(), f"the {kind} names another key")
    check_document(kind, document, key)


def included(part: dict[str, Any], head: dict[str, Any]) -> int:
    leaf = sha256(b"\x00" + canonical(part["entry"]))
    path = [bytes.fromhex(p) for p in part["path"]]
    root = root_from_path(part["index"], head["tree_size"], leaf, path)
    require(root == bytes.fromhex(head["root_hash"]), f"entry {part['index']} is not in the head")
    return int(part["index"])


def verify(
    proof: dict[str, Any], pinned: dict[str, Any] | None = None, pinned_key: bytes | None = None
) -> str:
    require(proof["format"] == "grattage-ticket-proof/2", "not a v2 proof")
    commitment, receipt, unit, log = (
        proof["commitment"],
        proof["receipt"],
        proof["unit"],
        proof["log"],
    )
    head = log["sth"]
    keys = key_history(bytes.fromhex(proof["operator_key"]), log.get("key_changes", []), head)
    if pinned_key is not None:
        require(pinned_key in [key for _, key in keys], "the pinned key is not in the history")
    head_key = key_at(keys, head["tree_size"])
    require(head["key_id"] == sha256(head_key).hex(), "the head names another key")
    check_head(head, head_key)
    at = logged(log["commitment_entry"], "block.commitment", "commitment", commitment, head)
    signed_at("commitment", commitment, keys, at)
    sold_at = logged(log["receipt_entry"], "sale.receipt", "receipt", receipt, head)
    signed_at("receipt", receipt, keys, sold_at)
    require(commitment["format"] == "grattage-commitment/2", "not a v2 commitment")
    require(commitment["leaf"] == "grattage-unit/2", "not v2 leaves")
    table = commitment["table"]
    require(
        hashlib.sha256(canonical(table)).hexdigest() == commitment["table_sha256"], "table_sha256"
    )
    require(commitment["size"] == table["block_size"], "size is not the table's block size")
    for name, value in (
        ("format", "grattage-receipt/1"),
        ("block_id", commitment["block_id"]),
        ("position", unit["position"]),
        ("stake_cents", commitment["price_cents"]),
        ("commitment_index", at),
    ):
        require(receipt[name] == value, f"the receipt's {name}")
    tier, prize, position = unit["tier"], unit["prize_cents"], unit["position"]
    require(prize == (0 if tier == 0 else table["tiers"][tier - 1]["prize_cents"]), "tier ≠ prize")
    leaf = sha256(
        b"\x00"
        + bytes.fromhex(commitment["block_id"])
        + position.to_bytes(8, "big")
        + bytes([tier])
        + prize.to_bytes(8, "big")
        + bytes.fromhex(unit["salt"])
    )
    path = [bytes.fromhex(p) for p in unit["path"]]
    root = root_from_path(position, commitment["size"], leaf, path)
    require(root == bytes.fromhex(commitment["root"]), "the unit is not under the committed root")
    game, _, version = commitment["rules_version"].rpartition("/")
    require(version in ("design-v1", "design-v2"), f"unknown rules {commitment['rules_version']}")
    v2 = version == "design-v2"
    choice = unit["choice"]
    rng = Stream(bytes.fromhex(unit["salt"]) + (choice or "").encode("utf-8"))
    if game.startswith("cash/"):
        expected = cash_design(table, v2, prize, rng)
    else:
        expected = astro_design(table, v2, prize, rng, choice)
    require(expected == proof["ticket"], "the ticket is not the committed design")
    if pinned is None:
        return "UNPINNED"
    require(
        (pinned["tree_size"], pinned["root_hash"]) == (head["tree_size"], head["root_hash"]),
        "the proof's head is not the pinned head",
    )
    return "PINNED"


# -- the log's consistency proofs (RFC 9162 §2.1.4.2, as fairness.md points to it) ---------------
def consistent(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: list[bytes]
) -> bool:
    if first == second:
        return not proof and first_root == second_root
    if not 0 < first < second or (not proof and first & (first - 1)):
        return False
    path = [first_root, *proof] if first & (first - 1) == 0 else list(proof)
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn //= 2
        sn //= 2
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = sha256(b"\x01" + c + fr)
            sr = sha256(b"\x01" + c + sr)
            while fn % 2 == 0 and fn != 0:
                fn //= 2
                sn //= 2
        else:
            sr = sha256(b"\x01" + sr + c)
        fn //= 2
        sn //= 2
    return sn == 0 and fr == first_root and sr == second_root


# -- a disclosure (fairness.md, "The disclosure") ------------------------------------------------
def tree_root(hashes: list[bytes]) -> bytes:
    if not hashes:
        return sha256(b"")
    if len(hashes) == 1:
        return hashes[0]
    k = 1
    while k * 2 < len(hashes):
        k *= 2
    return sha256(b"\x01" + tree_root(hashes[:k]) + tree_root(hashes[k:]))


def verify_disclosure(disclosure: dict[str, Any], public_key: bytes) -> list[int]:
    """The counts per tier, once the disclosed key and tiers rebuild the signed root."""
    require(disclosure["format"] == "grattage-disclosure/2", "not a v2 disclosure")
    commitment = disclosure["commitment"]
    check_document("commitment", commitment, public_key)
    table = commitment["table"]
    require(
        hashlib.sha256(canonical(table)).hexdigest() == commitment["table_sha256"], "table_sha256"
    )
    tiers = base64.b64decode(disclosure["tiers"], validate=True)
    require(len(tiers) == commitment["size"] == table["block_size"], "the number of tiers")
    counts = [0] * (len(table["tiers"]) + 1)
    for tier in tiers:
        require(tier < len(counts), f"tier {tier} is not in the table")
        counts[tier] += 1
    expected = [t["count"] for t in table["tiers"]]
    require(counts == [len(tiers) - sum(expected), *expected], "the tiers do not recount")
    key = bytes.fromhex(disclosure["key"])
    block_id = bytes.fromhex(commitment["block_id"])
    prizes = [0, *(t["prize_cents"] for t in table["tiers"])]
    leaves = []
    for position, tier in enumerate(tiers):
        salt = hashlib.blake2b(
            position.to_bytes(8, "big"), key=key, digest_size=32, person=b"grattage/salt1"
        ).digest()
        leaves.append(
            sha256(
                b"\x00"
                + block_id
                + position.to_bytes(8, "big")
                + bytes([tier])
                + prizes[tier].to_bytes(8, "big")
                + salt
            )
        )
    require(tree_root(leaves) == bytes.fromhex(commitment["root"]), "the root does not rebuild")
    return counts
