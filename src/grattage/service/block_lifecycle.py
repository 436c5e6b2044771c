"""How a sale takes its unit, and how blocks move through their states as they sell.

A game sells from its open blocks. The sale that takes a block's last unit marks it
``exhausted`` and opens the game's next ``pending`` block; when no block is open, the next
pending one opens — unless a block of the game is ``suspended``: the operator halted the game,
and it opens nothing by itself, neither on exhaustion nor on a sale, until they resume it.
Every step is a conditional write (``take one unit of B if B is open and not sold out``),
so a sale that loses a race for a block (exhausted, suspended or closed meanwhile) simply
looks again; after :data:`MAX_UNIT_ATTEMPTS` lost races it gives up with SoldOut ("try again").

The open blocks of each game are remembered between sales (:attr:`Platform.open_blocks_seen`)
for :data:`OPEN_BLOCKS_SEEN_FOR` by the platform's clock: a hint, re-checked by every sale, that
saves looking them up every time; it is looked at again that often so that blocks the operator
opened meanwhile get their share.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from grattage.errors import NotOnSale, SoldOut
from grattage.service.context import Platform
from grattage.service.model import Unit
from grattage.service.ports import Repositories

MAX_UNIT_ATTEMPTS = 50
OPEN_BLOCKS_SEEN_FOR = timedelta(seconds=5)


def take_unit(
    platform: Platform, repos: Repositories, game: str, spread: int, now: datetime
) -> Unit:
    """The next unsold unit of an open block of ``game``; raises NotOnSale or SoldOut.

    With several blocks open, ``spread`` (the buyer's id) picks among them: on PostgreSQL a
    block's counter is a row every sale from it locks until its commit, so concurrent buyers
    must not all queue on one."""
    seen = platform.open_blocks_seen
    hinted: list[int] | None = None
    if (last := seen.get(game)) is not None and now - last[0] <= OPEN_BLOCKS_SEEN_FOR:
        hinted = last[1]
    for _ in range(MAX_UNIT_ATTEMPTS):
        if hinted is None:
            hinted = repos.blocks.open_block_ids(game)
            if not hinted:
                if repos.blocks.has_suspended(game) or repos.blocks.open_next_pending(game) is None:
                    raise why_not_on_sale(repos, game)
                hinted = None  # one opened: look again
                continue
            seen[game] = (now, hinted)
        block_id = hinted[spread % len(hinted)]
        taken = repos.blocks.take_unit(block_id)
        if taken is None:  # lost a race: exhausted, suspended or closed meanwhile
            hinted = None
            seen.pop(game, None)
            continue
        sold, size = taken
        if sold == size:
            seen.pop(game, None)
            repos.blocks.set_state(block_id, "exhausted", only_from="open")
            if not repos.blocks.has_suspended(game):  # a halted game waits for the operator
                repos.blocks.open_next_pending(game)
        return Unit(block_id=block_id, position=sold - 1)
    raise SoldOut(f"{game}: no unit could be taken, try again")


def why_not_on_sale(repos: Repositories, game: str) -> NotOnSale | SoldOut:
    """Why nothing of ``game`` can be sold, in the words the player reads."""
    states = repos.blocks.states_with_unsold_units(game)
    if "suspended" in states:
        return NotOnSale(
            f"{game} is suspended by the operator: no ticket is on sale until it resumes"
        )
    if "closed" in states:
        return NotOnSale(f"{game} is closed by the operator: no ticket is on sale")
    return SoldOut(f"{game} is sold out: no open block has a ticket left")
