"""A third game plugs in from the test folder alone: registered through the public API, it is
designed, evaluated, validated, generated into a block and verified like Cash and Astro, and
the platform sells it, proves its tickets and reconciles — then it leaves no trace.

This is the proof behind docs/adding-a-game.md: nothing under ``src/`` names the toy game."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from grattage.blocks.blockfile import verify_block_file
from grattage.blocks.generation import generate_block_file
from grattage.blocks.proofs_v2 import verify_disclosure, verify_ticket_proof
from grattage.entrypoints.cli import cli
from grattage.entrypoints.http import create_app
from grattage.errors import InvalidPrizeTable, InvalidTicket, UnknownGame
from grattage.games import (
    PrizeTable,
    Registration,
    SeededRandomness,
    default_table,
    find_game,
    game_names,
    load_table,
    register_game,
)
from grattage.games.cash import Cash
from grattage.games.table import parse_prize_table
from grattage.service.emissions import create_emission
from grattage.service.reconcile import reconcile
from support import PASSWORD, make_world
from toy_game import SIDES, TABLE_FILE, PileOuFace, toy_table

CSRF = {"X-Grattage-CSRF": "1"}
TOY = PileOuFace.name


@pytest.fixture
def registered() -> Iterator[Registration]:
    with register_game(PileOuFace, toy_table()) as registration:
        yield registration
    assert TOY not in game_names()


def test_a_registered_game_is_found_by_name_with_its_default_table(registered):
    assert game_names() == ("cash", "astro", TOY)
    assert default_table(TOY) == toy_table()
    game = find_game(TOY)
    assert isinstance(game, PileOuFace)
    assert game is find_game(TOY), "the default game is prepared once"
    assert load_table(TOY, TABLE_FILE.read_text("utf-8"), TABLE_FILE.name) == toy_table()


def test_an_unregistered_game_is_unknown_again():
    registration = register_game(PileOuFace, toy_table())
    registration.unregister()
    assert game_names() == ("cash", "astro")
    with pytest.raises(UnknownGame, match="pile_ou_face"):
        find_game(TOY)
    registration.unregister()  # twice is harmless


def test_a_name_is_registered_once(registered):
    with pytest.raises(ValueError, match="already registered"):
        register_game(PileOuFace, toy_table())
    with pytest.raises(ValueError, match="'cash' is already registered"):
        register_game(Cash, default_table("cash"))
    assert find_game(TOY) is registered.default_game


def test_a_table_the_game_cannot_dress_is_refused_at_registration():
    with_shows = TABLE_FILE.read_text("utf-8").replace(
        "count = 1\n", "count = 1\nshows = [{ gain_cents = 300 }]\n", 1
    )
    with pytest.raises(InvalidPrizeTable, match="one amount"):
        register_game(PileOuFace, parse_prize_table(with_shows))
    assert TOY not in game_names()


def test_every_prize_of_the_toy_table_is_designed_evaluated_and_validated(registered):
    game = find_game(TOY)
    for prize in (0, *(tier.prize_cents for tier in game.table.tiers)):
        for call in SIDES:
            for seed in range(20):
                ticket = game.design(prize, SeededRandomness(bytes([seed])), call)
                assert game.evaluate(ticket) == prize
                game.validate(ticket)
                assert ticket["call"] == call


def test_a_toy_ticket_that_lies_about_its_prize_is_invalid(registered):
    game = find_game(TOY)
    ticket = game.design(0, SeededRandomness(b"seed"), "pile")
    with pytest.raises(InvalidTicket, match="win rule gives 0"):
        game.validate({**ticket, "prize_cents": 300})
    with pytest.raises(InvalidTicket, match="coin"):
        game.validate({**ticket, "coin": "tranche"})


def test_a_toy_block_is_generated_and_verified_tier_by_tier(registered, tmp_path: Path):
    game = find_game(TOY)
    header, _ = generate_block_file(game, tmp_path / "toy.block")
    verified = verify_block_file(tmp_path / "toy.block")
    assert header.game == TOY
    assert verified.counts == game.table.counts_by_tier() == [13, 1, 2, 4]


def test_the_engine_command_line_designs_generates_and_verifies_the_toy_game(
    registered, tmp_path: Path
):
    runner = CliRunner()
    listed = runner.invoke(cli, ["games"])
    assert listed.exit_code == 0, listed.output
    assert "Pile ou face" in listed.output
    designed = runner.invoke(cli, ["ticket", "design", TOY, "--prize", "3", "--sign", "face"])
    assert designed.exit_code == 0, designed.output
    assert json.loads(designed.output)["coin"] == "face"
    checked = runner.invoke(cli, ["ticket", "check", "-"], input=designed.output)
    assert checked.exit_code == 0, checked.output
    block = str(tmp_path / "toy.block")
    assert runner.invoke(cli, ["block", "generate", TOY, "--out", block]).exit_code == 0
    verified = runner.invoke(cli, ["block", "verify", block])
    assert verified.exit_code == 0, verified.output
    assert "every tier matches the table" in verified.output


def _signed_in(client: TestClient, world) -> None:
    world.player(10_000, email="toy@example.org")
    answer = client.post("/api/sessions", json={"email": "toy@example.org", "password": PASSWORD})
    assert answer.status_code == 200, answer.text


def test_the_platform_sells_proves_and_reconciles_the_toy_game(registered, tmp_path: Path):
    table: PrizeTable = toy_table()
    # sold unit n to sale n: its proof (check 5) is that of an undrawn block
    with make_world("sqlite", tmp_path, drawn=False) as world:
        create_emission(world.platform, TOY, 1, table=table)
        app = create_app(world.settings, platform=world.platform, mount_web=False)
        with TestClient(app) as client:
            _signed_in(client, world)
            listed = {game["name"]: game for game in client.get("/api/games").json()["games"]}
            assert listed[TOY]["price_cents"] == 100
            assert listed[TOY]["choices"] == ["pile", "face"]
            bought = client.post(
                f"/api/games/{TOY}/tickets", json={"mode": "play", "sign": "face"}, headers=CSRF
            )
            assert bought.status_code == 201, bought.text
            ticket = bought.json()
            assert ticket["zones"] == ["amount", "coin"]
            assert ticket["locked_zones"] == ["coin"], "the coin waits for the amount"
            early = client.post(
                f"/api/tickets/{ticket['id']}/reveal", json={"zones": ["coin"]}, headers=CSRF
            )
            assert early.json()["error"] == "zone_not_revealable", early.text
            for zone in ("amount", "coin"):
                answer = client.post(
                    f"/api/tickets/{ticket['id']}/reveal", json={"zones": [zone]}, headers=CSRF
                )
                assert answer.status_code == 200, answer.text
            finished = answer.json()
            assert finished["state"] == "finished"
            document = finished["document"]
            assert finished["prize_cents"] == find_game(TOY).evaluate(document)
            proof = client.get(f"/api/tickets/{ticket['id']}/proof")
            assert proof.status_code == 200, proof.text
            assert verify_ticket_proof(json.loads(proof.text)).ticket["coin"] == document["coin"]
            sold = [finished]
            for _ in range(table.block_size - 1):
                answer = client.post(
                    f"/api/games/{TOY}/tickets", json={"mode": "auto", "sign": "pile"}, headers=CSRF
                )
                assert answer.status_code == 201, answer.text
                sold.append(answer.json())
            assert sum(t["prize_cents"] for t in sold) == table.prizes_total_cents
            sold_out = client.post(
                f"/api/games/{TOY}/tickets", json={"mode": "auto", "sign": "pile"}, headers=CSRF
            )
            assert sold_out.status_code == 409, sold_out.text
            (block,) = [b for b in client.get("/api/blocks").json()["blocks"] if b["game"] == TOY]
            assert block["state"] == "exhausted"
            disclosure = client.get(f"/api/blocks/{block['id']}/disclosure")
            assert disclosure.status_code == 200, disclosure.text
            key = bytes.fromhex(client.get("/api/log/key").json()["public_key"])
            verified = verify_disclosure(disclosure.json(), key, workers=1)
            assert verified.counts == table.counts_by_tier()
        report = reconcile(world.platform)
        assert report.clean, report.discrepancies
