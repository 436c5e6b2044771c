"""The long poll of a covered ticket (``GET /api/tickets/{id}?wait=1``): held until its unit
is drawn, or for a bounded time, whichever comes first.

A drawn sale's unit is drawn once the beacon round its receipt names is published, within a
round of the purchase. The wait sleeps until that round's time (read from the receipt and the
witness's schedule), then looks every :data:`POLL_SECONDS` at the ticket's state alone (one
read by primary key), and reads the whole ticket once it is drawn: a waiting page costs a few
small reads, not one per poll interval of the whole wait. Whichever process draws, the
ticket's row says it.
"""

from __future__ import annotations

import time

import anyio

from grattage.service import tickets
from grattage.service.context import Platform
from grattage.service.records import TicketView

POLL_SECONDS = 0.02
LONGEST_WAIT_SECONDS = 10.0
"""A request is never held longer (a page then asks again)."""


def _round_time_s(platform: Platform, view: TicketView) -> float | None:
    """When the ticket's round is published (epoch seconds), from its receipt."""
    witness, receipt = platform.witness, view.receipt
    if witness is None or receipt is None or not isinstance(receipt.get("beacon"), dict):
        return None
    beacon = receipt["beacon"]
    for chain in witness.chains():
        if chain.chain_id == beacon.get("chain_id"):
            return chain.round_time_ms(int(beacon["round"])) / 1000
    return None


async def until_drawn(platform: Platform, player_id: int, view: TicketView) -> TicketView:
    deadline = time.monotonic() + LONGEST_WAIT_SECONDS
    round_time = _round_time_s(platform, view)
    if round_time is not None:
        # the wall clock against the beacon's schedule (in the witness's time)
        assert platform.witness is not None
        until_round = round_time - platform.witness.now_ms() / 1000
        await anyio.sleep(max(0.0, min(until_round, deadline - time.monotonic())))
    while view.state == "covered" and time.monotonic() < deadline:
        await anyio.sleep(POLL_SECONDS)
        # The cheap look first: the whole answer (the ticket, its receipt from the log, the
        # player's overdue tickets settled) was read at every poll — on PostgreSQL a quarter
        # of a worker's time under the bench's load went there.
        if await anyio.to_thread.run_sync(tickets.still_covered, platform, player_id, view.id):
            continue
        view = await anyio.to_thread.run_sync(tickets.get_ticket, platform, player_id, view.id)
    return view
