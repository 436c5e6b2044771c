"""Astro: the rules of the regulation of 29 August 2005, as properties."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grattage.errors import (
    InvalidChoice,
    InvalidPrizeTable,
    InvalidTicket,
    InvalidZone,
    PrizeNotOffered,
)
from grattage.games import SeededRandomness, find_game, load_table
from grattage.games.astro import (
    LOSING_PHRASES,
    MULTIPLIERS,
    PHASE_ONE_ZONES,
    PHRASES,
    PLAIN_WIN_PHRASES,
    SIGNS,
    SYMBOLS,
)

ASTRO = find_game("astro")
PRIZES = [tier.prize_cents for tier in ASTRO.table.tiers]
seeds = st.binary(max_size=32)
signs = st.sampled_from(SIGNS)


def design(prize: int, seed: bytes = b"seed", sign: str = "leo") -> dict:
    return ASTRO.design(prize, SeededRandomness(seed), sign)


@given(prize=st.sampled_from(PRIZES), seed=seeds, sign=signs)
def test_a_designed_winning_ticket_evaluates_to_its_prize_and_validates(prize, seed, sign):
    ticket = design(prize, seed, sign)
    assert ASTRO.evaluate(ticket) == prize
    ASTRO.validate(ticket)


@given(prize=st.sampled_from(PRIZES), seed=seeds)
def test_a_winning_ticket_shows_exactly_two_signs(prize, seed):
    assert design(prize, seed)["symbols"].count("sign") == 2


@given(seed=seeds, sign=signs)
def test_a_losing_ticket_shows_at_most_one_sign_and_evaluates_to_zero(seed, sign):
    ticket = design(0, seed, sign)
    assert ticket["symbols"].count("sign") <= 1
    assert ASTRO.evaluate(ticket) == 0
    ASTRO.validate(ticket)


@given(prize=st.sampled_from([0, *PRIZES]), seed=seeds)
def test_every_element_shown_is_one_the_regulation_lists(prize, seed):
    ticket = design(prize, seed)
    assert len(ticket["symbols"]) == 5
    assert set(ticket["symbols"]) <= {"sign", *SYMBOLS}
    assert ticket["gain_cents"] in ASTRO.gains
    assert ticket["banner"]["multiplier"] in (None, *MULTIPLIERS)
    assert PHRASES[ticket["banner"]["text"]] == ticket["banner"]["multiplier"]


@given(prize=st.sampled_from(PRIZES), seed=seeds)
def test_a_prize_is_the_gain_times_the_banner_multiplier(prize, seed):
    ticket = design(prize, seed)
    assert ticket["gain_cents"] * (ticket["banner"]["multiplier"] or 1) == prize


def test_16000_euros_is_shown_only_as_8000_times_2():
    assert ASTRO.ways_to_show(1_600_000) == [(800_000, 2)]
    ticket = design(1_600_000)
    assert ticket["gain_cents"] == 800_000
    assert ticket["banner"]["multiplier"] == 2


def test_the_gain_box_never_shows_16000_but_may_show_8000():
    assert 1_600_000 not in ASTRO.gains
    assert 800_000 in ASTRO.gains


def test_the_ways_to_show_2000_euros_are_those_of_the_spec():
    assert sorted(ASTRO.ways_to_show(200_000), key=lambda w: -w[0]) == [
        (200_000, None),
        (100_000, 2),
        (20_000, 10),
        (10_000, 20),
        (2_000, 100),
        (200, 1000),
    ]


def test_every_multiplier_of_the_game_occurs_in_the_table():
    used = {m for p in PRIZES for _, m in ASTRO.ways_to_show(p) if m is not None}
    assert used == set(MULTIPLIERS)


def test_a_losing_ticket_loses_whatever_the_banner_says():
    ticket = design(0, b"x")
    ticket["symbols"] = ["sign", "moon", "moon", "sun", "star"]
    ticket["banner"] = {"text": "Vos gains sont multipliés par 1 000 !", "multiplier": 1000}
    assert ASTRO.evaluate(ticket) == 0


def test_an_unknown_prize_cannot_be_designed():
    with pytest.raises(PrizeNotOffered, match="3 €"):
        design(300)


@pytest.mark.parametrize("sign", [None, "ophiuchus", "Leo", ""])
def test_astro_needs_one_of_the_twelve_signs(sign):
    with pytest.raises(InvalidChoice, match=repr(sign)):
        ASTRO.design(0, SeededRandomness(b""), sign)


def test_designs_are_deterministic_for_a_given_rng_state():
    assert design(4000, b"same") == design(4000, b"same")


def test_the_banner_waits_for_the_five_discs_and_the_gain_box():
    assert set(ASTRO.zone_prerequisites("banner")) == set(PHASE_ONE_ZONES)
    assert ASTRO.zone_prerequisites("gain") == ()
    with pytest.raises(InvalidZone, match="'symbols/5'"):
        ASTRO.zone_prerequisites("symbols/5")


def broken(mutate) -> dict:
    ticket = copy.deepcopy(design(1000, b"base"))
    mutate(ticket)
    return ticket


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t["symbols"].__setitem__(0, "ufo"), "unknown symbol 'ufo'"),
        (lambda t: t.__setitem__("symbols", ["sign"] * 3 + ["moon"] * 2), "3 discs show"),
        (lambda t: t["symbols"].append("moon"), "exactly 5 discs"),
        (lambda t: t.__setitem__("gain_cents", 300), "gain_cents 300"),
        (lambda t: t.__setitem__("gain_cents", 1_600_000), "gain_cents 1600000"),
        (lambda t: t.__setitem__("banner", {"text": "x", "multiplier": 5}), "multiplier 5"),
        (lambda t: t.__setitem__("banner", {"text": "x", "multiplier": None}), "text 'x'"),
        (
            lambda t: t.__setitem__(
                "banner", {"text": "Vos gains sont multipliés par 10 !", "multiplier": 20}
            ),
            "multiplies by 10, not 20",
        ),
        (lambda t: t.__setitem__("prize_cents", 0), "prize_cents is 0 but the win rule"),
        (lambda t: t.__setitem__("game", "cash"), "not a astro ticket"),
    ],
)
def test_validate_names_the_broken_rule(mutate, message):
    with pytest.raises(InvalidTicket, match=message):
        ASTRO.validate(broken(mutate))


def test_a_ticket_showing_an_unknown_sign_is_refused_as_an_invalid_choice():
    with pytest.raises(InvalidChoice, match="'dragon'"):
        ASTRO.validate(broken(lambda t: t.__setitem__("sign", "dragon")))


def test_a_shown_product_outside_the_table_is_invalid():
    ticket = design(0, b"y")
    ticket["symbols"] = ["sign", "sign", "moon", "sun", "star"]
    ticket["gain_cents"] = 800_000
    ticket["banner"] = {"text": "Vos gains sont multipliés par 1 000 !", "multiplier": 1000}
    ticket["prize_cents"] = 800_000_000
    with pytest.raises(InvalidTicket, match="not in the table"):
        ASTRO.validate(ticket)


def test_the_ticket_document_has_the_spec_keys():
    ticket = design(600)
    assert set(ticket) == {"game", "sign", "symbols", "gain_cents", "banner", "prize_cents"}
    assert set(ticket["banner"]) == {"text", "multiplier"}


# -- design-v2 and the regulation's rules for any table (issue 12) ------------------------------

V1 = "astro/2005-08-29/design-v1"
SMALL = """
game = "astro"
block_size = 1000
[[tiers]]
prize_cents = 1600000
count = 1
{shows}
{gain_row}
[[tiers]]
prize_cents = 2000
count = 100
[[tiers]]
prize_cents = 200
count = 200
"""
GAIN_ROW = "[[tiers]]\nprize_cents = 800000\ncount = 1\n"


def small(shows: str = "shows = [{ gain_cents = 800000, multiplier = 2 }]", gain_row=GAIN_ROW):
    return SMALL.format(shows=shows, gain_row=gain_row)


def test_new_astro_blocks_are_designed_under_design_v2_and_v1_stays_available():
    assert ASTRO.rules_version == "astro/2005-08-29/design-v2"
    assert find_game("astro", rules_version=V1).rules_version == V1


def test_a_gain_that_is_not_a_prize_of_the_table_is_refused_naming_the_row():
    with pytest.raises(InvalidPrizeTable, match=r"row 1: the Gain 8.000.€ is not a prize"):
        load_table("astro", small(gain_row=""), "t.toml")


def test_design_v1_still_accepts_the_tables_its_blocks_were_made_with():
    load_table("astro", small(gain_row=""), "t.toml", rules_version=V1)


def test_16000_without_shows_is_dressed_as_8000_times_2_never_16000_in_the_gain_box():
    game = find_game("astro", load_table("astro", small(shows=""), "t.toml"))
    assert game.ways_to_show(1_600_000) == [(800_000, 2)]
    assert 1_600_000 not in game.gains
    with pytest.raises(InvalidPrizeTable, match=r"row 1: 16.000.€ is shown only as 8.000.€ × 2"):
        load_table("astro", small(shows="", gain_row=""), "t.toml")


def test_16000_in_the_gain_box_is_refused_even_when_the_row_asks_for_it():
    shows = "shows = [{ gain_cents = 1600000 }]"
    with pytest.raises(InvalidPrizeTable, match="row 1: the Gain 16.000.€ is not a prize"):
        load_table("astro", small(shows=shows), "t.toml")


def test_a_losing_gain_is_drawn_with_the_winners_gain_distribution():
    ways = {t.prize_cents: ASTRO.ways_to_show(t.prize_cents) for t in ASTRO.table.tiers}
    expected: dict[int, Fraction] = {}
    for tier in ASTRO.table.tiers:
        for gain, _ in ways[tier.prize_cents]:
            share = Fraction(tier.count, len(ways[tier.prize_cents]))
            expected[gain] = expected.get(gain, Fraction(0)) + share
    total = sum(expected.values())
    weights = dict(zip(ASTRO.loser_gains, ASTRO.loser_gain_weights, strict=True))
    assert {g: Fraction(w, sum(weights.values())) for g, w in weights.items()} == {
        g: share / total for g, share in expected.items()
    }


@given(seed=seeds, sign=signs)
def test_a_losing_ticket_shows_a_losing_phrase_never_a_multiplier(seed, sign):
    banner = design(0, seed, sign)["banner"]
    assert banner["multiplier"] is None and banner["text"] in LOSING_PHRASES


@given(seed=seeds, prize=st.sampled_from(PRIZES))
def test_a_win_without_multiplier_shows_a_phrase_that_agrees_with_the_win(seed, prize):
    ticket = design(prize, seed)
    if ticket["banner"]["multiplier"] is None:
        assert ticket["banner"]["text"] in PLAIN_WIN_PHRASES
        assert ticket["banner"]["text"] != "Votre étoile brillera une autre fois."


@given(prize=st.sampled_from([0, *PRIZES]), seed=seeds, sign=signs)
def test_a_design_v1_ticket_still_re_derives_and_validates(prize, seed, sign):
    old = find_game(
        "astro",
        load_table("astro", small(gain_row=""), "t.toml", rules_version=V1),
        rules_version=V1,
    )
    prize = prize if prize in (0, 1_600_000, 2000, 200) else 0
    ticket = old.design(prize, SeededRandomness(seed), sign)
    assert old.evaluate(ticket) == prize
    old.validate(ticket)
