"""A block keeps the rules version it was committed with (issue 12, item 4): a block made under
design-v1 sells and proves its tickets under design-v1, a new block under design-v2."""

from __future__ import annotations

import pytest

from grattage.blocks.proofs_v2 import verify_ticket_proof
from grattage.games import find_game
from grattage.service import emissions, fairness
from support import World, bought

V1 = {"cash": "cash/2009-03-16/design-v1", "astro": "astro/2005-08-29/design-v1"}
V2 = {"cash": "cash/2009-03-16/design-v2", "astro": "astro/2005-08-29/design-v2"}
SIGN = {"cash": None, "astro": "leo"}
PRICE = {"cash": 500, "astro": 200}


@pytest.fixture
def world_settings() -> dict[str, object]:
    """Blocks that sell unit n to sale n: the proof of a drawn ticket (proof v2 with its draw)
    is the verifiers' part of issue 15, tested with it."""
    return {"drawn": False}


def _sell_and_prove(world: World, name: str) -> tuple[dict, object]:
    player = world.player(40 * PRICE[name])
    ticket, _ = bought(world, player, game_name=name, mode="auto", sign=SIGN[name])
    proof = fairness.ticket_proof(world.platform, player, ticket.id)
    return proof, verify_ticket_proof(proof)


@pytest.mark.parametrize("name", ["cash", "astro"])
def test_a_block_made_under_design_v1_sells_and_proves_its_tickets_under_design_v1(
    world: World, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = emissions.find_game

    def design_v1(game, table=None, *, rules_version=None):  # the code before design-v2
        return real(game, table, rules_version=V1[name])

    monkeypatch.setattr(emissions, "find_game", design_v1)
    world.stock(name)
    monkeypatch.undo()
    proof, verified = _sell_and_prove(world, name)
    assert proof["commitment"]["rules_version"] == V1[name]
    assert verified.block.game.rules_version == V1[name]
    old = find_game(name, verified.block.table, rules_version=V1[name])
    assert old.evaluate(proof["ticket"]) == proof["unit"]["prize_cents"]


@pytest.mark.parametrize("name", ["cash", "astro"])
def test_a_new_block_is_committed_and_proved_under_design_v2(world: World, name: str) -> None:
    world.stock(name)
    proof, verified = _sell_and_prove(world, name)
    assert proof["commitment"]["rules_version"] == V2[name]
    assert verified.block.game.rules_version == V2[name]
