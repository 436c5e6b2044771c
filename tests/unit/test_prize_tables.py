"""Prize tables are data: the packaged ones match the regulations, and bad files are refused."""

from __future__ import annotations

import json
from fractions import Fraction
from importlib import resources
from pathlib import Path

import pytest

from grattage.errors import InvalidPrizeTable
from grattage.games import PrizeTable, default_table, find_game, load_table, load_table_bytes
from grattage.games.table import parse_prize_table, table_from_dict

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
    assert table.price_cents == 500
    assert table.payout() == Fraction(3, 4)
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
    assert table.price_cents == 200
    assert table.payout() == Fraction(900_040, 1_500_000)  # 60.0027 %
    assert table.reconstruction
    assert "reconstitué" in table.title


def test_an_astro_block_may_be_a_multiple_of_750000():
    table = default_table("astro").scaled(3)
    assert table.block_size == 2_250_000
    assert table.prizes_count == 3 * 207_986
    assert table.payout() == default_table("astro").payout()


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
            "row 2: count must be an integer from 1 to the block size 100, got -1",
        ),
        (SMALL_CASH.replace("block_size = 100", "block_size = 15"), "row 2: count must be"),
        (
            SMALL_CASH.replace("block_size = 100", "block_size = 29"),
            "row 2: the block is too small",
        ),
        (SMALL_CASH.replace("prize_cents = 500", "prize_cents = 1000"), "row 2 repeats the prize"),
        (SMALL_CASH.replace("prize_cents = 500", "prize_cents = 0"), "row 2: prize_cents must be"),
        (SMALL_CASH.replace("prize_cents = 500", 'prize_cents = "5"'), "row 2: prize_cents"),
        (SMALL_CASH + "\ncolour = 1\n", "unknown keys"),
        (SMALL_CASH.replace("block_size = 100", ""), "block_size is 1 to 100,000,000 units"),
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


# -- a table carries its price and title --------------------------------------------------------

FIXTURE_TABLES = Path(__file__).parents[1] / "fixtures" / "tables"
GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden"


def test_the_packaged_tables_carry_their_price_and_pass_every_operator_rule():
    for name, price in (("cash", 500), ("astro", 200)):
        data = resources.files("grattage.games").joinpath("tables", f"{name}.toml").read_bytes()
        table = load_table_bytes(name, data, f"{name}.toml")
        assert (table.price_cents, table) == (price, default_table(name))


@pytest.mark.parametrize(
    ("file", "game", "price", "size", "prizes", "total_cents", "odds", "payout"),
    [
        ("cash_050.toml", "cash", 50, 1_000, 199, 31_500, Fraction(1000, 199), Fraction(63, 100)),
        (
            "astro_200.toml",
            "astro",
            200,
            1_500_000,
            478_761,
            1_850_000_00,
            Fraction(1_500_000, 478_761),
            Fraction(37, 60),
        ),
        (
            "cash_500.toml",
            "cash",
            500,
            4_500_000,
            1_122_112,
            15_700_000_00,
            Fraction(4_500_000, 1_122_112),
            Fraction(157, 225),
        ),
    ],
)
def test_an_operator_table_gives_its_odds_and_payout_at_its_own_price(
    file, game, price, size, prizes, total_cents, odds, payout
):
    table = load_table_bytes(game, (FIXTURE_TABLES / file).read_bytes(), file)
    assert (table.game, table.price_cents, table.block_size) == (game, price, size)
    assert (table.prizes_count, table.prizes_total_cents) == (prizes, total_cents)
    assert (table.odds(), table.payout()) == (odds, payout)
    assert find_game(game, table).table is table
    again = table_from_dict(json.loads(json.dumps(table.to_dict())))
    assert (again, again.digest()) == (table, table.digest())


def test_the_same_rows_at_another_price_are_another_table():
    five = load_table("cash", SMALL_CASH, "a")
    two = load_table("cash", SMALL_CASH.replace("block_size", "price_cents = 200\nblock_size"), "b")
    assert (five.price_cents, two.price_cents) == (500, 200)
    assert five.digest() != two.digest()
    assert two.to_dict()["price_cents"] == 200
    assert table_from_dict(two.to_dict()) == two
    assert two.payout() == Fraction(20_000, 100 * 200)


# -- tables committed before tables had a price -------------------------------------------------


@pytest.mark.parametrize(
    ("file", "price"),
    [
        ("frozen-cash-proof-top-prize.json", 500),
        ("frozen-cash-disclosure.json", 500),
        ("frozen-astro-proof-losing.json", 200),
        ("frozen-astro-disclosure.json", 200),
    ],
)
def test_a_table_stored_without_a_price_has_its_games_price_of_that_era_and_its_digest(file, price):
    commitment = json.loads((GOLDEN / file).read_text("utf-8"))["commitment"]
    assert "price_cents" not in commitment["table"]
    table = table_from_dict(commitment["table"])
    assert table.price_cents == price
    assert table.to_dict() == commitment["table"]
    assert table.digest() == commitment["table_sha256"]


def test_a_stored_table_without_a_price_for_a_game_that_never_lacked_one_is_refused():
    data = default_table("cash").to_dict() | {"game": "pile_ou_face"}
    with pytest.raises(InvalidPrizeTable, match="malformed prize table"):
        table_from_dict(data)


