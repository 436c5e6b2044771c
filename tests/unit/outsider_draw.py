"""The draw of a drawn ticket's proof and of a draws file, checked from docs/fairness.md ("A
drawn ticket's proof"), docs/witness.md and docs/draw.md alone — the standard library,
``cryptography`` (through :mod:`outsider_verifier`'s Ed25519 helpers) and nothing of grattage.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
from typing import Any

from outsider_verifier import (
    canonical,
    check_document,
    check_head,
    consistent,
    require,
    root_from_path,
    sha256,
)


def hashed(value: bytes, times: int) -> bytes:
    for _ in range(times):
        value = sha256(value)
    return value


def slot(w_r: bytes, link: bytes, block_id: bytes, n: int, size: int, h: bytes) -> int:
    """draw.md, "The unit of sale n"."""
    key, bound, c = sha256(w_r + link), size - n, 0
    limit = 2**64 - 2**64 % bound
    while True:
        message = (
            b"grattage/draw/1\x00" + block_id + n.to_bytes(8, "big") + h + c.to_bytes(4, "big")
        )
        x = int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")
        if x < limit:
            return n + x % bound
        c += 1


def witness_document(kind: str, document: dict[str, Any], witness_key: bytes) -> None:
    """witness.md, "Signed documents": the same rule as the operator's, the witness's key."""
    require(
        document.get("key_id", document.get("witness_key_id")) == sha256(witness_key).hex(),
        f"{kind} key",
    )
    check_document(kind, document, witness_key)


def round_value(chain: dict[str, Any], document: dict[str, Any], key: bytes) -> tuple[int, bytes]:
    """witness.md: the chain document, then the round: schedule and link down to the head."""
    witness_document("beacon-chain", chain, key)
    head = bytes.fromhex(chain["head"])
    require(chain["chain_id"] == sha256(head).hex(), "chain_id")
    witness_document("beacon-round", document, key)
    number, value = document["round"], bytes.fromhex(document["value"])
    require(document["chain_id"] == chain["chain_id"], "the round's chain")
    require(document["time_ms"] == chain["start_ms"] + (number - 1) * chain["period_ms"], "time")
    require(hashed(value, number) == head, "the round does not hash down to the chain's head")
    return number, value


def included(part: dict[str, Any], kind: str, head: dict[str, Any]) -> dict[str, Any]:
    entry = part["entry"]
    require(entry["kind"] == kind, f"not a {kind}")
    leaf = sha256(b"\x00" + canonical(entry))
    root = root_from_path(
        part["index"], head["tree_size"], leaf, [bytes.fromhex(p) for p in part["path"]]
    )
    require(root == bytes.fromhex(head["root_hash"]), f"a {kind} entry is not in the head")
    return entry


def verify_draw(proof: dict[str, Any]) -> int:
    """fairness.md 6a–6h; the unit the draw gave."""
    commitment, receipt, draw = proof["commitment"], proof["receipt"], proof["draw"]
    head, key = proof["log"]["sth"], bytes.fromhex(proof["operator_key"])
    witness = bytes.fromhex(commitment["witness_key"])
    size, block = commitment["size"], commitment["block_id"]
    require(commitment["draw"] == "grattage-draw/1" and commitment["chain_length"] == size, "6a")
    n, h = receipt["sequence"], sha256(canonical(receipt))
    receipt_index = proof["log"]["receipt_entry"]["index"]
    if n == 0:
        previous = sha256(canonical(commitment))
    else:
        before = included(draw["previous_entry"], "sale.receipt", head)["receipt"]
        check_document("receipt", before, key)
        require(before["block_id"] == block and before["sequence"] == n - 1, "6b: previous")
        require(draw["previous_entry"]["index"] < receipt_index, "6b: previous first")
        previous = sha256(canonical(before))
    require(bytes.fromhex(receipt["previous"]) == previous, "6b: the receipt's chain link")
    drawn = included(draw["drawn_entry"], "sale.drawn", head)
    for name, value in (
        ("block_id", block),
        ("commitment_index", receipt["commitment_index"]),
        ("sequence", n),
        ("receipt_index", receipt_index),
        ("receipt_sha256", h.hex()),
    ):
        require(drawn[name] == value, f"6c: the draw's {name}")
    number, w_r = round_value(draw["chain"], draw["round"], witness)
    require(
        (draw["chain"]["chain_id"], number)
        == (drawn["beacon"]["chain_id"], drawn["beacon"]["round"]),
        "6d",
    )
    sth, cosignature = draw["cosigned"]["sth"], draw["cosigned"]["cosignature"]
    check_head(sth, key)
    witness_document("cosignature", cosignature, witness)
    require(
        (cosignature["tree_size"], cosignature["root_hash"], cosignature["sth_timestamp"])
        == (sth["tree_size"], sth["root_hash"], sth["timestamp"]),
        "6e: of another head",
    )
    require(
        (cosignature["chain_id"], cosignature["round"]) == (draw["chain"]["chain_id"], number), "6e"
    )
    chain = draw["chain"]
    require(
        cosignature["time_ms"] < chain["start_ms"] + (number - 1) * chain["period_ms"], "6e: after"
    )
    require(sth["tree_size"] > receipt_index, "6e: the head does not cover the receipt")
    proof_nodes = [bytes.fromhex(p) for p in draw["consistency"]]
    require(
        consistent(
            sth["tree_size"], head["tree_size"], bytes.fromhex(sth["root_hash"]),
            bytes.fromhex(head["root_hash"]), proof_nodes,
        ),
        "6e: the proof's head does not extend it",
    )  # fmt: skip
    own = receipt["beacon"]
    require(not (own["chain_id"] == chain["chain_id"] and own["round"] > number), "6e: earlier")
    link = bytes.fromhex(drawn["link"])
    require(hashed(link, n + 1) == bytes.fromhex(commitment["chain_head"]), "6f: the link")
    j = slot(w_r, link, bytes.fromhex(block), n, size, h)
    require(drawn["slot"] == j, "6g: the slot")

    def before_swap(member: str, setter: int | None, at: int) -> int:
        if setter is None:
            return at
        entry = included(draw[member], "sale.drawn", head)
        require(entry["sequence"] == setter < n and entry["slot"] == at, "6h: the setter")
        return int(entry["slot_unit"])

    unit_n = before_swap("n_set_entry", drawn["n_set_by"], n)
    unit_j = unit_n if j == n else before_swap("j_set_entry", drawn["j_set_by"], j)
    require(drawn["unit"] == unit_j and drawn["slot_unit"] == unit_n, "6h: the swap")
    require(proof["unit"]["position"] == unit_j, "6h: the proof's unit")
    return unit_j


def replay_file(data: bytes, block_key: bytes, chain_head: bytes, witness_key: bytes) -> list[int]:
    """draw.md, "The draws file" and "Replaying a block": the permutation after every draw."""
    magic, version, width, block_id, size, sales, chains, rounds = struct.unpack_from(
        ">4sBB16sQQIQ", data
    )
    require(magic == b"GDRW" and version == 1 and width == (4 if size <= 2**32 else 8), "header")
    at, documents = 50, []
    for _ in range(chains):
        length = int.from_bytes(data[at : at + 4], "big")
        documents.append(json.loads(data[at + 4 : at + 4 + length]))
        at += 4 + length
    values, known = [], {}
    for _ in range(rounds):
        ordinal, number, value = struct.unpack_from(">IQ32s", data, at)
        at += 44
        chain = documents[ordinal]
        below, below_value = known.get(ordinal, (0, bytes.fromhex(chain["head"])))
        witness_document("beacon-chain", chain, witness_key)
        require(hashed(value, number - below) == below_value, f"round {number}")
        known[ordinal] = (number, value)
        values.append(value)
    hashes = [data[at + 32 * i : at + 32 * i + 32] for i in range(sales)]
    at += 32 * sales

    def column(start: int, w: int) -> list[int]:
        return [
            int.from_bytes(data[start + w * i : start + w * (i + 1)], "big") for i in range(sales)
        ]

    ordinals = column(at, 4)
    slots, units = column(at + 4 * sales, width), column(at + 4 * sales + width * sales, width)
    require(len(data) == at + 4 * sales + 2 * width * sales, "length")
    links = [hmac.new(block_key, b"grattage/chain/1", hashlib.sha256).digest()]
    for _ in range(size):
        links.append(sha256(links[-1]))
    links.reverse()
    require(links[0] == chain_head, "the key's chain is not the committed one")
    permutation = list(range(size))
    for n in range(sales):
        j = slot(values[ordinals[n]], links[n + 1], block_id, n, size, hashes[n])
        require(j == slots[n], f"draw {n}: the slot")
        permutation[n], permutation[j] = permutation[j], permutation[n]
        require(permutation[n] == units[n], f"draw {n}: the unit")
    return permutation
