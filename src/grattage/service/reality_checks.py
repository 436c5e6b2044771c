"""Reality checks: every ``reality_check_minutes`` of a session, the player is shown the time
played and the net spend of the session, once (the numbers here: the pages word them).

A check is due ``reality_check_minutes`` after the session's start, then after each check
given; the player's row of ``player_limits`` records the last one (docs/api.md,
``RealityCheck``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from grattage.service.context import Platform
from grattage.service.model import Caller
from grattage.service.records import RealityCheck


def _due(started: datetime, checked: datetime | None, every: timedelta, now: datetime) -> bool:
    return now >= (started if checked is None else max(started, checked)) + every


def next_reality_check_at(platform: Platform, caller: Caller, given_now: bool) -> datetime:
    """When the session's next reality check is due, so that a page left open asks for it
    then (``given_now``: one was just given, after what the caller's session read)."""
    every = timedelta(minutes=platform.policy.reality_check_minutes)
    if given_now:
        return platform.clock.now() + every
    checked = caller.reality_checked_at
    return max(caller.session_started_at, checked or caller.session_started_at) + every


def reality_check(platform: Platform, caller: Caller) -> RealityCheck | None:
    """Every ``reality_check_minutes`` of a session: time played and net spend, once (the
    numbers: the pages word them).

    The caller carries what authenticating the session read, its start and the last check:
    on almost every request they show that no check is due, and that costs no query. The
    last check only moves forward, so an old reading can call a check due that is not (another
    request gave it meanwhile) but never the reverse; the player's row, locked, decides.
    """
    now = platform.clock.now()
    every = timedelta(minutes=platform.policy.reality_check_minutes)
    if not _due(caller.session_started_at, caller.reality_checked_at, every, now):
        return None
    player_id = caller.player_id
    with platform.uow.write() as repos:
        started = repos.limits.session_started(caller.session_id)
        row = repos.limits.lock(player_id)
        if started is None or not _due(started, row.reality_checked_at, every, now):
            return None
        repos.limits.update(player_id, reality_checked_at=now)
        found = repos.limits.movements_since(player_id, started)
    stakes = sum(-amount for kind, _, amount in found if kind == "stake")
    prizes = sum(amount for kind, _, amount in found if kind == "prize")
    return RealityCheck(
        minutes_played=int((now - started).total_seconds() // 60),
        interval_minutes=platform.policy.reality_check_minutes,
        stakes_cents=stakes,
        prizes_cents=prizes,
        net_spend_cents=stakes - prizes,
    )
