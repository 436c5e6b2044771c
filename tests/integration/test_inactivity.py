"""Whether an idle ticket is revealed after the inactivity delay is a rule of its game's class
(Cash, art. 4.3), not a setting: the sweeper and the player's own access both follow it."""

from __future__ import annotations

import pytest

from grattage.games.astro import Astro
from grattage.games.cash import Cash
from grattage.service import tickets
from support import World, bought


def test_only_cash_reveals_an_idle_ticket_after_the_inactivity_delay() -> None:
    assert Cash.reveals_after_inactivity is True
    assert Astro.reveals_after_inactivity is False


def test_an_idle_astro_ticket_waits_for_the_abandon_delay(world: World) -> None:
    world.stock("astro")
    player = world.player(1000)
    sold, _ = bought(world, player, game_name="astro", mode="play", sign="leo")
    world.clock.advance(world.platform.policy.inactivity_seconds + 1)
    assert tickets.sweep(world.platform) == 0
    world.clock.advance(world.platform.policy.abandon_seconds)
    assert tickets.sweep(world.platform) == 1
    assert tickets.get_ticket(world.platform, player, sold.id).finished_by == "abandon"


@pytest.mark.parametrize("finisher", ["sweep", "player's access"])
def test_a_game_class_that_reveals_after_inactivity_has_its_idle_tickets_revealed(
    world: World, monkeypatch: pytest.MonkeyPatch, finisher: str
) -> None:
    monkeypatch.setattr(Astro, "reveals_after_inactivity", True)
    world.stock("astro")
    player = world.player(1000)
    sold, _ = bought(world, player, game_name="astro", mode="play", sign="leo")
    world.clock.advance(world.platform.policy.inactivity_seconds + 1)
    if finisher == "sweep":
        assert tickets.sweep(world.platform) == 1
    else:
        assert tickets.settle_due(world.platform, player) == 1
    assert tickets.get_ticket(world.platform, player, sold.id).finished_by == "inactivity"
