"""Ticket proofs and block disclosures verify — and fail on any single change."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import uuid

import pytest

from grattage.blocks.commitment import build_tree, unit_audit_path
from grattage.blocks.merkle import CHUNK_LEAVES, audit_path, leaf_hash, root_from_path, root_of
from grattage.blocks.proofs import (
    make_commitment,
    make_disclosure,
    make_ticket_proof,
    verify_disclosure,
    verify_ticket_proof,
)
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import design_unit, new_block_key
from grattage.blocks.shuffle import secure_generator, shuffled_tiers
from grattage.errors import VerificationFailed
from grattage.games import find_game, load_table

SMALL_ASTRO = """
game = "astro"
block_size = 3000
[[tiers]]
prize_cents = 1600000
count = 1
shows = [{ gain_cents = 800000, multiplier = 2 }]
[[tiers]]
prize_cents = 2000
count = 300
[[tiers]]
prize_cents = 200
count = 700
[[tiers]]
prize_cents = 800000
count = 1
"""
SMALL_CASH = SMALL_ASTRO.replace('game = "astro"', 'game = "cash"').replace(
    "shows = [{ gain_cents = 800000, multiplier = 2 }]\n", ""
)


class Block:
    def __init__(self, game_name: str, text: str) -> None:
        self.game = find_game(game_name, load_table(game_name, text, "small.toml"))
        self.block_id = uuid.uuid4().bytes
        self.key = new_block_key()
        self.tiers = bytes(shuffled_tiers(self.game.table, secure_generator()))
        self.tree = build_tree(self.block_id, self.key, self.tiers, workers=1)
        self.commitment = make_commitment(
            self.block_id, self.game, self.tree.root, len(self.tiers), "2026-11-30T12:00:00+00:00"
        )

    def proof(self, position: int, choice: str | None) -> dict:
        tier = self.tiers[position]
        prize = self.game.table.prize_of_tier(tier)
        salt = unit_salt(self.key, position)
        chunk = position // CHUNK_LEAVES
        chunk_tiers = self.tiers[chunk * CHUNK_LEAVES : (chunk + 1) * CHUNK_LEAVES]
        path = unit_audit_path(
            self.block_id, self.key, position, chunk_tiers, self.tree.chunk_roots
        )
        ticket = design_unit(self.game, salt, prize, choice)
        return make_ticket_proof(self.commitment, position, tier, prize, salt, choice, path, ticket)

    def winning_position(self) -> int:
        return next(i for i, t in enumerate(self.tiers) if t == 1)


@pytest.fixture(scope="module")
def astro() -> Block:
    return Block("astro", SMALL_ASTRO)


@pytest.fixture(scope="module")
def cash() -> Block:
    return Block("cash", SMALL_CASH)


def test_the_tree_is_the_rfc6962_tree_over_every_unit(astro):
    leaves = [
        leaf_hash(astro.block_id, i, tier, unit_salt(astro.key, i))
        for i, tier in enumerate(astro.tiers)
    ]
    assert astro.tree.root == root_of(leaves)
    for position in (0, 1023, 1024, 2999):
        path = audit_path(position, leaves)
        assert root_from_path(position, len(leaves), leaves[position], path) == astro.tree.root


@pytest.mark.parametrize("position", [0, 1, 1023, 1024, 2047, 2999])
def test_a_proof_verifies_for_an_astro_ticket(astro, position):
    verified = verify_ticket_proof(astro.proof(position, "leo"))
    assert verified.position == position


def test_a_proof_verifies_for_a_cash_ticket_and_json_round_trips(cash):
    proof = json.loads(json.dumps(cash.proof(cash.winning_position(), None)))
    assert verify_ticket_proof(proof).prize_cents == 1_600_000


def other_symbol(symbol: str) -> str:
    return "moon" if symbol != "moon" else "sun"


def hex_flip(text: str) -> str:
    return ("0" if text[0] != "0" else "1") + text[1:]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda p: p.__setitem__("position", p["position"] + 1),
            "do not lead to the committed root",
        ),
        (lambda p: p.__setitem__("tier", 2), "tier 2 pays 2000 cents, not 1600000"),
        (lambda p: p.__setitem__("prize_cents", 200), "pays"),
        (lambda p: p.__setitem__("salt", hex_flip(p["salt"])), "do not lead to the committed root"),
        (lambda p: p["path"].__setitem__(0, hex_flip(p["path"][0])), "do not lead"),
        (lambda p: p["path"].__setitem__(-1, hex_flip(p["path"][-1])), "do not lead"),
        (lambda p: p["path"].pop(), "do not lead"),
        (
            lambda p: p["ticket"]["symbols"].__setitem__(
                0, other_symbol(p["ticket"]["symbols"][0])
            ),
            "differs from the committed design in symbols",
        ),
        (lambda p: p["ticket"].__setitem__("gain_cents", 200), "differs from the committed design"),
        (lambda p: p.__setitem__("choice", "aries"), "differs from the committed design"),
        (
            lambda p: p["commitment"].__setitem__("root", hex_flip(p["commitment"]["root"])),
            "do not lead",
        ),
        (lambda p: p["commitment"]["table"]["tiers"][1].__setitem__("count", 301), "table_sha256"),
        (
            lambda p: p["commitment"].__setitem__("rules_version", "astro/v0"),
            "committed under rules",
        ),
        (lambda p: p.__setitem__("format", "x"), "not a ticket proof"),
        (lambda p: p.__setitem__("salt", "zz"), "malformed proof"),
    ],
)
def test_changing_any_one_part_of_a_proof_fails_verification(astro, change, message):
    proof = copy.deepcopy(astro.proof(astro.winning_position(), "leo"))
    verify_ticket_proof(proof)
    change(proof)
    with pytest.raises(VerificationFailed, match=message):
        verify_ticket_proof(proof)


def test_a_disclosure_rebuilds_the_root_and_recounts_every_tier(astro):
    disclosure = make_disclosure(astro.commitment, astro.key, astro.tiers)
    verified = verify_disclosure(json.loads(json.dumps(disclosure)), workers=1)
    assert verified.counts == [1998, 1, 300, 700, 1]


def test_a_disclosure_with_two_different_tiers_swapped_fails(astro):
    tiers = bytearray(astro.tiers)
    first = tiers.index(1)
    other = tiers.index(2)
    tiers[first], tiers[other] = tiers[other], tiers[first]
    disclosure = make_disclosure(astro.commitment, astro.key, bytes(tiers))
    with pytest.raises(VerificationFailed, match="do not rebuild the committed root"):
        verify_disclosure(disclosure, workers=1)


def test_a_disclosure_with_one_unit_changed_fails_the_recount(astro):
    tiers = bytearray(astro.tiers)
    tiers[tiers.index(0)] = 3
    disclosure = make_disclosure(astro.commitment, astro.key, bytes(tiers))
    with pytest.raises(VerificationFailed, match="tier 0: 1997 units, the table says 1998"):
        verify_disclosure(disclosure, workers=1)


def test_a_disclosure_with_another_key_fails(astro):
    disclosure = make_disclosure(astro.commitment, new_block_key(), astro.tiers)
    with pytest.raises(VerificationFailed, match="do not rebuild"):
        verify_disclosure(disclosure, workers=1)


def test_the_ticket_checker_needs_only_the_standard_library(tmp_path, astro):
    proof_file = tmp_path / "proof.json"
    proof_file.write_text(json.dumps(astro.proof(7, "pisces")))
    script = (
        "import json, sys\n"
        "from grattage.blocks.proofs import verify_ticket_proof, verify_disclosure\n"
        f"verify_ticket_proof(json.load(open({str(proof_file)!r})))\n"
        # _distutils_hack is setuptools' own start-up hook, loaded by site before any import of ours
        "third = sorted({m.split('.')[0] for m in sys.modules}"
        " - set(sys.stdlib_module_names) - {'grattage', '__main__', '_distutils_hack'})\n"
        "print(json.dumps(third))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 9, 100, 11_719])
def test_the_remembered_chunk_tree_gives_the_rfc6962_root_and_paths(size):
    from grattage.blocks.merkle import NodeTree

    hashes = [i.to_bytes(32, "big") for i in range(size)]
    tree = NodeTree(hashes)
    assert tree.root() == root_of(hashes)
    for index in {0, size // 2, size - 1}:
        assert tree.path(index) == audit_path(index, hashes)
