"""Responsible gaming: weekly deposit and stake limits, self-exclusion, activity (the reality
checks are :mod:`grattage.service.reality_checks`).

Limits run over calendar weeks in the operator's time zone (``operator_time_zone``, Paris:
Monday 00:00 to the next Monday, as a French player counts them). Each purchase and each
deposit locks the player's row of ``player_limits`` (after their account row), checks this
week's counter against the limit in force and raises the counter, all in the transaction that
moves the money: two concurrent requests cannot both pass a limit, and a refused or failed
purchase leaves the counter as it was. Lowering a limit applies at once; raising one only
after the cooling-off period (a pending raise with its effective time). A self-exclusion
blocks purchases, deposits and log-ins at once and cannot be shortened; it applies to the
person and the mailbox behind the account, so to their other accounts and to any new one
(:mod:`grattage.service.person_exclusion`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from grattage.errors import InvalidInput, LimitReached, SelfExcluded
from grattage.games.money import format_euros
from grattage.service.context import Platform, Policy, StakeCheck
from grattage.service.model import LimitsRow
from grattage.service.person_exclusion import (
    exclude_identity,
    person_key_of,
    refuse_if_listed,
)
from grattage.service.ports import Repositories
from grattage.service.records import (
    Activity,
    ActivityDay,
    ActivityTotals,
    Exclusion,
    Limits,
    LimitView,
    PendingLimit,
)
from grattage.service.views import iso

LimitKind = Literal["deposit", "stake"]
EXCLUSION_PERIODS: dict[str, int | None] = {"7d": 7, "30d": 30, "6m": 183, "permanent": None}
"""Self-exclusion periods in days (six months counted as 183 days); None: for good."""
HISTORY_DAYS = 92
"""How far back a player's activity goes by default: at least three months."""


def week_of(moment: datetime, time_zone: str) -> date:
    """The Monday (a date in ``time_zone``) of the week ``moment`` falls in."""
    day = moment.astimezone(ZoneInfo(time_zone)).date()
    return day - timedelta(days=day.weekday())


def week_end(week: date, time_zone: str) -> datetime:
    """When the week starting on Monday ``week`` ends: the next Monday 00:00 in ``time_zone``
    (23:00 or 22:00 UTC on the Sunday in Paris), in UTC."""
    next_monday = datetime.combine(week + timedelta(days=7), time(), tzinfo=ZoneInfo(time_zone))
    return next_monday.astimezone(UTC)


@dataclass(frozen=True)
class Limit:
    kind: LimitKind
    in_force_cents: int
    pending_cents: int | None
    pending_at: datetime | None


def _limit(row: LimitsRow | None, kind: LimitKind, policy: Policy, now: datetime) -> Limit:
    default = (
        policy.deposit_limit_default_cents
        if kind == "deposit"
        else policy.stake_limit_default_cents
    )
    if row is None:
        return Limit(kind, default, None, None)
    current = getattr(row, f"{kind}_limit_cents")
    pending = getattr(row, f"{kind}_pending_cents")
    pending_at = getattr(row, f"{kind}_pending_at")
    in_force = default if current is None else int(current)
    if pending is not None and pending_at is not None and pending_at <= now:
        return Limit(kind, int(pending), None, None)
    return Limit(kind, in_force, pending, pending_at)


def _maximum(policy: Policy, kind: LimitKind) -> int:
    return policy.deposit_limit_max_cents if kind == "deposit" else policy.stake_limit_max_cents


def _check_value(policy: Policy, kind: LimitKind, cents: int) -> int:
    maximum = _maximum(policy, kind)
    if not isinstance(cents, int) or not 1 <= cents <= maximum:
        raise InvalidInput(
            f"a weekly {kind} limit is 1 to {maximum} cents ({format_euros(maximum)}), "
            f"got {cents!r}"
        )
    return cents


def excluded_until(row: LimitsRow | None, now: datetime) -> datetime | Literal["forever"] | None:
    if row is None:
        return None
    if row.excluded_forever:
        return "forever"
    if row.excluded_until is not None and row.excluded_until > now:
        return row.excluded_until
    return None


def refuse_if_excluded(row: LimitsRow | None, now: datetime) -> None:
    until = excluded_until(row, now)
    if until == "forever":
        raise SelfExcluded("you excluded yourself from play permanently")
    if isinstance(until, datetime):
        raise SelfExcluded(f"you excluded yourself from play until {iso(until)}", until=iso(until))


def _spend(row: LimitsRow, now: datetime, time_zone: str) -> tuple[date, int, int]:
    """(this week, deposits so far this week, stakes so far this week)."""
    week = week_of(now, time_zone)
    if row.week_start != week:
        return week, 0, 0
    return week, row.week_deposits_cents, row.week_stakes_cents


