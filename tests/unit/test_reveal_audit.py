"""An operator's table is refused when a partial reveal of its tickets would tell a win (issue 12,
item 4, for every table we accept: outsider12's Sept d'Or tables)."""

from __future__ import annotations

import time
from importlib import resources

import pytest

from grattage.errors import InvalidPrizeTable
from grattage.games import find_game, load_table_bytes
from grattage.games.reveal_audit import LOADER_DESIGNS, check_partial_reveals

SEPT_DOR_II = b"""game = "cash"
title = "Sept d'Or II"
price_cents = 500
block_size = 100000
amounts_cents = [700, 100]
[[tiers]]
prize_cents = 700
count = 12000
[[tiers]]
prize_cents = 500
count = 1000
[[tiers]]
prize_cents = 100
count = 1
"""
"""outsider12's adv_cash_fivefold2: 5 € is shown only as 1 € × 5, so « 11 stars show 1 € »
(1.15 % of tickets) wins 1.47 × as often as on average under design-v2."""


def refusal(data: bytes) -> str:
    with pytest.raises(InvalidPrizeTable) as refused:
        load_table_bytes("cash", data, "t.toml")
    message = refused.value.message
    assert message.startswith("t.toml: a partial reveal would tell: ") and "\n" not in message
    return message


def test_a_prize_shown_only_as_several_smaller_stars_is_refused_naming_its_row():
    message = refusal(SEPT_DOR_II)
    assert "row 2: the prize 5 € is not one of the star amounts" in message, message
    assert "how many stars show 1 €" in message and "amounts_cents" in message


def test_the_same_table_with_its_prize_among_the_star_amounts_loads():
    fixed = SEPT_DOR_II.replace(b"[700, 100]", b"[700, 500, 100]")
    assert load_table_bytes("cash", fixed, "t.toml").prizes_count == 13_001


@pytest.mark.parametrize("name", ["cash", "astro"])
def test_the_loaders_measure_finds_design_v1s_leaks(name):
    """The statistical guard, at the loader's sample size, sees the leaks design-v1 had."""
    v1 = {"cash": "cash/2009-03-16/design-v1", "astro": "astro/2005-08-29/design-v1"}[name]
    with pytest.raises(InvalidPrizeTable, match="a partial reveal would tell: ") as refused:
        check_partial_reveals(find_game(name, rules_version=v1))
    assert " × as often as on average (" in refused.value.message, refused.value.message
    print(refused.value.message)


@pytest.mark.parametrize("name", ["cash", "astro"])
def test_the_packaged_tables_pass_the_loaders_measure_in_a_few_seconds(name):
    data = resources.files("grattage.games").joinpath("tables", f"{name}.toml").read_bytes()
    started = time.perf_counter()
    table = load_table_bytes(name, data, f"{name}.toml")
    elapsed = time.perf_counter() - started
    assert table.game == name
    print(f"{name}: {LOADER_DESIGNS} designs measured in {elapsed:.2f} s")


def test_a_table_is_judged_the_same_way_at_every_load():
    fixed = SEPT_DOR_II.replace(b"[700, 100]", b"[700, 500, 100]")
    first = load_table_bytes("cash", fixed, "t.toml")
    assert load_table_bytes("cash", fixed, "t.toml") == first
