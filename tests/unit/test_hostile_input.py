"""Fuzzed ticket documents, prize tables and block files get the documented errors — never a
traceback of another kind."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grattage.blocks.blockfile import verify_block_file
from grattage.blocks.generation import generate_block_file
from grattage.blocks.proofs import verify_disclosure, verify_ticket_proof
from grattage.errors import InvalidInput, VerificationFailed
from grattage.games import SeededRandomness, find_game, load_table

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


@given(document=json_values, name=st.sampled_from(sorted(GAMES)))
def test_arbitrary_json_is_refused_as_an_invalid_ticket(document, name):
    with contextlib.suppress(InvalidInput):
        GAMES[name].validate(document)


@given(mutated_documents())
def test_a_design_with_one_field_replaced_is_valid_or_refused_cleanly(case):
    name, document = case
    try:
        GAMES[name].validate(document)
    except InvalidInput:
        return
    assert GAMES[name].evaluate(document) == document["prize_cents"]


@given(
    st.lists(
        st.tuples(st.sampled_from(["number", "amount_cents", "x"]), json_values), max_size=3
    ).map(dict)
)
def test_fuzzed_cash_stars_are_refused_cleanly(star):
    document = GAMES["cash"].design(500, SeededRandomness(b"s"))
    document["your_numbers"][0] = star
    with contextlib.suppress(InvalidInput):
        GAMES["cash"].validate(document)


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


@given(toml_lines, st.sampled_from(["cash", "astro"]))
def test_fuzzed_prize_table_files_are_accepted_or_refused_cleanly(lines, name):
    with contextlib.suppress(InvalidInput):
        load_table(name, "\n".join(lines), "fuzz.toml")


@given(st.binary(max_size=300))
def test_random_bytes_are_not_a_block_file(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.block"
        path.write_bytes(data)
        with contextlib.suppress(InvalidInput, VerificationFailed):
            verify_block_file(path)


_SMALL = 'game = "cash"\nblock_size = 64\n[[tiers]]\nprize_cents = 500\ncount = 10\n'


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=100)
@given(offset=st.integers(0, 5000), value=st.integers(0, 255), cut=st.integers(0, 5000))
def test_a_damaged_block_file_is_reported_not_crashed_on(offset, value, cut):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "small.block"
        generate_block_file(find_game("cash", load_table("cash", _SMALL, "s")), path)
        data = bytearray(path.read_bytes())
        data[offset % len(data)] = value
        path.write_bytes(bytes(data[: max(1, len(data) - cut % 50)]))
        with contextlib.suppress(InvalidInput, VerificationFailed):
            verify_block_file(path)


@given(json_values)
def test_fuzzed_proofs_and_disclosures_fail_verification_cleanly(value):
    documents = (
        value,
        {"format": "grattage-ticket-proof/1", "commitment": value},
        {"format": "grattage-disclosure/1", "commitment": value},
    )
    for check in (verify_ticket_proof, verify_disclosure):
        for document in documents:
            with contextlib.suppress(VerificationFailed):
                check(document)