def new_player(
    repos: Repositories,
    policy: Policy,
    player_id: int,
    deposit_limit_cents: int | None,
    stake_limit_cents: int | None,
) -> None:
    """Store the limits a player chose at sign-up (None: the default)."""
    repos.limits.create(
        player_id,
        None
        if deposit_limit_cents is None
        else _check_value(policy, "deposit", deposit_limit_cents),
        None if stake_limit_cents is None else _check_value(policy, "stake", stake_limit_cents),
    )


def check_limits_at_sign_up(
    policy: Policy, deposit_limit_cents: int | None, stake_limit_cents: int | None
) -> None:
    if deposit_limit_cents is not None:
        _check_value(policy, "deposit", deposit_limit_cents)
    if stake_limit_cents is not None:
        _check_value(policy, "stake", stake_limit_cents)


def check_stake(
    repos: Repositories,
    policy: Policy,
    player_id: int,
    game: str,
    stake_cents: int,
    now: datetime,
) -> None:
    """The purchase's check, in its transaction: exclusion, then the weekly stake limit."""
    what = f"this {format_euros(stake_cents)} {game} ticket"
    _count_in_week(repos, policy, player_id, "stake", stake_cents, now, what)


def stake_check_for(policy: Policy) -> StakeCheck:
    """The platform's :data:`StakeCheck`, bound to its policy (defaults of its settings)."""

    def check(
        repos: Repositories, player_id: int, game: str, stake_cents: int, now: datetime
    ) -> None:
        check_stake(repos, policy, player_id, game, stake_cents, now)

    return check


def check_deposit(
    repos: Repositories, policy: Policy, player_id: int, amount_cents: int, now: datetime
) -> None:
    """The deposit's check, in its transaction: exclusion, then the weekly deposit limit."""
    what = f"this deposit of {format_euros(amount_cents)}"
    _count_in_week(repos, policy, player_id, "deposit", amount_cents, now, what)


def _count_in_week(
    repos: Repositories,
    policy: Policy,
    player_id: int,
    kind: LimitKind,
    amount_cents: int,
    now: datetime,
    what: str,
) -> None:
    """Refuse an excluded player, then count ``amount_cents`` into this week's deposits or
    stakes; raise :class:`LimitReached` (nothing counted) if ``what`` would pass the limit."""
    row = repos.limits.lock(player_id)
    refuse_if_excluded(row, now)
    limit = _limit(row, kind, policy, now).in_force_cents
    week, deposits, stakes = _spend(row, now, policy.operator_time_zone)
    spent = deposits if kind == "deposit" else stakes
    if spent + amount_cents > limit:
        # The next Monday 00:00 in the operator's zone, in UTC as iso() writes it.
        resets = week_end(week, policy.operator_time_zone).isoformat().replace("+00:00", "Z")
        raise LimitReached(
            f"{what} would pass your weekly {kind} limit of {format_euros(limit)} "
            f"({format_euros(spent)} this week, until {resets})",
            limit=kind, limit_cents=limit, used_cents=spent, resets_at=resets,
        )  # fmt: skip
    if kind == "deposit":
        deposits += amount_cents
    else:
        stakes += amount_cents
    repos.limits.set_counters(player_id, week, deposits, stakes)


def check_log_in(platform: Platform, player_id: int) -> None:
    """Refuse the log-in of a self-excluded account (the exclusion of its person or mailbox
    reached it) or of a person the national register lists."""
    with platform.uow.read() as repos:
        row = repos.limits.get(player_id)
        person_key = person_key_of(repos, player_id)
    refuse_if_excluded(row, platform.clock.now())
    refuse_if_listed(platform, person_key)


def _limit_view(row: LimitsRow | None, kind: LimitKind, policy: Policy, now: datetime) -> LimitView:
    limit = _limit(row, kind, policy, now)
    spent = 0
    if row is not None:
        _week, deposits, stakes = _spend(row, now, policy.operator_time_zone)
        spent = deposits if kind == "deposit" else stakes
    pending = None
    if limit.pending_cents is not None and limit.pending_at is not None:
        pending = PendingLimit(limit.pending_cents, limit.pending_at)
    return LimitView(
        weekly_limit_cents=limit.in_force_cents,
        spent_this_week_cents=spent,
        remaining_cents=max(0, limit.in_force_cents - spent),
        max_cents=_maximum(policy, kind),
        pending=pending,
    )


def _exclusion_view(row: LimitsRow | None, now: datetime) -> Exclusion:
    until = excluded_until(row, now)
    return Exclusion(
        excluded=until is not None,
        permanent=until == "forever",
        until=until if isinstance(until, datetime) else None,
    )


def limits(platform: Platform, player_id: int) -> Limits:
    now = platform.clock.now()
    policy = platform.policy
    with platform.uow.read() as repos:
        row = repos.limits.get(player_id)
    return Limits(
        week_start=week_of(now, policy.operator_time_zone),
        deposit=_limit_view(row, "deposit", policy, now),
        stake=_limit_view(row, "stake", policy, now),
        cooling_off_seconds=policy.limit_cooling_off_seconds,
        exclusion=_exclusion_view(row, now),
    )


