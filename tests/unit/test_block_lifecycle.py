"""The block lifecycle of a sale, decided in the service over a repository of facts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from grattage.errors import NotOnSale, SoldOut
from grattage.service.block_lifecycle import MAX_UNIT_ATTEMPTS, take_unit
from grattage.service.model import NO_CHAIN_TIP, BlockState, ChainTip, Unit

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class Blocks:
    """Blocks as the repository reports them; each take answers the next scripted outcome."""

    def __init__(
        self,
        open_ids: list[list[int]],
        takes: list[tuple[int, int, int] | None],
        suspended: bool = False,
        pending: list[int] | None = None,
        unsold_states: set[BlockState] | None = None,
    ) -> None:
        self.open_ids = open_ids
        self.takes = takes
        self.suspended = suspended
        self.pending = pending or []
        self.unsold_states = unsold_states or set()
        self.lookups = 0
        self.taken_from: list[int] = []
        self.changes: list[tuple[int, BlockState, BlockState]] = []

    def open_block_ids(self, game: str) -> list[int]:
        self.lookups += 1
        return self.open_ids[min(self.lookups, len(self.open_ids)) - 1]

    def take_unit(self, block_id: int) -> tuple[int, int, int, ChainTip] | None:
        self.taken_from.append(block_id)
        taken = self.takes.pop(0) if self.takes else None
        return None if taken is None else (*taken, NO_CHAIN_TIP)

    def set_state(self, block_id: int, state: BlockState, only_from: BlockState) -> bool:
        self.changes.append((block_id, only_from, state))
        return True

    def open_next_pending(self, game: str) -> int | None:
        if not self.pending:
            return None
        opened = self.pending.pop(0)
        self.changes.append((opened, "pending", "open"))
        return opened

    def has_suspended(self, game: str) -> bool:
        return self.suspended

    def states_with_unsold_units(self, game: str) -> set[BlockState]:
        return self.unsold_states


def sell(blocks: Blocks, platform: Any = None, spread: int = 0, now: datetime = NOW) -> Unit:
    platform = platform or SimpleNamespace(open_blocks_seen={})
    return take_unit(platform, SimpleNamespace(blocks=blocks), "cash", spread, now)  # type: ignore[arg-type]


def test_a_sale_takes_the_next_unit_of_an_open_block() -> None:
    assert sell(Blocks([[7]], [(3, 10, 500)])) == Unit(block_id=7, position=2, price_cents=500)


def test_the_sale_of_a_blocks_last_unit_exhausts_it_and_opens_the_next_pending_block() -> None:
    blocks = Blocks([[7]], [(10, 10, 500)], pending=[8])
    assert sell(blocks) == Unit(block_id=7, position=9, price_cents=500)
    assert blocks.changes == [(7, "open", "exhausted"), (8, "pending", "open")]


def test_with_no_block_open_the_next_pending_block_opens_and_sells() -> None:
    blocks = Blocks([[], [8]], [(1, 10, 500)], pending=[8])
    assert sell(blocks) == Unit(block_id=8, position=0, price_cents=500)
    assert blocks.changes == [(8, "pending", "open")]


def test_a_game_with_a_suspended_block_opens_nothing_by_itself_and_says_it_is_suspended() -> None:
    blocks = Blocks([[]], [], suspended=True, pending=[8], unsold_states={"suspended", "pending"})
    with pytest.raises(NotOnSale, match="cash is suspended by the operator"):
        sell(blocks)
    assert blocks.changes == [] and blocks.pending == [8]


def test_exhausting_a_block_opens_no_pending_one_while_another_block_is_suspended() -> None:
    # The operator halted the game by suspending a block: the sale of the last unit of the
    # block still open ends that block, and the game then waits for the operator to resume.
    blocks = Blocks([[7]], [(10, 10, 500)], suspended=True, pending=[8])
    assert sell(blocks) == Unit(block_id=7, position=9, price_cents=500)
    assert blocks.changes == [(7, "open", "exhausted")] and blocks.pending == [8]


def test_a_game_whose_blocks_were_closed_says_it_is_closed() -> None:
    with pytest.raises(NotOnSale, match="cash is closed by the operator"):
        sell(Blocks([[]], [], unsold_states={"closed"}))


def test_a_game_with_nothing_left_says_it_is_sold_out() -> None:
    with pytest.raises(SoldOut, match="cash is sold out"):
        sell(Blocks([[]], [], unsold_states={"exhausted"}))


def test_a_sale_that_loses_a_race_for_its_block_looks_again() -> None:
    blocks = Blocks([[7], [9]], [None, (5, 10, 500)])
    assert sell(blocks) == Unit(block_id=9, position=4, price_cents=500)
    assert blocks.taken_from == [7, 9] and blocks.lookups == 2


def test_a_sale_gives_up_with_sold_out_after_losing_every_one_of_its_attempts() -> None:
    blocks = Blocks([[7]], [])
    with pytest.raises(SoldOut, match="try again"):
        sell(blocks)
    assert len(blocks.taken_from) == MAX_UNIT_ATTEMPTS


def test_buyers_are_spread_over_the_open_blocks() -> None:
    assert {sell(Blocks([[7, 8]], [(1, 10, 500)]), spread=buyer).block_id for buyer in (0, 1)} == {
        7,
        8,
    }


def test_the_open_blocks_are_remembered_for_five_seconds_of_the_platforms_clock() -> None:
    platform = SimpleNamespace(open_blocks_seen={})
    blocks = Blocks([[7], [7, 8]], [(1, 10, 500), (2, 10, 500), (1, 10, 500)])
    sell(blocks, platform, spread=1)
    assert sell(blocks, platform, spread=1, now=NOW + timedelta(seconds=5)).block_id == 7
    assert sell(blocks, platform, spread=1, now=NOW + timedelta(seconds=6)).block_id == 8
    assert blocks.lookups == 2
