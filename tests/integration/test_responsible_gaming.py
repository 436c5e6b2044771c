"""Responsible gaming: weekly limits enforced in the money's transaction, cooling-off before a
raise, self-exclusion, reality checks and the player's own history."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime

import pytest

from grattage.errors import InvalidInput, LimitReached, SelfExcluded
from grattage.service import accounts, reality_checks, responsible
from grattage.service.records import TicketView
from integration.test_concurrency import race
from support import PASSWORD, World, bought, person_named_after

DAY = 24 * 3600


def buy(world: World, player: int, mode: str = "auto") -> dict:
    ticket, _ = bought(world, player, game_name="cash", mode=mode)
    return ticket


def test_thirty_concurrent_purchases_at_a_stake_limit_never_exceed_it(world: World) -> None:
    world.stock("cash", blocks=2)
    player = world.player(30 * 500)
    responsible.set_limits(world.platform, player, stake_cents=7 * 500)
    results = race(30, lambda _: buy(world, player, mode="play"))
    sold = [r for r in results if isinstance(r, TicketView)]
    refused = [r for r in results if isinstance(r, LimitReached)]
    assert (len(sold), len(refused)) == (7, 23), Counter(type(r).__name__ for r in results)
    assert world.balance(player) == 23 * 500
    view = responsible.limits(world.platform, player).stake
    assert (view.spent_this_week_cents, view.remaining_cents) == (3500, 0)


def test_concurrent_deposits_at_a_deposit_limit_never_exceed_it(world: World) -> None:
    player = world.player()
    responsible.set_limits(world.platform, player, deposit_cents=5_000)
    results = race(20, lambda _: accounts.deposit(world.platform, player, 1_000))
    assert sum(isinstance(r, int) for r in results) == 5
    assert world.balance(player) == 5_000


def test_a_lowered_limit_applies_at_once(world: World) -> None:
    world.stock("cash")
    player = world.player(5_000)
    buy(world, player)
    responsible.set_limits(world.platform, player, stake_cents=600)
    with pytest.raises(LimitReached, match="weekly stake limit"):
        buy(world, player)


def test_a_raised_limit_is_not_in_force_before_its_cooling_off_ends(world: World) -> None:
    world.stock("cash")
    player = world.player(5_000)
    responsible.set_limits(world.platform, player, stake_cents=500)
    buy(world, player)
    view = responsible.set_limits(world.platform, player, stake_cents=2_000)
    assert view.stake.weekly_limit_cents == 500
    assert view.stake.pending.weekly_limit_cents == 2_000
    world.clock.advance(7 * DAY - 60)  # still the same week? no matter: check the limit itself
    assert responsible.limits(world.platform, player).stake.weekly_limit_cents == 500
    world.clock.advance(60)
    assert responsible.limits(world.platform, player).stake.weekly_limit_cents == 2_000
    assert responsible.limits(world.platform, player).stake.pending is None


def test_a_raise_refused_until_the_cooling_off_then_allowed(world: World) -> None:
    world.stock("cash")
    player = world.player(5_000)
    responsible.set_limits(world.platform, player, stake_cents=500)
    buy(world, player)
    responsible.set_limits(world.platform, player, stake_cents=5_000)
    with pytest.raises(LimitReached):
        buy(world, player)
    world.clock.advance(7 * DAY)
    buy(world, player)  # a new week and the raise in force


def test_a_week_of_limits_ends_on_monday_at_midnight_in_paris_not_in_utc(world: World) -> None:
    world.stock("cash")
    player = world.player(5_000)
    start = world.clock.now()
    assert start == datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # a Monday
    responsible.set_limits(world.platform, player, stake_cents=500)
    buy(world, player)
    sunday_before_midnight_in_paris = datetime(2026, 12, 6, 22, 59, 59, tzinfo=UTC)  # CET
    world.clock.advance((sunday_before_midnight_in_paris - start).total_seconds())
    with pytest.raises(LimitReached) as refused:
        buy(world, player)
    assert refused.value.details["resets_at"] == "2026-12-06T23:00:00Z"
    world.clock.advance(1)  # Monday 00:00 in Paris, still Sunday in UTC: a new week
    buy(world, player)
    assert responsible.limits(world.platform, player).week_start == date(2026, 12, 7)


def test_limits_beyond_the_maximum_are_refused(world: World) -> None:
    player = world.player()
    with pytest.raises(InvalidInput, match="weekly stake limit"):
        responsible.set_limits(world.platform, player, stake_cents=10**12)
    with pytest.raises(InvalidInput):
        accounts.register(
            world.platform,
            "x@example.org",
            PASSWORD,
            date(1990, 1, 1),
            **person_named_after("x@example.org"),
            deposit_limit_cents=0,
        )


def test_limits_chosen_at_sign_up_are_in_force(world: World) -> None:
    player = accounts.register(
        world.platform,
        "s@example.org",
        PASSWORD,
        date(1990, 1, 1),
        **person_named_after("s@example.org"),
        deposit_limit_cents=2_000,
    )
    accounts.deposit(world.platform, player, 2_000)
    with pytest.raises(LimitReached, match="weekly deposit limit"):
        accounts.deposit(world.platform, player, 1)


def test_self_exclusion_blocks_the_next_purchase_deposit_and_log_in(world: World) -> None:
    world.stock("cash")
    player = accounts.register(
        world.platform, "ex@example.org", PASSWORD, date(1990, 1, 1), **person_named_after("ex")
    )
    accounts.deposit(world.platform, player, 2_000)
    buy(world, player)
    responsible.exclude(world.platform, player, "7d")
    with pytest.raises(SelfExcluded):
        buy(world, player)
    with pytest.raises(SelfExcluded):
        accounts.deposit(world.platform, player, 100)
    with pytest.raises(SelfExcluded):
        accounts.log_in(world.platform, "ex@example.org", PASSWORD)
    world.clock.advance(7 * DAY + 1)
    accounts.log_in(world.platform, "ex@example.org", PASSWORD)
    buy(world, player)


def test_a_self_excluded_player_may_lower_a_limit_but_not_ask_for_a_raise(world: World) -> None:
    player = world.player()
    responsible.set_limits(world.platform, player, stake_cents=5_000)
    responsible.exclude(world.platform, player, "7d")
    with pytest.raises(SelfExcluded):
        responsible.set_limits(world.platform, player, stake_cents=90_000)
    assert responsible.limits(world.platform, player).stake.pending is None
    lowered = responsible.set_limits(world.platform, player, stake_cents=1_000)
    assert lowered.stake.weekly_limit_cents == 1_000


def test_a_self_exclusion_cannot_be_shortened(world: World) -> None:
    player = world.player()
    responsible.exclude(world.platform, player, "30d")
    view = responsible.exclude(world.platform, player, "7d")
    assert view.until == datetime(2026, 12, 30, 12, tzinfo=UTC)
    assert responsible.exclude(world.platform, player, "permanent").permanent
    world.clock.advance(400 * DAY)
    with pytest.raises(SelfExcluded, match="permanently"):
        accounts.deposit(world.platform, player, 100)


def test_a_reality_check_comes_every_n_minutes_with_time_played_and_net_spend(
    world: World,
) -> None:
    world.stock("cash")
    player = accounts.register(
        world.platform, "rc@example.org", PASSWORD, date(1990, 1, 1), **person_named_after("rc")
    )
    accounts.deposit(world.platform, player, 2_000)
    session = accounts.log_in(world.platform, "rc@example.org", PASSWORD)
    caller = accounts.authenticate(world.platform, session.token)
    ticket = buy(world, player)
    assert reality_checks.reality_check(world.platform, caller) is None
    world.clock.advance(60 * 60)
    check = reality_checks.reality_check(world.platform, caller)
    assert check is not None
    assert check.minutes_played == 60
    assert check.net_spend_cents == 500 - ticket.prize_cents
    assert reality_checks.reality_check(world.platform, caller) is None


def test_players_see_their_history_of_the_last_three_months(world: World) -> None:
    world.stock("cash")
    player = world.player(3_000)
    buy(world, player)
    world.clock.advance(80 * DAY)
    buy(world, player)
    seen = responsible.activity(world.platform, player)
    assert seen.totals.deposits_cents == 3_000
    assert seen.totals.tickets == 2
    assert len(seen.days) == 2


def test_the_history_counts_days_from_midnight_in_paris(world: World) -> None:
    start = world.clock.now()
    player = world.player()
    late_sunday_in_utc = datetime(2026, 12, 6, 23, 30, tzinfo=UTC)  # Monday 00:30 in Paris
    world.clock.advance((late_sunday_in_utc - start).total_seconds())
    accounts.deposit(world.platform, player, 1_000)
    seen = responsible.activity(world.platform, player, days=1)
    assert (seen.since, seen.until) == (date(2026, 12, 7), date(2026, 12, 7))
    assert [(day.day, day.deposits_cents) for day in seen.days] == [(date(2026, 12, 7), 1_000)]
