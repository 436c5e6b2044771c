"""The prizes still to be won in each open block, and the block that closes once its top
prize is gone.

What is left of a prize is its count in the block's table minus the tickets sold with it. Those
sold are counted by the sale itself, in its transaction (``blocks.count_prize_sold``: one upsert,
for a winning ticket only), never read from the sealed tiers: the figure published is what the
tickets in the database say, and reconciliation checks the counters against them. Reading it
costs one grouped query over a few rows per block, whatever the number of tickets sold, so the
lobby can show it to every visitor.

With the operator's ``close_block_when_top_prize_sold``, the sale of a block's last top prize
closes the block in the same transaction; the next pending block opens as when a block is
exhausted (:func:`grattage.service.block_lifecycle.close_top_prize_sold_out`).
"""

from __future__ import annotations

from collections.abc import Sequence

from grattage.games import PrizeTable
from grattage.service import block_lifecycle
from grattage.service.audit_trail import record_block_changes
from grattage.service.block_lifecycle import UNPLAYABLE_TABLE_ERRORS
from grattage.service.context import Platform
from grattage.service.model import Block
from grattage.service.ports import Repositories
from grattage.service.records import OpenBlockPrizes, PrizeTier

TOP_PRIZE_SOLD_OUT = "top prize sold out"
"""The reason the audit log gives for a block the sale of its last top prize closed."""


def table_prizes(table: PrizeTable) -> dict[int, int]:
    """Prize amount → units of the block that win it, largest first (two tiers of one amount
    count as one prize)."""
    counts: dict[int, int] = {}
    for tier in sorted(table.tiers, key=lambda tier: -tier.prize_cents):
        counts[tier.prize_cents] = counts.get(tier.prize_cents, 0) + tier.count
    return counts


def remaining(table: PrizeTable, sold: dict[int, int]) -> tuple[PrizeTier, ...]:
    """Each prize of the table and how many of it are still unsold, largest first."""
    return tuple(
        PrizeTier(prize_cents, count - sold.get(prize_cents, 0))
        for prize_cents, count in table_prizes(table).items()
    )


def count_sale(
    platform: Platform,
    repos: Repositories,
    block_id: int,
    table: PrizeTable,
    prize_cents: int,
) -> bool:
    """Count a winning ticket just sold from ``block_id``, in the sale's transaction; close
    the block if that was its last top prize and the operator asked for it. Whether it closed
    it: the sale records the change (with :data:`TOP_PRIZE_SOLD_OUT`) once its receipt is
    logged, so that the block ends after its last sale in the log."""
    sold = repos.blocks.count_prize_sold(block_id, prize_cents)
    if not platform.policy.close_block_when_top_prize_sold:
        return False
    top_cents, top_count = next(iter(table_prizes(table).items()))
    if prize_cents == top_cents and sold >= top_count:
        return block_lifecycle.close_top_prize_sold_out(platform, repos, table.game, block_id)
    return False


def open_blocks_prizes(
    platform: Platform, repos: Repositories, game: str | None = None
) -> list[tuple[Block, OpenBlockPrizes]]:
    """Every open block (of ``game``) and the prizes still unsold in it, lowest ids first."""
    blocks = repos.blocks.open_blocks(game)
    sold = repos.blocks.prizes_sold([block.id for block in blocks])
    shown = []
    for block in blocks:
        try:
            table = platform.game_for_table(block.table_json).table
        except UNPLAYABLE_TABLE_ERRORS:
            continue  # a stored table that cannot be played is listed off sale, never a 500
        shown.append(
            (
                block,
                OpenBlockPrizes(
                    block_id=block.id,
                    size=block.size,
                    sold=block.sold,
                    prizes_remaining=remaining(table, sold[block.id]),
                ),
            )
        )
    return shown


def top_prizes_remaining(blocks: Sequence[OpenBlockPrizes]) -> PrizeTier | None:
    """The largest prize of the open blocks and how many of it are left across them (the
    lobby's « Gros lots restants »); None when no block is open."""
    left: dict[int, int] = {}
    for block in blocks:
        for prize in block.prizes_remaining:
            left[prize.prize_cents] = left.get(prize.prize_cents, 0) + prize.count
    if not left:
        return None
    top = max(left)
    return PrizeTier(top, left[top])


def close_blocks_top_prize_sold_out(platform: Platform) -> list[int]:
    """With the operator's ``close_block_when_top_prize_sold``, close every open block whose
    top prize is already sold out (sold before the setting was on: each sale closes its own
    block); the blocks closed. A server runs it when it starts."""
    if not platform.policy.close_block_when_top_prize_sold:
        return []
    closed = []
    with platform.uow.write() as repos:
        for block, left in open_blocks_prizes(platform, repos):
            gone = bool(left.prizes_remaining) and left.prizes_remaining[0].count <= 0
            if gone and block_lifecycle.close_top_prize_sold_out(
                platform, repos, block.game, block.id
            ):
                closed.append(block.id)
        record_block_changes(
            repos, platform.clock.now(), actor="system:start", reason=TOP_PRIZE_SOLD_OUT
        )
    return closed
