"""The fairness commands from end to end: a proof and a disclosure fetched from the platform,
written to files and checked by ``grattage verify-ticket`` / ``verify-block``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from grattage.entrypoints.cli import cli
from grattage.service import fairness, tickets
from grattage.service.emissions import close_block, list_blocks
from support import World

from .conftest import cli_env


def run(world: World, *args: str):
    return CliRunner().invoke(cli, list(args), env=cli_env(world), catch_exceptions=False)


def test_a_proof_file_verifies_and_a_tampered_one_exits_1(world: World, tmp_path: Path) -> None:
    world.stock("astro")
    player = world.player(1000)
    ticket, _ = tickets.buy(world.platform, player, game_name="astro", mode="auto", sign="pisces")
    proof = fairness.ticket_proof(world.platform, player, ticket.id)
    good = tmp_path / "proof.json"
    good.write_text(json.dumps(proof))
    result = run(world, "verify-ticket", str(good))
    assert result.exit_code == 0, result.output
    assert "the ticket shown is the committed design" in result.stdout
    proof["ticket"]["symbols"][0] = "moon" if proof["ticket"]["symbols"][0] != "moon" else "sun"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(proof))
    result = run(world, "verify-ticket", str(bad))
    assert result.exit_code == 1
    assert result.stderr.startswith("grattage: error: ")


def test_a_closed_block_is_disclosed_to_a_file_that_verifies(world: World, tmp_path: Path) -> None:
    world.stock("cash")
    block_id = list_blocks(world.platform, "cash")[0].id
    out = tmp_path / "disclosure.json"
    refused = run(world, "block", "disclose", str(block_id), "--out", str(out))
    assert refused.exit_code == 3
    assert "exhausted or closed" in refused.stderr
    close_block(world.platform, block_id)
    assert run(world, "block", "disclose", str(block_id), "--out", str(out)).exit_code == 0
    result = run(world, "verify-block", str(out))
    assert result.exit_code == 0, result.output
    assert "rebuild the committed root" in result.stdout


def test_commitment_prints_the_published_document(world: World) -> None:
    world.stock("cash")
    block_id = list_blocks(world.platform, "cash")[0].id
    result = run(world, "block", "commitment", str(block_id))
    assert json.loads(result.stdout) == fairness.commitment(world.platform, block_id)


def test_a_proof_that_is_not_json_is_one_line_and_exit_2(world: World, tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{nope")
    result = run(world, "verify-ticket", str(path))
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_sweep_publishes_each_ended_block_s_disclosure_once(world: World) -> None:
    world.stock("astro", blocks=2)
    ended, still_open = (block.id for block in list_blocks(world.platform, "astro"))
    close_block(world.platform, ended)
    first = run(world, "sweep")
    assert first.exit_code == 0, first.output
    published = world.settings.disclosure_dir / f"disclosure-block-{ended}.json"
    assert f"published {published}" in first.stdout
    assert not (world.settings.disclosure_dir / f"disclosure-block-{still_open}.json").exists()
    assert run(world, "verify-block", str(published)).exit_code == 0
    assert "published" not in run(world, "sweep").stdout
