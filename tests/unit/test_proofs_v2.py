"""Version-2 proofs: a signed commitment and a signed receipt, both included in a signed tree
head, and a unit leaf that binds the prize — any change is refused, and a proof is PINNED only
against the head the checker was given."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from grattage.blocks.commitment import build_tree, unit_audit_path
from grattage.blocks.merkle import CHUNK_LEAVES
from grattage.blocks.proofs_v2 import (
    make_commitment,
    make_disclosure,
    make_receipt,
    prizes_never_sold,
    tier_prizes,
    verify_disclosure,
    verify_ticket_proof,
)
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import design_unit, new_block_key
from grattage.blocks.shuffle import secure_generator, shuffled_tiers
from grattage.blocks.signing import Signer, canonical_json
from grattage.blocks.tlog import Frontier, entry_leaf_hash, inclusion_path
from grattage.errors import VerificationFailed
from grattage.games import find_game, load_table

OPERATOR = Signer(bytes(range(32)))
TIME = "2026-12-01T12:00:00.000000Z"
SMALL_CASH = """
game = "cash"
block_size = 3000
[[tiers]]
prize_cents = 1000000
count = 1
[[tiers]]
prize_cents = 2000
count = 300
[[tiers]]
prize_cents = 500
count = 700
"""


class LoggedBlock:
    def __init__(self) -> None:
        self.game = find_game("cash", load_table("cash", SMALL_CASH, "small.toml"))
        self.block_id = uuid.uuid4().bytes
        self.key = new_block_key()
        self.tiers = bytes(shuffled_tiers(self.game.table, secure_generator()))
        self.prizes = tier_prizes(self.game.table)
        self.tree = build_tree(
            self.block_id, self.key, self.tiers, workers=1, tier_prizes=self.prizes
        )
        self.commitment = make_commitment(
            OPERATOR, self.block_id, self.game, 500, self.tree.root, 3000, TIME
        )
        self.entries: list[dict[str, Any]] = [
            {"v": 1, "kind": "block.commitment", "time": TIME, "commitment": self.commitment}
        ]
        self.receipts: dict[int, dict[str, Any]] = {}

    def sell(self, position: int) -> None:
        receipt = make_receipt(
            OPERATOR,
            ticket_id=position + 1,
            player="ab" * 16,
            block_id=self.block_id,
            sequence=len(self.receipts),
            position=position,
            stake_cents=500,
            time=TIME,
            commitment_index=0,
        )
        self.receipts[position] = receipt
        self.entries.append({"v": 1, "kind": "sale.receipt", "time": TIME, "receipt": receipt})

    def head_and_nodes(self) -> tuple[Any, dict[tuple[int, int], bytes]]:
        nodes: dict[tuple[int, int], bytes] = {}
        frontier = Frontier()
        for entry in self.entries:
            for level, index, digest in frontier.append(entry_leaf_hash(canonical_json(entry))):
                nodes[(level, index)] = digest
        return OPERATOR.sign_tree_head(frontier.size, 1, frontier.root()), nodes

    def proof(self, position: int) -> dict[str, Any]:
        head, nodes = self.head_and_nodes()
        tier = self.tiers[position]
        prize = self.game.table.prize_of_tier(tier)
        salt = unit_salt(self.key, position)
        chunk = position // CHUNK_LEAVES
        chunk_tiers = self.tiers[chunk * CHUNK_LEAVES : (chunk + 1) * CHUNK_LEAVES]
        path = unit_audit_path(
            self.block_id, self.key, position, chunk_tiers, self.tree.chunk_roots, self.prizes
        )
        receipt_index = next(
            i for i, e in enumerate(self.entries) if e.get("receipt") == self.receipts[position]
        )

        def logged(index: int) -> dict[str, Any]:
            hashes = inclusion_path(lambda lv, ix: nodes[(lv, ix)], index, head.tree_size)
            return {"index": index, "entry": self.entries[index], "path": [h.hex() for h in hashes]}

        return {
            "format": "grattage-ticket-proof/2",
            "operator_key": OPERATOR.public_key.hex(),
            "commitment": self.commitment,
            "receipt": self.receipts[position],
            "unit": {
                "position": position,
                "tier": tier,
                "prize_cents": prize,
                "salt": salt.hex(),
                "choice": None,
                "path": [node.hex() for node in path],
            },
            "ticket": design_unit(self.game, salt, prize, None),
            "log": {
                "sth": head.to_json(),
                "commitment_entry": logged(0),
                "receipt_entry": logged(receipt_index),
            },
        }


@pytest.fixture(scope="module")
def block() -> LoggedBlock:
    logged = LoggedBlock()
    for position in range(5):
        logged.sell(position)
    logged.sell(next(i for i, tier in enumerate(logged.tiers) if tier == 1))
    return logged


def test_a_proof_verifies_pinned_only_against_its_own_head(block: LoggedBlock) -> None:
    proof = block.proof(3)
    assert not verify_ticket_proof(proof).pinned
    head, _ = block.head_and_nodes()
    assert verify_ticket_proof(proof, pinned=head).pinned
    other = OPERATOR.sign_tree_head(head.tree_size - 1, 1, bytes(32))
    with pytest.raises(VerificationFailed, match="pinned head"):
        verify_ticket_proof(proof, pinned=other)


def edit(proof: dict[str, Any], change: str) -> None:  # noqa: PLR0912 (one branch per edit)
    if change == "prize":
        proof["unit"]["prize_cents"] = 2000 if proof["unit"]["prize_cents"] != 2000 else 500
    elif change == "table remapped":
        proof["commitment"]["table"]["tiers"][1]["prize_cents"] = 1200
    elif change == "stake":
        proof["receipt"]["stake_cents"] = 200
    elif change == "position":
        proof["unit"]["position"] += 1
    elif change == "salt":
        proof["unit"]["salt"] = "00" * 32
    elif change == "receipt path":
        proof["log"]["receipt_entry"]["path"][0] = "00" * 32
    elif change == "commitment entry":
        proof["log"]["commitment_entry"]["index"] = 1
    elif change == "head size":
        proof["log"]["sth"]["tree_size"] += 1
    elif change == "ticket":
        star = proof["ticket"]["your_numbers"][0]
        star["amount_cents"] = 2000 if star["amount_cents"] != 2000 else 500
    elif change == "other key":
        proof["operator_key"] = Signer(bytes(32)).public_key.hex()
    elif change == "tier":
        proof["unit"]["tier"] = (proof["unit"]["tier"] + 1) % 4
    elif change == "unit path first":
        proof["unit"]["path"][0] = hex_flip(proof["unit"]["path"][0])
    elif change == "unit path last":
        proof["unit"]["path"][-1] = hex_flip(proof["unit"]["path"][-1])
    elif change == "unit path shortened":
        proof["unit"]["path"].pop()
    elif change == "choice":
        proof["unit"]["choice"] = "leo"
    elif change == "commitment root":
        proof["commitment"]["root"] = hex_flip(proof["commitment"]["root"])
    elif change == "table count":
        proof["commitment"]["table"]["tiers"][1]["count"] = 301
    elif change == "rules version":
        proof["commitment"]["rules_version"] = "cash/v0"
    elif change == "format":
        proof["format"] = "grattage-ticket-proof/1"
    elif change == "malformed salt":
        proof["unit"]["salt"] = "zz"
    elif change == "receipt sequence":
        proof["receipt"]["sequence"] += 1
    else:
        raise AssertionError(f"no such change {change!r}")


def hex_flip(text: str) -> str:
    return ("0" if text[0] != "0" else "1") + text[1:]


@pytest.mark.parametrize(
    "change",
    [
        "prize",
        "table remapped",
        "stake",
        "position",
        "salt",
        "receipt path",
        "commitment entry",
        "head size",
        "ticket",
        "other key",
        "tier",
        "unit path first",
        "unit path last",
        "unit path shortened",
        "choice",
        "commitment root",
        "table count",
        "rules version",
        "format",
        "malformed salt",
        "receipt sequence",
    ],
)
def test_any_single_change_to_a_proof_is_refused(block: LoggedBlock, change: str) -> None:
    """The 21 ordinary edits of issue 14 (the v1 ones are in tests/unit/test_proofs.py)."""
    proof = copy.deepcopy(block.proof(4))
    verify_ticket_proof(copy.deepcopy(proof))
    edit(proof, change)
    with pytest.raises(VerificationFailed):
        verify_ticket_proof(proof)


def test_a_disclosure_rebuilds_the_signed_root_and_names_the_prizes_never_sold(
    block: LoggedBlock,
) -> None:
    disclosure = make_disclosure(block.commitment, block.key, block.tiers, OPERATOR.public_key)
    verified = verify_disclosure(disclosure, OPERATOR.public_key, workers=1)
    never = prizes_never_sold(verified, set(block.receipts))
    assert dict(never) == {
        2000: 300 - sum(block.tiers[p] == 2 for p in block.receipts),
        500: 700 - sum(block.tiers[p] == 3 for p in block.receipts),
    }
    swapped = bytearray(block.tiers)
    first_win = swapped.index(1)
    swapped[first_win], swapped[first_win + 1] = swapped[first_win + 1], swapped[first_win]
    if swapped[first_win] != swapped[first_win + 1]:
        with pytest.raises(VerificationFailed, match="rebuild"):
            verify_disclosure(
                make_disclosure(block.commitment, block.key, bytes(swapped), OPERATOR.public_key),
                OPERATOR.public_key,
                workers=1,
            )
