"""Finishing tickets: a prize is credited by the one transaction that moves a ticket from
``playing`` to ``finished`` (a conditional update), so exactly once — whether the player
revealed it, the inactivity delay or the abandon delay ran out (lazily, on the player's next
access, or by the sweeper). Both delays run from the ticket's last action: a reveal, or the
page's report that the player is scratching (:mod:`grattage.service.scratch_activity`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from grattage.games import game_names
from grattage.games.registry import game_type
from grattage.service.context import Platform
from grattage.service.model import HOUSE_PRIZES, FinishedBy, Leg, Movement, Overdue, Ticket
from grattage.service.ports import Repositories
from grattage.service.views import stored_revealed


def finish(
    platform: Platform,
    repos: Repositories,
    ticket: Ticket,
    finished_by: FinishedBy,
    now: datetime,
) -> bool:
    """Finish a playing ticket and credit its prize; False if it was already finished."""
    game = platform.loaded_block(repos, ticket.block_id).game
    if not repos.tickets.finish(ticket.id, stored_revealed(game, game.zones), now, finished_by):
        return False
    if ticket.prize_cents:
        account_id = repos.ledger.player_account_id(ticket.player_id)
        house = repos.ledger.house_account(HOUSE_PRIZES)
        legs = [Leg(account_id, ticket.prize_cents), Leg(house, -ticket.prize_cents)]
        balances = repos.ledger.post(Movement("prize", legs, now, ticket.player_id, ticket.id))
        repos.tickets.set_balance_after(ticket.id, balances[account_id])
    return True


def overdue_at(platform: Platform, now: datetime) -> Overdue:
    """Which playing tickets are overdue at ``now``, by the platform's delays."""
    policy = platform.policy
    return Overdue(
        inactivity_cutoff=now - timedelta(seconds=policy.inactivity_seconds),
        abandon_cutoff=now - timedelta(seconds=policy.abandon_seconds),
        inactivity_games=_revealing_games(),
    )


def _revealing_games() -> tuple[str, ...]:
    """The games whose rules reveal an idle ticket after the inactivity delay (Cash, 4.3)."""
    return tuple(name for name in game_names() if game_type(name).reveals_after_inactivity)


def _reason(ticket: Ticket) -> FinishedBy:
    return "inactivity" if game_type(ticket.game).reveals_after_inactivity else "abandon"


def finish_due(
    platform: Platform, repos: Repositories, now: datetime, player_id: int | None = None
) -> int:
    overdue = overdue_at(platform, now)
    due = repos.tickets.due(overdue, player_id)
    # Lock every ticket before any account: the same order as a reveal and the sweeper
    # (ticket, then account), so that they cannot deadlock on PostgreSQL. Whether each is still
    # overdue is asked again of the locked row: an activity report may have committed since.
    locked = [repos.tickets.get(ticket_id, for_update=True) for ticket_id in due]
    finished = 0
    for ticket in locked:
        if ticket is not None and overdue.holds_for(ticket):
            finished += finish(platform, repos, ticket, _reason(ticket), now)
    return finished


def settle_due(platform: Platform, player_id: int) -> int:
    """Lazily finish the player's own overdue tickets (called on every access)."""
    now = platform.clock.now()
    with platform.uow.read() as repos:
        due = repos.tickets.due(overdue_at(platform, now), player_id)
    if not due:
        return 0
    with platform.uow.write() as repos:
        return finish_due(platform, repos, now, player_id)


def sweep(platform: Platform, batch: int = 200) -> int:
    """Finish every overdue ticket of every player; how many were finished."""
    total = 0
    while True:
        now = platform.clock.now()
        overdue = overdue_at(platform, now)
        with platform.uow.read() as repos:
            due = repos.tickets.due(overdue, limit=batch)
        if not due:
            return total
        for ticket_id in due:
            with platform.uow.write() as repos:
                ticket = repos.tickets.get(ticket_id, for_update=True)
                # The list was read before this lock: a report since then keeps it playing.
                if ticket is not None and overdue.holds_for(ticket):
                    total += finish(platform, repos, ticket, _reason(ticket), now)
        if len(due) < batch:
            return total
