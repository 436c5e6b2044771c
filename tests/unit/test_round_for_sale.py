"""The round a drawn sale names (docs/draw.md, "The round of a sale"): the first round whose
time is at least the margin after the receipt's own `time`, or the block's previous receipt's
round if that one is later — checkable from the receipt and the previous one alone."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from grattage.blocks.beacon import BeaconChain
from grattage.errors import Unavailable
from grattage.service.draw_sale import moment_of_ms, round_for_sale
from grattage.service.transparency import log_time

START = 1_800_000_000_000
FIRST = BeaconChain("a" * 64, b"\0" * 32, 10, START, 1000)
SECOND = BeaconChain("b" * 64, b"\1" * 32, 10, FIRST.end_ms(), 1000)


def test_the_round_is_the_first_at_least_the_margin_after_the_sale() -> None:
    assert round_for_sale([FIRST], START + 850, 100, None) == (FIRST.chain_id, 2, START + 1000)
    assert round_for_sale([FIRST], START + 900, 100, None)[1] == 2  # exactly the margin
    assert round_for_sale([FIRST], START + 901, 100, None)[1] == 3


def test_the_previous_receipts_round_wins_when_it_is_later() -> None:
    later = FIRST.round_time_ms(6)
    assert round_for_sale([FIRST], START + 850, 100, later) == (FIRST.chain_id, 6, later)
    earlier = FIRST.round_time_ms(1)
    assert round_for_sale([FIRST], START + 850, 100, earlier)[1] == 2


def test_a_margin_longer_than_a_period_counts_as_one_period() -> None:
    assert round_for_sale([FIRST], START + 850, 5000, None)[1] == 3


def test_past_the_end_of_a_chain_the_round_is_in_the_next_one() -> None:
    assert round_for_sale([FIRST, SECOND], FIRST.end_ms() - 150, 100, None) == (
        SECOND.chain_id,
        1,
        SECOND.start_ms,
    )
    with pytest.raises(Unavailable):
        round_for_sale([FIRST], FIRST.end_ms() - 150, 100, None)


def test_a_verifier_recomputes_every_round_from_the_receipts_time_and_the_previous_round() -> None:
    # What a monitor checks: from `time` (parsed back from the receipt's text) and the
    # previous receipt's round, the same rule gives the round the receipt names.
    chosen = random.Random(8)
    previous_ms = None
    moment = START
    while moment < SECOND.end_ms() - 1200:
        chain_id, number, round_ms = round_for_sale([FIRST, SECOND], moment, 100, previous_ms)
        text = log_time(moment_of_ms(moment))
        parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z")
        parsed_ms = (parsed - moment_of_ms(0)) // timedelta(milliseconds=1)
        assert parsed_ms == moment  # the receipt's text keeps the reading to the millisecond
        assert round_for_sale([FIRST, SECOND], parsed_ms, 100, previous_ms) == (
            chain_id,
            number,
            round_ms,
        )
        assert round_ms >= moment + 100 or round_ms == previous_ms
        if previous_ms is not None:
            assert round_ms >= previous_ms
        previous_ms = round_ms
        moment += chosen.choice((0, 1, 7, 99, 100, 101, 640, 1000, 2300))
