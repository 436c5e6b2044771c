"""How a sale takes its unit, and how blocks move through their states as they sell.

A game sells from its open blocks. The sale that takes a block's last unit marks it
``exhausted`` and opens the game's next ``pending`` block; if the operator chose so, the sale
of a block's last top prize closes it, to the same effect (:func:`close_top_prize_sold_out`).
When no block is open, the next pending one opens — unless a block of the game is
``suspended``: the operator halted the game, and it opens nothing by itself, neither on
exhaustion nor on a sale, until they resume it.
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

from grattage.errors import InvalidInput, NotOnSale, SoldOut
from grattage.games.table import PrizeTable
from grattage.service.context import Platform
from grattage.service.model import Unit
from grattage.service.ports import Repositories

MAX_UNIT_ATTEMPTS = 50
OPEN_BLOCKS_SEEN_FOR = timedelta(seconds=5)

UNPLAYABLE_TABLE_ERRORS = (
    InvalidInput,
    ValueError,
    TypeError,
    KeyError,
    ArithmeticError,
    RecursionError,
)
"""What binding a stored table to its game may raise when the stored rows are broken (a
table stored before the loader refused them, or written by hand): bad JSON, a wrong field,
a row the game cannot dress. Such a block is not on sale; it never fails a page."""


def table_unplayable(table: PrizeTable, price_cents: int) -> str | None:
    """Why a block with this table and price cannot be sold, in the player's words; None if
    it can. The lobby divides by these figures: the odds by the winning tickets, the payout by
    the block's stakes."""
    if price_cents <= 0:
        return f"its price is {price_cents!r} cents"
    if table.block_size <= 0 or not table.tiers:
        return "its prize table has no tickets or no rows"
    if not 0 < table.prizes_count <= table.block_size:
        return f"its prize table has {table.prizes_count!r} winning tickets in {table.block_size!r}"
    return None


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
        sold, size, price_cents, chain_tip = taken
        if sold == size:
            seen.pop(game, None)
            repos.blocks.set_state(block_id, "exhausted", only_from="open")
            if not repos.blocks.has_suspended(game):  # a halted game waits for the operator
                repos.blocks.open_next_pending(game)
        return Unit(block_id, sold - 1, price_cents, chain_tip)
    raise SoldOut(f"{game}: no unit could be taken, try again")


def close_top_prize_sold_out(
    platform: Platform, repos: Repositories, game: str, block_id: int
) -> bool:
    """Close an open block whose top prize the sale just sold out (the operator's
    ``close_block_when_top_prize_sold``): its next pending block opens as on exhaustion,
    unless the game is suspended. False if the block was no longer open (this very sale
    exhausted it)."""
    if not repos.blocks.set_state(block_id, "closed", only_from="open"):
        return False
    platform.open_blocks_seen.pop(game, None)
    if not repos.blocks.has_suspended(game):
        repos.blocks.open_next_pending(game)
    return True


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
