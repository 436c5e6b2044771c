"""Fuzzed ticket documents, prize tables and block files get the documented errors — never a
traceback of another kind.

Each test states the one outcome its input must have: the documented error class (another class,
or no error at all, fails the test), or a success whose result is checked.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grattage.blocks.blockfile import verify_block_file
from grattage.blocks.generation import generate_block_file
from grattage.blocks.proofs import verify_disclosure, verify_ticket_proof
from grattage.errors import (
    InvalidBlockFile,
    InvalidChoice,
    InvalidPrizeTable,
    InvalidTicket,
    VerificationFailed,
)
from grattage.games import SeededRandomness, find_game, load_table
from grattage.games.astro import SIGNS
from grattage.games.cash import NUMBERS

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=25)
        | st.dictionaries(st.text(max_size=12), children, max_size=8)
    ),
    max_leaves=60,
)
GAMES = {name: find_game(name) for name in ("cash", "astro")}


def mutated_documents():
    """Real designs with one field replaced by an arbitrary JSON value."""

    def mutate(args):
        name, seed, key, value = args
        game = GAMES[name]
        document = game.design(0, SeededRandomness(seed), "leo" if name == "astro" else None)
        keys = sorted(document)
        document[keys[key % len(keys)]] = value
        return name, document

    return st.tuples(
        st.sampled_from(sorted(GAMES)), st.binary(max_size=4), st.integers(0, 10), json_values
    ).map(mutate)


def refusal_for(name: str, document: object) -> type[Exception]:
    """What ``validate`` raises for a broken document: InvalidChoice when the broken rule is an
    Astro ticket's sign (checked first, as at purchase), InvalidTicket for every other rule."""
    if (
        name == "astro"
        and isinstance(document, Mapping)
        and document.get("game") == "astro"
        and document.get("sign") not in SIGNS
    ):
        return InvalidChoice
    return InvalidTicket


@given(document=json_values, name=st.sampled_from(sorted(GAMES)))
def test_arbitrary_json_is_refused_as_an_invalid_ticket(document, name):
    with pytest.raises(refusal_for(name, document)) as refused:
        GAMES[name].validate(document)
    assert type(refused.value) is refusal_for(name, document)


def test_an_astro_document_with_an_unknown_sign_is_refused_as_an_invalid_choice():
    with pytest.raises(InvalidChoice, match="'dragon'"):
        GAMES["astro"].validate({"game": "astro", "sign": "dragon"})


@given(mutated_documents())
def test_a_design_with_one_field_replaced_is_valid_or_refused_cleanly(case):
    name, document = case
    try:
        GAMES[name].validate(document)
    except (InvalidTicket, InvalidChoice) as refused:
        assert type(refused) is refusal_for(name, document)
        return
    assert GAMES[name].evaluate(document) == document["prize_cents"]


@given(
    st.lists(
        st.tuples(st.sampled_from(["number", "amount_cents", "x"]), json_values), max_size=3
    ).map(dict)
)
def test_fuzzed_cash_stars_are_refused_as_invalid_tickets_unless_well_formed(star):
    cash = GAMES["cash"]
    document = cash.design(500, SeededRandomness(b"s"))
    document["your_numbers"][0] = star
    well_formed = (
        set(star) == {"number", "amount_cents"}
        and type(star["number"]) is int
        and star["number"] in NUMBERS
        and type(star["amount_cents"]) is int
        and star["amount_cents"] in cash.amounts
    )
    if not well_formed:
        with pytest.raises(InvalidTicket):
            cash.validate(document)
        return
    if star["number"] in {other["number"] for other in document["your_numbers"][1:]}:
        with pytest.raises(InvalidTicket, match="appears twice"):
            cash.validate(document)
        return
    if cash.evaluate(document) != 500:  # the star changed what the matches add up to
        with pytest.raises(InvalidTicket, match="prize_cents is 500 but the win rule gives"):
            cash.validate(document)
        return
    cash.validate(document)


