"""Prize tables are data: the packaged ones match the regulations, and bad files are refused."""

from __future__ import annotations

from fractions import Fraction

import pytest

from grattage.errors import InvalidPrizeTable
from grattage.games import default_table, find_game, load_table
from grattage.games.table import parse_prize_table

SMALL_CASH = """
game = "cash"
block_size = 100
[[tiers]]
prize_cents = 1000
count = 10
[[tiers]]
prize_cents = 500
count = 20
"""


def test_the_cash_table_is_the_regulations():
    table = default_table("cash")
    assert table.block_size == 12_000_000
    assert table.prizes_count == 3_134_041
    assert table.prizes_total_cents == 45_000_000_00
    assert table.payout(500) == Fraction(3, 4)
    assert not table.reconstruction
    assert [(t.count, t.prize_cents // 100) for t in table.tiers] == [
        (3, 500_000), (4, 100_000), (4, 50_000), (30, 5_000), (1_500, 1_000), (2_500, 500),
        (90_000, 100), (90_000, 50), (350_000, 20), (1_300_000, 10), (1_300_000, 5),
    ]  # fmt: skip


def test_the_astro_table_meets_the_published_totals_and_is_flagged_a_reconstruction():
    table = default_table("astro")
    assert table.block_size == 750_000
    assert table.prizes_count == 207_986
    assert table.prizes_total_cents == 900_040_00
    # the regulation's own totals, 900 040 / 1 500 000 (not 60.005 %, see docs/games.md):
    assert table.payout(200) == Fraction(900_040, 1_500_000)  # 60.0027 %
    assert table.reconstruction
    assert "reconstitué" in table.title


def test_an_astro_block_may_be_a_multiple_of_750000():
    table = default_table("astro").scaled(3)
    assert table.block_size == 2_250_000
    assert table.prizes_count == 3 * 207_986
    assert table.payout(200) == default_table("astro").payout(200)


def test_an_operator_table_with_another_size_and_counts_is_accepted():
    table = load_table("cash", SMALL_CASH, "small.toml")
    game = find_game("cash", table)
    assert game.table.block_size == 100
    assert game.table.losing_count == 70


def test_the_table_digest_changes_with_any_count():
    one = load_table("cash", SMALL_CASH, "a")
    other = load_table("cash", SMALL_CASH.replace("count = 20", "count = 21"), "b")
    assert one.digest() != other.digest()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game = ", "not valid TOML"),
        (
            SMALL_CASH.replace("count = 20", "count = -1"),
            "row 2: count must be an integer ≥ 0, got -1",
        ),
        (SMALL_CASH.replace("block_size = 100", "block_size = 25"), "too small for its prizes"),
        (SMALL_CASH.replace("prize_cents = 500", "prize_cents = 1000"), "row 2 repeats the prize"),
        (SMALL_CASH.replace("prize_cents = 500", "prize_cents = 0"), "row 2: prize_cents must be"),
        (SMALL_CASH.replace("prize_cents = 500", 'prize_cents = "5"'), "row 2: prize_cents"),
        (SMALL_CASH + "\ncolour = 1\n", "unknown keys"),
        (SMALL_CASH.replace("block_size = 100", ""), "'block_size' must be a int"),
        ('game = "cash"\nblock_size = 10\n', "needs at least one"),
        (SMALL_CASH.replace('game = "cash"', 'game = "astro"'), "for 'astro', not 'cash'"),
        (
            SMALL_CASH.replace(
                "block_size = 100", "block_size = 100\namounts_cents = [500]"
            ).replace("prize_cents = 1000", "prize_cents = 3000"),
            "row 1: no sum of at most 5 of the table's amounts makes the prize 30 €",
        ),
    ],
)
def test_a_bad_cash_table_is_refused_naming_the_row(text, message):
    with pytest.raises(InvalidPrizeTable, match=message):
        load_table("cash", text, "bad.toml")


SMALL_ASTRO = """
game = "astro"
block_size = 1000
[[tiers]]
prize_cents = 4000
count = 1
shows = [{ gain_cents = 2000, multiplier = 2 }]
[[tiers]]
prize_cents = 2000
count = 10
"""


def test_an_astro_table_may_say_how_a_prize_is_shown():
    table = load_table("astro", SMALL_ASTRO, "a.toml")
    assert find_game("astro", table).ways_to_show(4000) == [(2000, 2)]


@pytest.mark.parametrize(
    ("replace", "by", "message"),
    [
        ("multiplier = 2", "multiplier = 5", "row 1: multiplier 5 does not exist"),
        ("gain_cents = 2000", "gain_cents = 1500", "row 1: 1500 × 2 does not make the prize 4000"),
        ("multiplier = 2", "multiplier = -2", "row 1: a show's multiplier is invalid"),
        ("block_size = 1000", "block_size = 1000\namounts_cents = [1]", "take no 'amounts_cents'"),
    ],
)
def test_a_bad_astro_table_is_refused_naming_the_row(replace, by, message):
    with pytest.raises(InvalidPrizeTable, match=message):
        load_table("astro", SMALL_ASTRO.replace(replace, by), "bad.toml")


def test_a_cash_table_refuses_astro_shows():
    text = SMALL_CASH.replace(
        "count = 10", "count = 10\nshows = [{gain_cents = 500, multiplier = 2}]"
    )
    with pytest.raises(InvalidPrizeTable, match="row 1: Cash tiers take no 'shows'"):
        load_table("cash", text, "bad.toml")


def test_parsing_keeps_the_file_order_as_tier_indexes():
    table = parse_prize_table(SMALL_CASH)
    assert [(t.index, t.prize_cents) for t in table.tiers] == [(1, 1000), (2, 500)]
    assert table.counts_by_tier() == [70, 10, 20]
