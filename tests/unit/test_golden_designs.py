"""Pinned designs: today's code derives exactly the golden tickets and accepts the frozen proofs.

The files under ``tests/fixtures/golden/`` were written once by its ``regenerate.py`` (read its
docstring before ever running it again). A refactor that changes one draw of a design, a salt,
a leaf or a byte of a proof turns these tests red: every ticket already sold would then
re-derive differently and every proof handed to a player would fail.

Every rules version has its files: a block keeps the rules it was committed with, so design-v1's
vectors and proofs (made before design-v2) must still re-derive and verify, byte for byte.
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
from grattage.games import SeededRandomness, find_game, rules_versions

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


VERSIONS = [(name, version) for name in ("cash", "astro") for version in rules_versions(name)]


def _vectors(kind: str) -> list[Any]:
    cases = []
    for name, version in VERSIONS:
        file = f"{regenerate.rules_file_stem(version)}.{kind}.json"
        tail = version.rsplit("/", 1)[1]
        for index, vector in enumerate(_read(file)["vectors"]):
            cases.append(
                pytest.param(
                    name, version, vector, id=f"{name}-{tail}-{index}-{vector['prize_cents']}"
                )
            )
    return cases


def test_both_games_have_golden_files_for_design_v1_and_design_v2():
    assert [v.rsplit("/", 1)[1] for _, v in VERSIONS] == ["design-v1", "design-v2"] * 2
    for _, version in VERSIONS:
        assert (GOLDEN / f"{regenerate.rules_file_stem(version)}.designs.json").exists()


@pytest.mark.parametrize(("name", "version", "vector"), _vectors("designs"))
def test_seed_and_prize_give_the_golden_ticket_byte_for_byte(name, version, vector):
    game = regenerate.vector_game(name, version)
    seed = bytes.fromhex(vector["seed"])
    ticket = game.design(vector["prize_cents"], SeededRandomness(seed), vector["choice"])
    assert canonical(ticket) == canonical(vector["ticket"])


@pytest.mark.parametrize(("name", "version", "vector"), _vectors("units"))
def test_block_key_and_position_give_the_golden_salt_and_ticket(name, version, vector):
    key = bytes.fromhex(_read(f"{regenerate.rules_file_stem(version)}.units.json")["key"])
    salt = unit_salt(key, vector["position"])
    assert salt.hex() == vector["salt"]
    game = regenerate.vector_game(name, version)
    ticket = design_unit(game, salt, vector["prize_cents"], vector["choice"])
    assert canonical(ticket) == canonical(vector["ticket"])


@pytest.mark.parametrize(("name", "version"), VERSIONS)
def test_the_golden_designs_cover_every_prize_of_the_packaged_table_from_several_seeds(
    name, version
):
    game = regenerate.vector_game(name, version)
    golden = _read(f"{regenerate.rules_file_stem(version)}.designs.json")
    assert (golden["rules_version"], golden["table_sha256"]) == (
        game.rules_version,
        game.table.digest(),
    )
    seeds: dict[int, set[str]] = {}
    for vector in golden["vectors"]:
        seeds.setdefault(vector["prize_cents"], set()).add(vector["seed"])
    assert sorted(seeds) == sorted({0, *(tier.prize_cents for tier in game.table.tiers)})
    assert all(len(found) >= 3 for found in seeds.values()), seeds


@pytest.mark.parametrize("version", rules_versions("astro"))
def test_the_golden_astro_designs_use_every_sign(version):
    golden = _read(f"{regenerate.rules_file_stem(version)}.designs.json")
    assert len({vector["choice"] for vector in golden["vectors"]}) == 12


def test_new_blocks_are_designed_under_design_v2():
    assert find_game("cash").rules_version == "cash/2009-03-16/design-v2"
    assert find_game("astro").rules_version == "astro/2005-08-29/design-v2"


FROZEN_PROOFS = [
    (f"{prefix}-proof-{label}.json", prize)
    for prefix in (
        "frozen-cash",
        "frozen-astro",
        "frozen-cash-design-v2",
        "frozen-astro-design-v2",
    )
    for label, prize in (("top-prize", 1_600_000), ("losing", 0))
]
FROZEN_DISCLOSURES = [
    ("frozen-cash", [1999, 1, 300, 700]),
    ("frozen-astro", [1999, 1, 300, 700]),
    ("frozen-cash-design-v2", [1998, 1, 1, 300, 700]),
    ("frozen-astro-design-v2", [1998, 1, 1, 300, 700]),
]


@pytest.mark.parametrize(("file", "prize"), FROZEN_PROOFS)
def test_todays_verifier_accepts_the_frozen_ticket_proof(file, prize):
    verified = verify_ticket_proof(_read(file))
    assert verified.prize_cents == prize
    assert verified.block.root.hex() == _read(file)["commitment"]["root"]


@pytest.mark.parametrize(("file", "prize"), FROZEN_PROOFS)
def test_a_frozen_proof_is_checked_under_the_rules_version_it_was_committed_with(file, prize):
    proof = _read(file)
    verified = verify_ticket_proof(proof)
    assert verified.block.game.rules_version == proof["commitment"]["rules_version"]


@pytest.mark.parametrize(("prefix", "counts"), FROZEN_DISCLOSURES)
def test_todays_verifier_accepts_the_frozen_disclosure(prefix, counts):
    verified = verify_disclosure(_read(f"{prefix}-disclosure.json"), workers=1)
    assert verified.counts == counts


@pytest.mark.parametrize(("file", "prize"), FROZEN_PROOFS)
def test_grattage_verify_ticket_accepts_the_frozen_proof(file, prize):
    result = CliRunner().invoke(cli, ["verify-ticket", str(GOLDEN / file)])
    assert result.exit_code == 0, result.output
    assert "valid — unit" in result.output


@pytest.mark.parametrize(("prefix", "counts"), FROZEN_DISCLOSURES)
def test_grattage_verify_block_accepts_the_frozen_disclosure(prefix, counts):
    result = CliRunner().invoke(cli, ["verify-block", str(GOLDEN / f"{prefix}-disclosure.json")])
    assert result.exit_code == 0, result.output
    assert "recount exactly to the prize table" in result.output


@pytest.mark.parametrize("file", sorted(derived_files()))
def test_re_deriving_each_golden_file_gives_the_same_bytes(file):
    assert derived_files()[file] == (GOLDEN / file).read_bytes()