toml_lines = st.lists(
    st.sampled_from(
        [
            'game = "cash"',
            'game = "astro"',
            "block_size = 100",
            "block_size = -5",
            "block_size = 1e3",
            "[[tiers]]",
            "prize_cents = 500",
            "prize_cents = 0",
            "prize_cents = 1600000",
            "count = 3",
            "count = -1",
            'count = "many"',
            "shows = [{ gain_cents = 800000, multiplier = 2 }]",
            "shows = [{ gain_cents = 1, multiplier = 7 }]",
            "shows = [1]",
            "amounts_cents = [500, 1000]",
            "amounts_cents = [0]",
            "[tiers]",
            "= broken",
            'title = "x"',
            "reconstruction = true",
        ]
    ),
    max_size=14,
)


tier_rows = st.lists(
    st.tuples(
        st.sampled_from(["prize_cents = 500", "prize_cents = 1600000", "prize_cents = 2000"]),
        st.sampled_from(["count = 1", "count = 3"]),
        st.sampled_from(
            [
                "",
                "shows = [{ gain_cents = 800000, multiplier = 2 }]",
                "shows = [{ gain_cents = 1, multiplier = 7 }]",
                "shows = [{ gain_cents = 1000, multiplier = 2 }]",
            ]
        ),
    ),
    min_size=1,
    max_size=3,
).map(lambda rows: ["block_size = 100", *("\n".join(("[[tiers]]", *row)) for row in rows)])
"""Files that parse more often, so that the game's own checks (which dress the prizes) run."""


@given(
    st.one_of(
        toml_lines,
        st.tuples(st.sampled_from(['game = "cash"', 'game = "astro"']), tier_rows).map(
            lambda pair: [pair[0], *pair[1]]
        ),
    ),
    st.sampled_from(["cash", "astro"]),
)
def test_fuzzed_prize_table_files_are_accepted_or_refused_naming_the_file(lines, name):
    try:
        table = load_table(name, "\n".join(lines), "fuzz.toml")
    except InvalidPrizeTable as refused:
        assert refused.message.startswith("fuzz.toml: "), refused.message
        return
    assert table.game == name
    assert 0 < table.prizes_count <= table.block_size
    assert find_game(name, table).table == table


@given(st.binary(max_size=300))
def test_random_bytes_are_not_a_block_file(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.block"
        path.write_bytes(data)
        with pytest.raises(InvalidBlockFile):
            verify_block_file(path)


_SMALL = 'game = "cash"\nblock_size = 64\n[[tiers]]\nprize_cents = 500\ncount = 10\n'


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=100)
@given(
    offset=st.integers(-64, -1) | st.integers(0, 5000),  # negative: one of the 64 units
    value=st.integers(0, 255),
    cut=st.just(0) | st.integers(0, 5000),
)
def test_a_damaged_block_file_is_reported_not_crashed_on(offset, value, cut):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "small.block"
        generate_block_file(find_game("cash", load_table("cash", _SMALL, "s")), path)
        original = path.read_bytes()
        data = bytearray(original)
        data[offset % len(data)] = value
        damaged = bytes(data[: max(1, len(data) - cut % 50)])
        path.write_bytes(damaged)
        units_start = len(original) - 64
        if damaged[units_start:] != original[units_start:]:  # a unit changed or cut off
            with pytest.raises(InvalidBlockFile):
                verify_block_file(path)
            return
        try:  # only the header changed: refused, unless in a field no hash covers
            verified = verify_block_file(path)
        except InvalidBlockFile:
            return
        assert verified.counts == [54, 10]


@given(json_values)
def test_fuzzed_proofs_and_disclosures_fail_verification_cleanly(value):
    documents = (
        value,
        {"format": "grattage-ticket-proof/1", "commitment": value},
        {"format": "grattage-disclosure/1", "commitment": value},
    )
    for check in (verify_ticket_proof, verify_disclosure):
        for document in documents:
            with pytest.raises(VerificationFailed):
                check(document)