def exclusion(platform: Platform, player_id: int) -> Exclusion:
    return limits(platform, player_id).exclusion


def set_limits(
    platform: Platform,
    player_id: int,
    *,
    deposit_cents: int | None = None,
    stake_cents: int | None = None,
) -> Limits:
    """Lower a limit at once, or ask for a raise that comes into force after the cooling-off."""
    policy = platform.policy
    wanted: dict[LimitKind, int] = {}
    if deposit_cents is not None:
        wanted["deposit"] = _check_value(policy, "deposit", deposit_cents)
    if stake_cents is not None:
        wanted["stake"] = _check_value(policy, "stake", stake_cents)
    if not wanted:
        raise InvalidInput("give deposit_weekly_cents, stake_weekly_cents or both")
    now = platform.clock.now()
    with platform.uow.write() as repos:
        row = repos.limits.lock(player_id)
        values: dict[str, Any] = {}
        for kind, cents in wanted.items():
            current = _limit(row, kind, policy, now)
            if cents <= current.in_force_cents:
                values |= {f"{kind}_limit_cents": cents, f"{kind}_pending_cents": None}
                values[f"{kind}_pending_at"] = None
            else:
                # Raised during a self-exclusion, it would be in force on the player's return.
                refuse_if_excluded(row, now)
                effective = now + timedelta(seconds=policy.limit_cooling_off_seconds)
                values |= {
                    f"{kind}_limit_cents": current.in_force_cents,
                    f"{kind}_pending_cents": cents,
                    f"{kind}_pending_at": effective,
                }
        repos.limits.update(player_id, **values)
    return limits(platform, player_id)


def exclude(platform: Platform, player_id: int, period: str) -> Exclusion:
    """Self-exclusion from now of the player's person and mailbox, so of all their accounts
    and of any new one; a shorter one never cuts short one in force. The account's sessions
    end in the same transaction: an excluded player is logged out, as a log-in is refused."""
    if period not in EXCLUSION_PERIODS:
        raise InvalidInput(f"a self-exclusion lasts {', '.join(EXCLUSION_PERIODS)}, got {period!r}")
    now = platform.clock.now()
    days = EXCLUSION_PERIODS[period]
    until = None if days is None else now + timedelta(days=days)
    with platform.uow.write() as repos:
        exclude_identity(repos, player_id, until)  # its rows first: see person_exclusion
        row = repos.limits.lock(player_id)
        if until is None:
            repos.limits.update(player_id, excluded_forever=True)
        elif not row.excluded_forever and (
            row.excluded_until is None or row.excluded_until < until
        ):
            repos.limits.update(player_id, excluded_until=until)
        # What the log-in now refuses, an open session must not allow: every session of the
        # account ends with the exclusion (the page shows the confirmation from this answer).
        repos.player_directory.end_sessions(player_id)
    return exclusion(platform, player_id)


def activity(platform: Platform, player_id: int, days: int = HISTORY_DAYS) -> Activity:
    """The player's money, day by day, over the last ``days`` days (from the ledger); days
    as the player lives them, in the operator's time zone (Paris), as the weeks of the limits."""
    if not 1 <= days <= 366:
        raise InvalidInput(f"days is 1 to 366, got {days!r}")
    zone = ZoneInfo(platform.policy.operator_time_zone)
    today = platform.clock.now().astimezone(zone).date()
    first_day = today - timedelta(days=days - 1)
    since = datetime.combine(first_day, time(), tzinfo=zone).astimezone(UTC)
    with platform.uow.read() as repos:
        found = repos.limits.movements_since(player_id, since)
    by_day: dict[date, Counter[str]] = defaultdict(Counter)
    for kind, moment, amount in found:
        day = by_day[moment.astimezone(zone).date()]
        if kind == "deposit":
            day["deposits_cents"] += amount
        elif kind == "stake":
            day["stakes_cents"] += -amount
            day["tickets"] += 1
        else:
            day["prizes_cents"] += amount
    rows = tuple(
        ActivityDay(
            day=day,
            deposits_cents=sums["deposits_cents"],
            stakes_cents=sums["stakes_cents"],
            prizes_cents=sums["prizes_cents"],
            tickets=sums["tickets"],
            net_spend_cents=sums["stakes_cents"] - sums["prizes_cents"],
        )
        for day, sums in sorted(by_day.items(), reverse=True)
    )
    totals = ActivityTotals(
        deposits_cents=sum(row.deposits_cents for row in rows),
        stakes_cents=sum(row.stakes_cents for row in rows),
        prizes_cents=sum(row.prizes_cents for row in rows),
        tickets=sum(row.tickets for row in rows),
        net_spend_cents=sum(row.net_spend_cents for row in rows),
    )
    return Activity(since=first_day, until=today, days=rows, totals=totals)
