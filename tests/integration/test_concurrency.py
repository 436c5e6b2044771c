"""Real threads against real databases: balances, last units and replays under contention."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from grattage.errors import InsufficientBalance, SoldOut, Unavailable
from grattage.service import tickets
from grattage.service.emissions import list_blocks
from grattage.service.scratch_activity import report_activity
from support import World, bought


def race(count: int, attempt: Callable[[int], Any]) -> list[Any]:
    """Run ``attempt(i)`` for i in range(count) on as many threads, released together."""
    start = threading.Barrier(count)

    def run(index: int) -> Any:
        start.wait()
        try:
            return attempt(index)
        except Exception as error:  # collected and asserted on by the test
            return error

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def retried(attempt: Callable[[], Any], times: int = 20) -> Any:
    """``attempt()`` again while it answers Unavailable, as a client does: on PostgreSQL, 50
    buyers queued on one wallet row can outwait the lock timeout on a slow machine, and such a
    refusal debits nothing (its transaction is rolled back)."""
    for _ in range(times - 1):
        try:
            return attempt()
        except Unavailable:
            continue
    return attempt()


def test_fifty_simultaneous_purchases_on_a_balance_for_ten_sell_exactly_ten(
    world: World,
) -> None:
    world.stock("cash", blocks=2)
    player = world.player(10 * 500)
    results = race(
        50, lambda _: retried(lambda: bought(world, player, game_name="cash", mode="play"))
    )
    sold = [result for result in results if isinstance(result, tuple)]
    refused = [result for result in results if isinstance(result, InsufficientBalance)]
    assert (len(sold), len(refused)) == (10, 40), Counter(type(r).__name__ for r in results)
    assert world.balance(player) == 0
    assert len({ticket.id for ticket, _ in sold}) == 10


def test_the_last_unit_raced_by_twenty_buyers_is_sold_once(world: World) -> None:
    world.stock("astro")
    size = list_blocks(world.platform, "astro")[0].size
    seller = world.player((size - 1) * 200)
    for _ in range(size - 1):
        bought(world, seller, game_name="astro", mode="auto", sign="leo")
    buyers = [world.player(200) for _ in range(20)]
    results = race(
        20,
        lambda i: retried(
            lambda: tickets.buy(
                world.platform, buyers[i], game_name="astro", mode="auto", sign="aries"
            )
        ),
    )
    sold = [result for result in results if isinstance(result, tuple)]
    assert len(sold) == 1
    assert all(isinstance(result, SoldOut) for result in results if not isinstance(result, tuple))
    world.draw()  # the last unit's sale is drawn like any other
    winner = sold[0][0]
    won = tickets.get_ticket(world.platform, winner_of(buyers, results), winner.id).prize_cents
    assert sum(world.balance(buyer) for buyer in buyers) == 19 * 200 + (won or 0)
    assert list_blocks(world.platform, "astro")[0].state == "exhausted"


def winner_of(buyers: list[int], results: list[Any]) -> int:
    return next(
        buyer for buyer, result in zip(buyers, results, strict=True) if isinstance(result, tuple)
    )


def test_a_key_replayed_concurrently_sells_one_ticket(world: World) -> None:
    world.stock("cash")
    player = world.player(5000)
    results = race(
        10,
        lambda _: retried(
            lambda: tickets.buy(
                world.platform, player, game_name="cash", mode="auto", idempotency_key="same"
            )
        ),
    )
    assert {result[0].id for result in results} == {results[0][0].id}
    assert sorted(replayed for _, replayed in results) == [False] + [True] * 9


def test_a_ticket_finished_at_once_by_its_player_and_the_sweeper_is_credited_once(
    world: World,
) -> None:
    world.stock("cash")
    player = world.player(20 * 500)
    sold = [bought(world, player, game_name="cash", mode="play")[0] for _ in range(20)]
    world.clock.advance(60)

    def finish(index: int) -> Any:
        if index % 2:
            return tickets.sweep(world.platform)
        return tickets.reveal(world.platform, player, sold[index // 2].id, reveal_all=True)

    race(20, finish)
    # The books reconcile at teardown: one prize movement per winning ticket.
    won = sum(tickets.get_ticket(world.platform, player, ticket.id).prize_cents for ticket in sold)
    assert world.balance(player) == won


class TickingClock:
    """Time as threads see it: each reading a millisecond after the one before, whichever
    thread reads; each thread's last reading is kept (the moment its last call went by)."""

    def __init__(self, start: datetime) -> None:
        self._now = start
        self._lock = threading.Lock()
        self._seen = threading.local()

    def now(self) -> datetime:
        with self._lock:
            self._now += timedelta(milliseconds=1)
            moment = self._now
        self._seen.moment = moment
        return moment

    def last_seen(self) -> datetime:
        moment: datetime = self._seen.moment
        return moment


def test_scratching_reports_racing_the_sweeper_at_the_deadline_keep_what_they_moved(
    world: World,
) -> None:
    """Every ticket reaches its inactivity deadline while its player's report and four
    sweepers race: a ticket whose report was stored is never finished as idle, one finished
    first is never moved by a report, and the prize is credited once (books at teardown)."""
    world.stock("cash")
    player = world.player(24 * 500)
    sold = [bought(world, player, game_name="cash", mode="play")[0].id for _ in range(24)]
    delay = world.platform.policy.inactivity_seconds
    clock = TickingClock(world.clock.now() + timedelta(seconds=delay, milliseconds=-12))
    world.platform.clock = clock
    stored_at: dict[int, datetime] = {}

    def play(index: int) -> Any:
        if index >= len(sold):
            for _ in range(15):
                retried(lambda: tickets.sweep(world.platform))
            return None
        for _ in range(15):
            if retried(lambda: report_activity(world.platform, player, sold[index])):
                stored_at[sold[index]] = clock.last_seen()
                return None
        return None

    race(len(sold) + 4, play)
    tickets.sweep(world.platform)
    with world.platform.uow.read() as repos:
        after = {ticket_id: repos.tickets.get(ticket_id) for ticket_id in sold}
    for ticket_id, ticket in after.items():
        assert ticket is not None
        if ticket_id in stored_at:  # kept: its delay runs from the report, 10 s of ticks away
            assert (ticket.state, ticket.last_action_at) == ("playing", stored_at[ticket_id])
        else:  # finished first, or reported too late: finished as idle, moved by nothing
            assert (ticket.state, ticket.finished_by) == ("finished", "inactivity")
            assert ticket.last_action_at == ticket.finished_at
