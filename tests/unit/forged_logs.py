"""Logs an operator holding its keys rewrote, for the tests of the proof checkers: the vectors'
entries with a document re-signed, the head re-signed, every path of a proof rebuilt."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from grattage.blocks.signing import Signer, canonical_json
from grattage.blocks.tlog import Frontier, entry_leaf_hash, inclusion_path

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"


def vectors() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "transparency_vectors.json").read_text("utf-8"))
    return data


def vector_keys() -> tuple[Signer, Signer]:
    data = vectors()
    return (
        Signer(bytes.fromhex(data["operator_key"]["private_key"])),
        Signer(bytes.fromhex(data["next_operator_key"]["private_key"])),
    )


def vector_entries(rotated: bool) -> list[dict[str, Any]]:
    data = vectors()
    listed = [*data["log"]["entries"], *(data["rotation"]["entries"] if rotated else [])]
    return [item["entry"] for item in listed]


def reforged(proof: dict[str, Any], entries: list[dict[str, Any]], signer: Signer) -> Any:
    """``proof`` against a log an operator holding the keys rewrote: its receipt the one of
    ``entries``, the head re-signed by ``signer``, every inclusion path rebuilt."""
    nodes: dict[tuple[int, int], bytes] = {}
    frontier = Frontier()
    for item in entries:
        for level, index, digest in frontier.append(entry_leaf_hash(canonical_json(item))):
            nodes[(level, index)] = digest
    head = signer.sign_tree_head(frontier.size, 1, frontier.root())
    rebuilt = copy.deepcopy(proof)
    rebuilt["log"]["sth"] = head.to_json()
    for part in (
        rebuilt["log"]["commitment_entry"],
        rebuilt["log"]["receipt_entry"],
        *rebuilt["log"].get("key_changes", []),
    ):
        part["entry"] = entries[part["index"]]
        path = inclusion_path(lambda lv, ix: nodes[(lv, ix)], part["index"], head.tree_size)
        part["path"] = [node.hex() for node in path]
    rebuilt["receipt"] = rebuilt["log"]["receipt_entry"]["entry"]["receipt"]
    return rebuilt