@pytest.mark.parametrize("price", [0, -5, True, "500", 1.5, 10**30])
def test_a_stored_table_with_a_wrong_price_is_refused(price):
    data = default_table("cash").to_dict() | {"price_cents": price}
    with pytest.raises(InvalidPrizeTable, match="price_cents"):
        table_from_dict(data)


# -- the rules of a table sold to players, one line naming the row ------------------------------

OPERATOR_CASH = f'title = "Petit Cash"\nprice_cents = 500\n{SMALL_CASH}'  # payout 40 %


def _operator(text: str) -> object:
    return load_table_bytes("cash", text.encode(), "op.toml")


def test_an_operator_table_with_a_price_and_a_title_is_accepted():
    table = _operator(OPERATOR_CASH)
    assert isinstance(table, PrizeTable)
    assert (table.title, table.price_cents, table.payout()) == ("Petit Cash", 500, Fraction(2, 5))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("count = 20", "count = 0", "row 2: count must be an integer from 1 to the block size 100"),
        ("price_cents = 500\n", "", "price_cents, the price of one ticket in cents"),
        ('title = "Petit Cash"\n', "", "title is required"),
        ("price_cents = 500", "price_cents = 0", "price_cents.* is 1 to 10,000 .*got 0"),
        ("price_cents = 500", "price_cents = 10001", "got 10001"),
        ("price_cents = 500", "price_cents = 1.5", "got 1.5"),
        ("price_cents = 500", "price_cents = true", "got True"),
        (
            "price_cents = 500",
            "price_cents = 200",
            "payout is 100.000 %, and must stay under 100 %",
        ),
        ("price_cents = 500", "price_cents = 199", "payout is 100.503 %"),
        ("block_size = 100", "block_size = 100000000000", "block_size is 1 to 100,000,000 units"),
        ("count = 10", "count = 101", "row 1: count must be an integer from 1 to the block size"),
        ("count = 10", "count = 90", "row 2: the block is too small for its prizes: 110 prizes"),
        ('"Petit Cash"', '""', "title is empty"),
        ('"Petit Cash"', f'"{"x" * 201}"', "title is 201 characters long \\(at most 200\\)"),
        (
            '"Petit Cash"',
            '"Petit\\nCash"',
            "title holds the control or invisible character U\\+000A",
        ),
        ('"Petit Cash"', '"Petit \\u202eCash"', "U\\+202E"),
        ('"Petit Cash"', "3", "title is not text, got 3"),
        ('"Petit Cash"', '"a"\nsource = "' + "s" * 501 + '"', "source is 501 characters long"),
        ('"Petit Cash"', '"a"\nreconstruction = "yes"', "reconstruction must be true or false"),
        ("count = 10", "count = 10\nshows = 5", "row 1: shows must be a list"),
        ("count = 10", "count = 10\ncolour = 1", "row 1: unknown keys \\['colour'\\]"),
    ],
)
def test_an_operator_table_breaking_a_rule_is_refused_in_one_line_naming_it(old, new, message):
    text = OPERATOR_CASH.replace(old, new, 1)
    assert text != OPERATOR_CASH
    with pytest.raises(InvalidPrizeTable, match=message) as refused:
        _operator(text)
    assert refused.value.message.startswith("op.toml: ")
    assert "\n" not in refused.value.message and len(refused.value.message) < 400


def test_the_payout_rule_is_exact_one_cent_under_the_stakes_is_sellable():
    text = 'game = "cash"\ntitle = "t"\nprice_cents = 100\nblock_size = 100\n'
    accepted = _operator(text + "[[tiers]]\nprize_cents = 9999\ncount = 1\n")
    assert isinstance(accepted, PrizeTable) and accepted.payout() == Fraction(9999, 10000)
    with pytest.raises(InvalidPrizeTable, match="payout is 100.000 %"):
        _operator(text + "[[tiers]]\nprize_cents = 10000\ncount = 1\n")


def test_a_block_whose_prizes_exceed_64_bits_is_refused_naming_the_row():
    text = 'game = "cash"\ntitle = "t"\nprice_cents = 100\nblock_size = 100\n[[tiers]]\n'
    text += f"prize_cents = {2**62}\ncount = 1\n[[tiers]]\nprize_cents = {2**62 + 1}\ncount = 1\n"
    with pytest.raises(InvalidPrizeTable, match="row 2: the block's prizes up to this row exceed"):
        _operator(text)


def test_a_table_of_more_than_255_tiers_is_refused():
    rows = "".join(f"[[tiers]]\nprize_cents = {p}\ncount = 1\n" for p in range(1, 257))
    text = f'game = "cash"\ntitle = "t"\nprice_cents = 10000\nblock_size = 1000\n{rows}'
    with pytest.raises(InvalidPrizeTable, match="at most 255 tiers, got 256"):
        _operator(text)


def test_a_scaled_table_keeps_its_price_and_its_total_within_64_bits():
    astro = default_table("astro")
    assert astro.scaled(2).price_cents == 200
    with pytest.raises(InvalidPrizeTable, match="a block multiple is 1 to 133"):
        astro.scaled(134)
