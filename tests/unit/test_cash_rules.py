"""Cash 500 000 €: the rules of the regulation of 16 March 2009, as properties."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grattage.errors import InvalidChoice, InvalidPrizeTable, InvalidTicket, PrizeNotOffered
from grattage.games import SeededRandomness, find_game, load_table
from grattage.games.cash import NUMBERS

CASH = find_game("cash")
PRIZES = [tier.prize_cents for tier in CASH.table.tiers]
AMOUNTS = set(PRIZES)
seeds = st.binary(max_size=32)


def design(prize: int, seed: bytes = b"seed") -> dict:
    return CASH.design(prize, SeededRandomness(seed))


@given(prize=st.sampled_from(PRIZES), seed=seeds)
def test_a_designed_winning_ticket_evaluates_to_its_prize_and_validates(prize, seed):
    ticket = design(prize, seed)
    assert CASH.evaluate(ticket) == prize
    CASH.validate(ticket)


@given(seed=seeds)
def test_a_losing_cash_ticket_has_no_matching_number(seed):
    ticket = design(0, seed)
    winning = set(ticket["winning_numbers"])
    assert not [s for s in ticket["your_numbers"] if s["number"] in winning]
    assert CASH.evaluate(ticket) == 0
    CASH.validate(ticket)


@given(prize=st.sampled_from([0, *PRIZES]), seed=seeds)
def test_every_number_shown_is_one_of_the_37_and_unique_within_its_zone(prize, seed):
    ticket = design(prize, seed)
    stars = [s["number"] for s in ticket["your_numbers"]]
    assert len(ticket["winning_numbers"]) == 5
    assert len(stars) == 20
    assert set(ticket["winning_numbers"]) <= set(NUMBERS)
    assert set(stars) <= set(NUMBERS)
    assert len(set(stars)) == 20
    assert len(set(ticket["winning_numbers"])) == 5
    assert not {5, 10, 20} & (set(stars) | set(ticket["winning_numbers"]))


@given(prize=st.sampled_from([0, *PRIZES]), seed=seeds)
def test_every_amount_shown_is_a_prize_of_the_table(prize, seed):
    ticket = design(prize, seed)
    assert {s["amount_cents"] for s in ticket["your_numbers"]} <= AMOUNTS


@given(prize=st.sampled_from(PRIZES), seed=seeds)
def test_a_prize_is_shown_by_one_to_five_matches_whose_amounts_add_up(prize, seed):
    ticket = design(prize, seed)
    winning = set(ticket["winning_numbers"])
    matched = [s["amount_cents"] for s in ticket["your_numbers"] if s["number"] in winning]
    assert 1 <= len(matched) <= 5
    assert sum(matched) == prize
    assert tuple(sorted(matched, reverse=True)) in CASH.ways_to_show(prize)


def test_the_top_prize_shows_as_one_500000_or_five_100000():
    assert sorted(CASH.ways_to_show(50_000_000)) == [(10_000_000,) * 5, (50_000_000,)]


def test_a_prize_of_100_may_show_as_50_plus_50():
    assert (5000, 5000) in CASH.ways_to_show(10_000)


def test_a_150_euro_prize_is_not_in_the_table_and_cannot_be_designed():
    with pytest.raises(PrizeNotOffered, match="150"):
        design(15_000)


def test_designs_are_deterministic_for_a_given_rng_state():
    assert design(10_000, b"same") == design(10_000, b"same")
    assert design(10_000, b"same") != design(10_000, b"other")


def test_cash_takes_no_sign():
    with pytest.raises(InvalidChoice, match="'leo'"):
        CASH.design(0, SeededRandomness(b""), "leo")


def test_the_ticket_document_has_the_spec_keys():
    ticket = design(500)
    assert set(ticket) == {"game", "winning_numbers", "your_numbers", "prize_cents"}
    assert ticket["game"] == "cash"
    assert all(set(s) == {"number", "amount_cents"} for s in ticket["your_numbers"])


# -- validate names what is wrong ------------------------------------------------------------


def broken(mutate) -> dict:
    ticket = copy.deepcopy(design(1000, b"base"))
    mutate(ticket)
    return ticket


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t["winning_numbers"].__setitem__(0, 5), "5 is not one of the game's 37"),
        (lambda t: t["winning_numbers"].__setitem__(0, 41), "41 is not one of"),
        (lambda t: t["your_numbers"][3].__setitem__("number", 0), "your_numbers/3: 0"),
        (
            lambda t: t["winning_numbers"].__setitem__(1, t["winning_numbers"][0]),
            "appears twice",
        ),
        (
            lambda t: t["your_numbers"][1].__setitem__("number", t["your_numbers"][0]["number"]),
            "appears twice in your_numbers",
        ),
        (lambda t: t["your_numbers"][2].__setitem__("amount_cents", 15000), "amount 15000"),
        (lambda t: t["winning_numbers"].append(39), "exactly 5 numbers, got 6"),
        (lambda t: t["your_numbers"].pop(), "exactly 20 stars, got 19"),
        (lambda t: t.__setitem__("prize_cents", 999), "prize_cents is 999 but the win rule"),
        (lambda t: t.__setitem__("prize_cents", "1000"), "must be an integer"),
        (lambda t: t["winning_numbers"].__setitem__(0, True), "True is not one of"),
        (lambda t: t.__setitem__("game", "astro"), "not a cash ticket"),
        (lambda t: t["your_numbers"].__setitem__(0, 7), "your_numbers/0 must be"),
        (lambda t: t.__setitem__("winning_numbers", None), "must be a list"),
    ],
)
def test_validate_names_the_broken_rule(mutate, message):
    with pytest.raises(InvalidTicket, match=message):
        CASH.validate(broken(mutate))


def test_a_ticket_whose_matches_add_to_a_prize_outside_the_table_is_invalid():
    ticket = design(0, b"x")
    winning = ticket["winning_numbers"]
    # show 100 + 50 = 150 €: two matches whose sum is no prize of the table
    ticket["your_numbers"][0] = {"number": winning[0], "amount_cents": 10_000}
    ticket["your_numbers"][1] = {"number": winning[1], "amount_cents": 5_000}
    ticket["prize_cents"] = 15_000
    with pytest.raises(InvalidTicket, match="15000 cents, not in the table"):
        CASH.validate(ticket)


def test_a_non_object_is_an_invalid_ticket():
    with pytest.raises(InvalidTicket, match="JSON object"):
        CASH.validate([1, 2, 3])  # type: ignore[arg-type]


def test_zone_contents_follow_the_zone_ids():
    ticket = design(500)
    assert CASH.zone_content(ticket, "your_numbers/19") == ticket["your_numbers"][19]
    assert CASH.zone_content(ticket, "winning_numbers/4") == ticket["winning_numbers"][4]
    assert len(CASH.zones) == 25


# -- design-v2 and the regulation's rules for any table (issue 12) ------------------------------

SMALL = """
game = "cash"
block_size = 1000
{extra}
[[tiers]]
prize_cents = 10000
count = {top}
[[tiers]]
prize_cents = 1000
count = 100
[[tiers]]
prize_cents = 500
count = 200
"""


def small(extra: str = "", top: int = 10) -> str:
    return SMALL.format(extra=extra, top=top)


def test_new_cash_blocks_are_designed_under_design_v2_and_v1_stays_available():
    assert CASH.rules_version == "cash/2009-03-16/design-v2"
    old = find_game("cash", rules_version="cash/2009-03-16/design-v1")
    assert old.rules_version == "cash/2009-03-16/design-v1"
    assert type(old) is not type(CASH)


def test_an_unknown_rules_version_is_refused_naming_the_known_ones():
    with pytest.raises(InvalidPrizeTable, match="design-v1, cash/2009-03-16/design-v2"):
        find_game("cash", rules_version="cash/2009-03-16/design-v9")


def test_a_star_amount_that_is_not_a_prize_of_the_table_is_refused_naming_it():
    text = small("amounts_cents = [10000, 2000, 1000, 500]")
    with pytest.raises(
        InvalidPrizeTable,
        match=r"amounts_cents\[1\]: 20.€ \(2000 cents\) is not a prize .*art\. 4\.2",
    ):
        load_table("cash", text, "t.toml")


def test_design_v1_still_accepts_the_tables_its_blocks_were_made_with():
    text = small("amounts_cents = [10000, 2000, 1000, 500]")
    load_table("cash", text, "t.toml", rules_version="cash/2009-03-16/design-v1")


def test_a_row_with_no_prize_to_give_is_refused_so_its_amount_never_shows_on_a_star():
    # Issue 12 refuses a count of 0 in the loader: no table can list an amount it never pays.
    with pytest.raises(InvalidPrizeTable, match=r"row 1: count must be an integer from 1"):
        load_table("cash", small(top=0), "t.toml")


def test_decoys_are_drawn_from_the_winners_matched_amounts_weighted_by_the_table():
    game = find_game("cash", load_table("cash", small(), "t.toml"))
    ways = {tier.prize_cents: game.ways_to_show(tier.prize_cents) for tier in game.table.tiers}
    expected: dict[int, Fraction] = {}
    for tier in game.table.tiers:
        for way in ways[tier.prize_cents]:
            for part in way:
                share = Fraction(tier.count, len(ways[tier.prize_cents]))
                expected[part] = expected.get(part, Fraction(0)) + share
    total = sum(expected.values())
    weights = dict(zip(game.decoy_amounts, game.decoy_weights, strict=True))
    assert {a: Fraction(w, sum(weights.values())) for a, w in weights.items()} == {
        a: share / total for a, share in expected.items()
    }


def test_a_losing_ticket_shows_the_top_prize_no_more_than_a_winning_tickets_decoys():
    weights = dict(zip(CASH.decoy_amounts, CASH.decoy_weights, strict=True))
    top_share = Fraction(weights[50_000_000], sum(weights.values()))
    assert top_share < Fraction(1, 1_000_000)  # design-v1 showed it on 1 star in 11


@given(prize=st.sampled_from([0, *PRIZES]), seed=seeds)
def test_a_design_v1_ticket_still_re_derives_and_validates(prize, seed):
    old = find_game("cash", rules_version="cash/2009-03-16/design-v1")
    ticket = old.design(prize, SeededRandomness(seed))
    assert old.evaluate(ticket) == prize
    old.validate(ticket)
