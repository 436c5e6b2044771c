"""The try mode's blocks: a table's exact multiset, shuffled one sale at a time.

A try block (« Essayer gratuitement », docs/games.md) has the real game's table at its real
size ``N`` and exactly its counts, so its odds are the real game's. It is never generated in
full (12 000 000 units for Cash): it starts as the table's ordered multiset (the losing
units, then each tier's, as :func:`grattage.blocks.shuffle.ordered_tiers` lays them out), and
sale ``n`` is one step of the Fisher–Yates shuffle: draw ``j`` uniformly in ``[n, N)``, deal
the unit at slot ``j``, and move the unit of slot ``n`` into slot ``j``. Only the slots a step
touched are stored (:class:`Deal` says what to store), so a block costs a few rows per sale,
and the dealt units are a uniformly random permutation of the multiset: after ``N`` sales
every tier was dealt exactly its count.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from grattage.games.randomness import Randomness, uniform_below


def ordered_ends(counts_by_tier: Sequence[int]) -> tuple[int, ...]:
    """Where each tier's run ends in the ordered block (running sums of its counts)."""
    if any(count < 0 for count in counts_by_tier) or sum(counts_by_tier) <= 0:
        raise ValueError(f"a block's counts are non-negative and not all zero: {counts_by_tier!r}")
    return tuple(accumulate(counts_by_tier))


def ordered_tier(ends: Sequence[int], slot: int) -> int:
    """The tier of ``slot`` in the ordered block, before any sale moved a unit."""
    if not 0 <= slot < ends[-1]:
        raise ValueError(f"slot {slot!r} is outside a block of {ends[-1]!r} units")
    return bisect_right(ends, slot)


@dataclass(frozen=True)
class Deal:
    """One sale's step: the tier dealt, and the one slot whose unit changed (None when the
    drawn slot was the sale's own, which nothing reads again)."""

    tier: int
    moved_slot: int | None
    moved_tier: int


def deal(
    position: int,
    ends: Sequence[int],
    stored_tier: Callable[[int], int | None],
    rng: Randomness,
) -> Deal:
    """Sale ``position`` of the block whose ordered runs end at ``ends``; ``stored_tier``
    answers a slot's tier if an earlier sale moved a unit there, else None."""
    size = ends[-1]
    if not 0 <= position < size:
        raise ValueError(f"sale {position!r} of a block of {size!r} units")
    drawn = position + uniform_below(rng, size - position)

    def tier_at(slot: int) -> int:
        stored = stored_tier(slot)
        return ordered_tier(ends, slot) if stored is None else stored

    dealt = tier_at(drawn)
    if drawn == position:
        return Deal(tier=dealt, moved_slot=None, moved_tier=dealt)
    return Deal(tier=dealt, moved_slot=drawn, moved_tier=tier_at(position))
