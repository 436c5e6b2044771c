"""Scenario 2, races: real threads released together against real databases."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from grattage.adapters.tables import movements
from grattage.adapters.tables import tickets as tickets_table
from grattage.errors import InsufficientBalance, LimitReached, SoldOut
from grattage.service import tickets
from grattage.service.emissions import list_blocks
from grattage.service.ports import Repositories
from grattage.service.records import TicketView
from support import World

from .harness import kind, record, scaled


def race(count: int, attempt: Callable[[int], Any]) -> list[Any]:
    """``attempt(i)`` on ``count`` threads released by one barrier; errors are returned."""
    start = threading.Barrier(count)

    def run(index: int) -> Any:
        start.wait()
        try:
            return attempt(index)
        except Exception as error:  # asserted on by the test
            return error

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def kinds(results: list[Any]) -> Counter[str]:
    return Counter(type(r).__name__ for r in results)


def test_double_spend_a_balance_for_one_stake_raced_by_100_buys_sells_one(world: World) -> None:
    world.stock("cash", blocks=2)
    rounds = scaled(1, 5)
    for _ in range(rounds):
        player = world.player(500)
        results = race(
            100,
            lambda _, p=player: tickets.buy(world.platform, p, game_name="cash", mode="play"),
        )
        sold = [r for r in results if isinstance(r, tuple)]
        refused = [r for r in results if isinstance(r, InsufficientBalance)]
        assert (len(sold), len(refused)) == (1, 99), kinds(results)
        assert world.balance(player) == 0
    record(f"race double spend [{kind(world)}]", rounds=rounds, buys_per_round=100, sold=1)


def test_the_last_unit_raced_by_100_buyers_is_sold_once(world: World) -> None:
    world.stock("astro")
    size = list_blocks(world.platform, "astro")[0].size
    seller = world.player((size - 1) * 200)
    for _ in range(size - 1):
        tickets.buy(world.platform, seller, game_name="astro", mode="auto", sign="leo")
    buyers = [world.player(200) for _ in range(100)]
    results = race(
        100,
        lambda i: tickets.buy(
            world.platform, buyers[i], game_name="astro", mode="play", sign="leo"
        ),
    )
    sold = [r for r in results if isinstance(r, tuple)]
    assert len(sold) == 1, kinds(results)
    assert all(isinstance(r, SoldOut) for r in results if not isinstance(r, tuple)), kinds(results)
    assert sum(world.balance(b) for b in buyers) == 99 * 200
    block = list_blocks(world.platform, "astro")[0]
    assert (block.sold, block.state) == (size, "exhausted")
    record(f"race last unit [{kind(world)}]", buyers=100, sold=1)


def _prize_movements(world: World, ticket_id: int) -> int:
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        return int(
            db.execute(
                select(func.count())
                .select_from(movements)
                .where(movements.c.kind == "prize", movements.c.ticket_id == ticket_id)
            ).scalar_one()
        )


def test_concurrent_reveals_and_finishes_of_one_ticket_credit_it_once(world: World) -> None:
    world.stock("cash")
    rounds = scaled(4, 20)
    player = world.player(rounds * 500)
    credited_once = 0
    for _ in range(rounds):
        ticket, _ = tickets.buy(world.platform, player, game_name="cash", mode="play")
        zone = ticket.zones[0]
        same_zone = race(20, lambda _: tickets.reveal(world.platform, player, ticket.id, [zone]))  # noqa: B023 (run at once)
        assert all(isinstance(r, TicketView) and zone in r.revealed for r in same_zone), kinds(
            same_zone
        )
        before = world.balance(player)
        world.clock.advance(60)  # overdue: the sweeper and lazy settling race the player

        def finish(i: int) -> Any:
            if i % 3 == 0:
                return tickets.sweep(world.platform)
            if i % 3 == 1:
                return tickets.get_ticket(world.platform, player, ticket.id)  # noqa: B023
            return tickets.reveal(world.platform, player, ticket.id, reveal_all=True)  # noqa: B023

        results = race(30, finish)
        assert not [r for r in results if isinstance(r, Exception)], kinds(results)
        final = tickets.get_ticket(world.platform, player, ticket.id)
        assert final.state == "finished"
        assert world.balance(player) == before + final.prize_cents
        expected = 1 if final.prize_cents else 0
        assert _prize_movements(world, ticket.id) == expected
        credited_once += 1
    record(
        f"race reveals and finishes [{kind(world)}]",
        tickets=rounds,
        same_zone_reveals=20 * rounds,
        concurrent_finishers=30 * rounds,
        credited_exactly_once=credited_once,
    )


DAILY_STAKE_LIMIT = 5 * 500


def daily_stake_limit(
    repos: Repositories, player_id: int, game: str, stake: int, now: datetime
) -> None:
    """An operator's daily spending limit, as a responsible-gaming hook would read it."""
    db = repos.connection  # type: ignore[attr-defined]
    spent = db.execute(
        select(func.coalesce(func.sum(tickets_table.c.stake_cents), 0)).where(
            tickets_table.c.player_id == player_id,
            tickets_table.c.created_at > now - timedelta(days=1),
        )
    ).scalar_one()
    time.sleep(0.002)  # widen the window between reading and debiting
    if spent + stake > DAILY_STAKE_LIMIT:
        raise LimitReached(f"the daily limit of {DAILY_STAKE_LIMIT} cents would be exceeded")


def test_a_limit_raced_at_its_edge_is_never_exceeded(world: World) -> None:
    world.stock("cash", blocks=3)
    world.platform.stake_checks.append(daily_stake_limit)
    player = world.player(100 * 500)
    tickets.buy(world.platform, player, game_name="cash", mode="auto")  # 4 stakes left
    results = race(50, lambda _: tickets.buy(world.platform, player, game_name="cash", mode="auto"))
    sold = [r for r in results if isinstance(r, tuple)]
    assert len(sold) == 4, kinds(results)
    assert all(isinstance(r, LimitReached) for r in results if not isinstance(r, tuple))
    record(f"race limit at its edge [{kind(world)}]", buys=50, limit_left=4, sold=len(sold))
