"""Selling: one atomic step from the stake to the unit, replays, sold-out games."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from grattage.blocks.sealing import design_unit, unit_salt
from grattage.errors import (
    IdempotencyConflict,
    InsufficientBalance,
    InvalidChoice,
    InvalidInput,
    SoldOut,
    UnknownGame,
)
from grattage.games import find_game
from grattage.service import tickets
from grattage.service.emissions import close_block, list_blocks, open_block
from support import World, bought, tiny_table


def test_a_purchase_debits_the_stake_and_stores_a_ticket_of_the_next_unit(world: World) -> None:
    world.stock("cash")
    player = world.player(2000)
    ticket, replayed = bought(world, player, game_name="cash", mode="play")
    assert not replayed
    assert ticket.state == "playing"
    assert ticket.stake_cents == 500
    assert ticket.balance_after_cents == 1500
    assert world.balance(player) == 1500


def test_a_whole_block_sells_exactly_its_prize_table(world: World) -> None:
    world.stock("cash")
    table = tiny_table("cash")
    player = world.player(table.block_size * 500)
    prizes = []
    for _ in range(table.block_size):
        ticket, _ = bought(world, player, game_name="cash", mode="auto")
        prizes.append(ticket.prize_cents)
    expected = Counter({tier.prize_cents: tier.count for tier in table.tiers})
    expected[0] = table.losing_count
    assert Counter(prizes) == expected
    assert world.balance(player) == table.prizes_total_cents


def test_buying_from_a_sold_out_game_is_refused_and_debits_nothing(world: World) -> None:
    world.stock("astro")
    size = tiny_table("astro").block_size
    player = world.player((size + 1) * 200)
    for _ in range(size):
        bought(world, player, game_name="astro", mode="auto", sign="leo")
    before = world.balance(player)
    with pytest.raises(SoldOut):
        bought(world, player, game_name="astro", mode="auto", sign="leo")
    assert world.balance(player) == before


def test_when_a_block_is_exhausted_the_next_pending_one_opens(world: World) -> None:
    world.stock("astro", blocks=2)
    first, second = list_blocks(world.platform, "astro")
    assert (first.state, second.state) == ("open", "pending")
    player = world.player((first.size + 1) * 200)
    for _ in range(first.size + 1):
        bought(world, player, game_name="astro", mode="auto", sign="leo")
    first, second = list_blocks(world.platform, "astro")
    assert (first.state, first.sold) == ("exhausted", first.size)
    assert (second.state, second.sold) == ("open", 1)


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # several open blocks
def test_several_blocks_of_a_game_can_be_open_and_a_closed_one_sells_nothing(
    world: World,
) -> None:
    world.stock("cash", blocks=3)
    first, second, third = list_blocks(world.platform, "cash")
    open_block(world.platform, second.id)
    close_block(world.platform, first.id)
    player = world.player(1000)
    ticket, _ = bought(world, player, game_name="cash", mode="auto")
    assert ticket.document["block"] == second.id
    states = [block.state for block in list_blocks(world.platform, "cash")]
    assert states == ["closed", "open", "pending"]
    close_block(world.platform, second.id)
    assert [block.state for block in list_blocks(world.platform, "cash")][2] == "open"
    assert third.id == list_blocks(world.platform, "cash")[2].id


def test_a_sold_ticket_is_rederived_from_the_block_key_and_its_position(world: World) -> None:
    world.stock("astro")
    player = world.player(1000)
    ticket, _ = bought(world, player, game_name="astro", mode="auto", sign="virgo")
    document = ticket.document
    block = list_blocks(world.platform, "astro")[0]
    key = world.platform.keys.get(block.key_id)
    game = find_game("astro", tiny_table("astro"))
    again = design_unit(game, unit_salt(key, document["position"]), ticket.prize_cents, "virgo")
    assert again == {k: document[k] for k in again}


def test_the_block_key_is_never_stored_in_the_database(world: World) -> None:
    world.stock("cash")
    block = list_blocks(world.platform, "cash")[0]
    key = world.platform.keys.get(block.key_id)
    with world.platform.uow.read() as repos:
        connection = repos.connection  # type: ignore[attr-defined]
        for table in ("blocks", "emissions", "block_chunks"):
            for row in connection.exec_driver_sql(f"SELECT * FROM {table}"):
                assert not any(key in bytes(value) for value in row if isinstance(value, bytes))
                assert key.hex() not in json.dumps([str(value) for value in row])


def test_a_replayed_idempotency_key_returns_the_same_ticket_and_debits_once(
    world: World,
) -> None:
    world.stock("cash")
    player = world.player(2000)
    first, replayed = tickets.buy(
        world.platform, player, game_name="cash", mode="play", idempotency_key="k-1"
    )
    again, replayed_again = tickets.buy(
        world.platform, player, game_name="cash", mode="play", idempotency_key="k-1"
    )
    assert (replayed, replayed_again) == (False, True)
    assert again.id == first.id
    assert world.balance(player) == 1500


def test_an_idempotency_key_reused_for_another_purchase_is_refused(world: World) -> None:
    world.stock("cash")
    player = world.player(2000)
    bought(world, player, game_name="cash", mode="play", idempotency_key="k")
    with pytest.raises(IdempotencyConflict):
        bought(world, player, game_name="cash", mode="auto", idempotency_key="k")
    assert world.balance(player) == 1500


def test_a_purchase_the_balance_cannot_pay_is_refused_and_debits_nothing(world: World) -> None:
    world.stock("cash")
    player = world.player(499)
    with pytest.raises(InsufficientBalance):
        bought(world, player, game_name="cash", mode="auto")
    assert world.balance(player) == 499


@pytest.mark.parametrize(
    ("game", "mode", "sign", "error"),
    [
        ("poker", "auto", None, UnknownGame),
        ("cash", "fast", None, InvalidInput),
        ("astro", "auto", None, InvalidChoice),
        ("astro", "auto", "ophiuchus", InvalidChoice),
        ("cash", "auto", "leo", InvalidChoice),
    ],
)
def test_a_malformed_purchase_is_refused_before_any_debit(
    world: World, game: str, mode: str, sign: str | None, error: type[Exception]
) -> None:
    world.stock("cash")
    player = world.player(1000)
    with pytest.raises(error):
        bought(world, player, game_name=game, mode=mode, sign=sign)
    assert world.balance(player) == 1000


def test_a_responsible_gaming_check_can_refuse_a_stake_before_any_debit(world: World) -> None:
    from grattage.errors import LimitReached

    world.stock("cash")
    player = world.player(1000)
    seen: list[tuple[int, str, int]] = []

    def one_ticket_a_day(repos: object, player_id: int, game: str, stake: int, now: object) -> None:
        seen.append((player_id, game, stake))
        if len(seen) > 1:
            raise LimitReached(
                "one ticket a day",
                limit="stake", limit_cents=stake, used_cents=stake, resets_at="2026-12-07T00:00:00Z",
            )  # fmt: skip

    world.platform.stake_checks.append(one_ticket_a_day)
    bought(world, player, game_name="cash", mode="auto")
    after_first = world.balance(player)
    with pytest.raises(LimitReached):
        bought(world, player, game_name="cash", mode="auto")
    assert world.balance(player) == after_first
    assert seen == [(player, "cash", 500)] * 2


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # several open blocks
def test_buyers_are_spread_over_the_open_blocks_of_a_game(world: World) -> None:
    world.stock("cash", blocks=2)
    open_block(world.platform, list_blocks(world.platform, "cash")[1].id)
    first, second = world.player(500), world.player(500)
    blocks = {
        bought(world, buyer, game_name="cash", mode="auto")[0].document["block"]
        for buyer in (first, second)
    }
    assert len(blocks) == 2


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # several open blocks
def test_the_open_blocks_a_sale_saw_are_looked_up_again_after_five_seconds_of_the_clock(
    world: World,
) -> None:
    world.stock("cash", blocks=2)
    first, second = list_blocks(world.platform, "cash")
    buyers = [world.player(1500) for _ in range(2)]
    buyer = next(player for player in buyers if player % 2 == 1)  # picks the 2nd of 2 blocks

    def block_sold_to_buyer() -> int:
        ticket, _ = bought(world, buyer, game_name="cash", mode="auto")
        assert ticket.document is not None  # an auto ticket is finished at once
        return int(ticket.document["block"])

    assert block_sold_to_buyer() == first.id  # the only open block, now remembered
    open_block(world.platform, second.id)
    world.clock.advance(4)
    assert block_sold_to_buyer() == first.id  # still as last seen
    world.clock.advance(2)
    assert block_sold_to_buyer() == second.id  # looked up again: the new block has its share
