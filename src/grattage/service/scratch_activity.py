"""The page's report that its player is scratching a ticket (issue 16).

A ticket's inactivity and abandon delays run from its last action, and rubbing a zone whose
coating is not yet half gone is one, though it asks for no reveal: without the report a slow
scratch of a Cash star was finished by the server as ``inactivity`` under the player's mouse.

The page reports at most every 2 s while the pointer scratches a zone; whatever a client
sends, a ticket is written at most once per ``MIN_REPORT_INTERVAL`` (a report closer than
that to the last stored action is answered after one read, without a write). A report moves
the last action of a playing ticket only while it is not overdue, in one conditional update,
so one that loses the race to the sweeper or to the player's own reveal finds the ticket
finished and changes nothing; and the finishing transactions ask again, under the ticket's
lock, whether it is still overdue (``finishing.finish_due``, ``finishing.sweep``), so one
that read its list of overdue tickets just before a report leaves that ticket playing.

Reports keep a ticket in play for at most ``abandon_seconds`` after its purchase: a report
reveals nothing, so a page (or a script) that sent them forever would keep a ticket playing
forever, its prize never credited and its block never finished. Scratching a whole ticket
takes a minute; past that bound only a reveal counts as an action, as before the reports.
"""

from __future__ import annotations

from datetime import timedelta

from grattage.errors import NotDrawn, NotFound
from grattage.service.context import Platform
from grattage.service.finishing import overdue_at

MIN_REPORT_INTERVAL = timedelta(seconds=1)


def report_activity(platform: Platform, player_id: int, ticket_id: int) -> bool:
    """Note that the player is scratching their playing ticket; whether its last action moved.

    A finished ticket, an overdue one (its finishing is only waiting for the sweeper or the
    player's next access: a late report does not bring it back) and a report within
    ``MIN_REPORT_INTERVAL`` of the last action, and any report ``abandon_seconds`` or more
    after the purchase, are left as they are. A covered ticket cannot
    be scratched yet (NotDrawn); someone else's is indistinguishable from a missing one."""
    now = platform.clock.now()
    overdue = overdue_at(platform, now)
    with platform.uow.read() as repos:
        ticket = repos.tickets.get(ticket_id)
    if ticket is None or ticket.player_id != player_id:
        raise NotFound(f"no ticket {ticket_id!r}")
    if ticket.state == "covered":
        raise NotDrawn(f"ticket {ticket_id!r} is not drawn yet: nothing can be scratched")
    throttle_cutoff = now - MIN_REPORT_INTERVAL
    reports_end = ticket.created_at + timedelta(seconds=platform.policy.abandon_seconds)
    if (
        now >= reports_end
        or ticket.state != "playing"
        or overdue.holds_for(ticket)
        or ticket.last_action_at > throttle_cutoff
    ):
        return False
    with platform.uow.write() as repos:
        return repos.tickets.note_activity(
            ticket_id, player_id, now, overdue.cutoff_for(ticket.game), throttle_cutoff
        )
