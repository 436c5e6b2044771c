"""A try block deals the table's exact multiset, each arrangement equally likely."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grattage.blocks.try_deal import deal, ordered_ends, ordered_tier
from grattage.games.randomness import SeededRandomness


class ScriptedRandomness:
    """Answers ``below`` from a script of offsets, checking each bound asked."""

    def __init__(self, script: list[tuple[int, int]]) -> None:
        self.script = list(script)

    def below(self, n: int) -> int:
        bound, answer = self.script.pop(0)
        assert n == bound
        return answer


def sell_out(counts: list[int], rng: object) -> list[int]:
    """Every sale of a block, as the try mode stores it: only the moved slots kept."""
    ends = ordered_ends(counts)
    moved: dict[int, int] = {}
    dealt = []
    for position in range(ends[-1]):
        step = deal(position, ends, moved.get, rng)  # type: ignore[arg-type]
        if step.moved_slot is not None:
            moved[step.moved_slot] = step.moved_tier
        moved.pop(position, None)
        assert all(slot > position for slot in moved)  # only unsold slots are ever stored
        dealt.append(step.tier)
    return dealt


@given(
    counts=st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=6).filter(
        lambda counts: sum(counts) > 0
    ),
    seed=st.binary(min_size=1, max_size=8),
)
def test_selling_out_a_try_block_deals_every_tier_exactly_its_count(
    counts: list[int], seed: bytes
) -> None:
    dealt = sell_out(counts, SeededRandomness(seed))
    assert Counter(dealt) == Counter({tier: n for tier, n in enumerate(counts) if n})


def test_every_arrangement_of_a_try_block_is_equally_likely() -> None:
    # Every sequence of the draws (4 × 3 × 2 × 1 of them, each as likely as the others):
    # a block of 2 losing units, one 1st-tier and one 2nd-tier unit has 12 arrangements,
    # and each comes out of exactly 2 of the 24 sequences.
    counts = [2, 1, 1]
    size = sum(counts)
    arrangements: Counter[tuple[int, ...]] = Counter()
    for offsets in itertools.product(*(range(size - n) for n in range(size))):
        script = [(size - n, offset) for n, offset in enumerate(offsets)]
        arrangements[tuple(sell_out(counts, ScriptedRandomness(script)))] += 1
    assert len(arrangements) == 12
    assert set(arrangements.values()) == {2}


def test_a_try_block_starts_as_the_ordered_multiset() -> None:
    ends = ordered_ends([3, 0, 2])
    assert [ordered_tier(ends, slot) for slot in range(5)] == [0, 0, 0, 2, 2]
    with pytest.raises(ValueError):
        ordered_tier(ends, 5)
    with pytest.raises(ValueError):
        ordered_ends([0, 0])
