"""Pinned designs: today's code derives exactly the golden tickets and accepts the frozen proofs.

The files under ``tests/fixtures/golden/`` were written once by its ``regenerate.py`` (read its
docstring before ever running it again). A refactor that changes one draw of a design, a salt,
a leaf or a byte of a proof turns these tests red: every ticket already sold would then
re-derive differently and every proof handed to a player would fail.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from grattage.blocks.proofs import verify_disclosure, verify_ticket_proof
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import design_unit
from grattage.entrypoints.cli import cli
from grattage.games import SeededRandomness, find_game

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden"


def _load_regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regenerate = _load_regenerate()
canonical = regenerate.canonical
derived_files = cache(regenerate.golden_files)


def _read(name: str) -> Any:
    return json.loads((GOLDEN / name).read_text("utf-8"))


def _vectors(kind: str) -> list[Any]:
    cases = []
    for name in ("cash", "astro"):
        file = f"{regenerate.rules_file_stem(find_game(name))}.{kind}.json"
        for index, vector in enumerate(_read(file)["vectors"]):
            cases.append(pytest.param(name, vector, id=f"{name}-{index}-{vector['prize_cents']}"))
    return cases


@pytest.mark.parametrize(("name", "vector"), _vectors("designs"))
def test_seed_and_prize_give_the_golden_ticket_byte_for_byte(name, vector):
    game = find_game(name)
    seed = bytes.fromhex(vector["seed"])
    ticket = game.design(vector["prize_cents"], SeededRandomness(seed), vector["choice"])
    assert canonical(ticket) == canonical(vector["ticket"])


@pytest.mark.parametrize(("name", "vector"), _vectors("units"))
def test_block_key_and_position_give_the_golden_salt_and_ticket(name, vector):
    key = bytes.fromhex(_read(f"{regenerate.rules_file_stem(find_game(name))}.units.json")["key"])
    salt = unit_salt(key, vector["position"])
    assert salt.hex() == vector["salt"]
    ticket = design_unit(find_game(name), salt, vector["prize_cents"], vector["choice"])
    assert canonical(ticket) == canonical(vector["ticket"])


@pytest.mark.parametrize("name", ["cash", "astro"])
def test_the_golden_designs_cover_every_prize_of_the_packaged_table_from_several_seeds(name):
    game = find_game(name)
    golden = _read(f"{regenerate.rules_file_stem(game)}.designs.json")
    assert (golden["rules_version"], golden["table_sha256"]) == (
        game.rules_version,
        game.table.digest(),
    )
    seeds: dict[int, set[str]] = {}
    for vector in golden["vectors"]:
        seeds.setdefault(vector["prize_cents"], set()).add(vector["seed"])
    assert sorted(seeds) == sorted({0, *(tier.prize_cents for tier in game.table.tiers)})
    assert all(len(found) >= 3 for found in seeds.values()), seeds


def test_the_golden_astro_designs_use_every_sign():
    golden = _read(f"{regenerate.rules_file_stem(find_game('astro'))}.designs.json")
    assert len({vector["choice"] for vector in golden["vectors"]}) == 12


FROZEN_PROOFS = [
    ("frozen-cash-proof-top-prize.json", 1_600_000),
    ("frozen-cash-proof-losing.json", 0),
    ("frozen-astro-proof-top-prize.json", 1_600_000),
    ("frozen-astro-proof-losing.json", 0),
]


@pytest.mark.parametrize(("file", "prize"), FROZEN_PROOFS)
def test_todays_verifier_accepts_the_frozen_ticket_proof(file, prize):
    verified = verify_ticket_proof(_read(file))
    assert verified.prize_cents == prize
    assert verified.block.root.hex() == _read(file)["commitment"]["root"]


@pytest.mark.parametrize("name", ["cash", "astro"])
def test_todays_verifier_accepts_the_frozen_disclosure(name):
    verified = verify_disclosure(_read(f"frozen-{name}-disclosure.json"), workers=1)
    assert verified.counts == [1999, 1, 300, 700]


@pytest.mark.parametrize(("file", "prize"), FROZEN_PROOFS)
def test_grattage_verify_ticket_accepts_the_frozen_proof(file, prize):
    result = CliRunner().invoke(cli, ["verify-ticket", str(GOLDEN / file)])
    assert result.exit_code == 0, result.output
    assert "valid — unit" in result.output


@pytest.mark.parametrize("name", ["cash", "astro"])
def test_grattage_verify_block_accepts_the_frozen_disclosure(name):
    result = CliRunner().invoke(
        cli, ["verify-block", str(GOLDEN / f"frozen-{name}-disclosure.json")]
    )
    assert result.exit_code == 0, result.output
    assert "recount exactly to the prize table" in result.output


@pytest.mark.parametrize("file", sorted(derived_files()))
def test_re_deriving_each_golden_file_gives_the_same_bytes(file):
    assert derived_files()[file] == (GOLDEN / file).read_bytes()
