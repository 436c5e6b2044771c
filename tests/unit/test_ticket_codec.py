"""The stored form of what a ticket showed (grattage.games.ticket_codec): golden bytes for a
Cash and an Astro ticket, an exact round trip for any ticket of every game and rules version
(the third game, without a format of its own, through the JSON fallback), and revealed zones
as a bit set."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grattage.errors import Inconsistent
from grattage.games import Game, SeededRandomness, find_game, register_game, rules_versions
from grattage.games.astro import PHRASES, SIGNS, SYMBOLS
from grattage.games.ticket_codec import (
    ASTRO_BANNERS,
    ASTRO_DISCS,
    ASTRO_SIGNS,
    ASTRO_V1,
    CASH_V1,
    GENERIC_JSON,
    REVEALED_BITS,
    decode_document,
    decode_revealed,
    encode_document,
    encode_revealed,
)
from toy_game import PileOuFace, toy_table

CASH_TICKET = json.loads(
    '{"game": "cash", "winning_numbers": [9, 12, 24, 28, 31], "your_numbers": ['
    '{"number": 35, "amount_cents": 500}, {"number": 37, "amount_cents": 500}, '
    '{"number": 27, "amount_cents": 500}, {"number": 28, "amount_cents": 1000}, '
    '{"number": 34, "amount_cents": 2000}, {"number": 30, "amount_cents": 500}, '
    '{"number": 13, "amount_cents": 500}, {"number": 32, "amount_cents": 1000}, '
    '{"number": 40, "amount_cents": 500}, {"number": 12, "amount_cents": 1000}, '
    '{"number": 36, "amount_cents": 500}, {"number": 39, "amount_cents": 500}, '
    '{"number": 16, "amount_cents": 500}, {"number": 6, "amount_cents": 500}, '
    '{"number": 22, "amount_cents": 500}, {"number": 26, "amount_cents": 500}, '
    '{"number": 25, "amount_cents": 500}, {"number": 8, "amount_cents": 5000}, '
    '{"number": 4, "amount_cents": 2000}, {"number": 2, "amount_cents": 1000}], '
    '"prize_cents": 2000}'
)
CASH_BYTES = "0104f403e807d00f882724c61c7e395b72278d8283249d01966992040800048004040000000c84d00f"
ASTRO_TICKET = json.loads(
    '{"game": "astro", "sign": "leo", "symbols": ["moon", "sign", "sign", "explosion", '
    '"saturn"], "gain_cents": 800000, "banner": {"text": "Vos gains sont doublés ! (×2)", '
    '"multiplier": 2}, "prize_cents": 1600000}'
)
ASTRO_BYTES = "024200540480ea3080d461"


def _same(a: Any, b: Any) -> bool:
    """Equal values, key order and types included (what the API's JSON would show)."""
    return json.dumps(a) == json.dumps(b)


def test_a_cash_ticket_is_stored_as_its_golden_bytes_and_read_back_exactly() -> None:
    assert encode_document(CASH_TICKET).hex() == CASH_BYTES
    assert _same(decode_document(bytes.fromhex(CASH_BYTES)), CASH_TICKET)
    assert len(CASH_BYTES) // 2 < len(json.dumps(CASH_TICKET, separators=(",", ":"))) // 15


def test_an_astro_ticket_is_stored_as_its_golden_bytes_and_read_back_exactly() -> None:
    assert encode_document(ASTRO_TICKET).hex() == ASTRO_BYTES
    assert _same(decode_document(bytes.fromhex(ASTRO_BYTES)), ASTRO_TICKET)


def test_revealed_zones_are_a_bit_set_over_the_games_zones() -> None:
    cash, astro = find_game("cash").zones, find_game("astro").zones
    some = ["your_numbers/0", "your_numbers/19", "winning_numbers/4"]
    assert encode_revealed(cash, some).hex() == "0101000801"
    assert encode_revealed(astro, astro[:6]).hex() == "013f"
    assert encode_revealed(cash, ()).hex() == "01"
    assert len(encode_revealed(cash, cash)) == 5
    assert decode_revealed(cash, bytes.fromhex("0101000801")) == some


def test_the_frozen_tables_hold_every_sign_disc_and_banner_astro_shows_today() -> None:
    assert ASTRO_SIGNS == SIGNS
    assert ("sign", *SYMBOLS) == ASTRO_DISCS
    assert set(PHRASES.items()) <= set(ASTRO_BANNERS)


@pytest.fixture(scope="module")
def toy() -> Iterator[Game]:
    with register_game(PileOuFace, toy_table()):
        yield find_game(PileOuFace.name)


def _games(toy: Game) -> list[tuple[Game, int | None]]:
    """Every rules version of Cash and Astro, and the toy game: each with its format byte."""
    games: list[tuple[Game, int | None]] = []
    for name, format_byte in (("cash", CASH_V1), ("astro", ASTRO_V1)):
        for version in rules_versions(name):
            games.append((find_game(name, rules_version=version), format_byte))
    games.append((toy, GENERIC_JSON))
    return games


@settings(max_examples=300, deadline=None)
@given(pick=st.data(), seed=st.binary(min_size=1, max_size=32))
def test_any_designed_ticket_of_any_game_reads_back_exactly(
    toy: Game, pick: st.DataObject, seed: bytes
) -> None:
    game, format_byte = pick.draw(st.sampled_from(_games(toy)))
    prize = pick.draw(st.sampled_from([0, *(t.prize_cents for t in game.table.tiers if t.count)]))
    choice = pick.draw(st.sampled_from(game.choices)) if game.choices else None
    document = game.design(prize, SeededRandomness(seed), choice)
    stored = encode_document(document)
    assert stored[0] == format_byte
    assert _same(decode_document(stored), document)
    revealed = [zone for zone in game.zones if pick.draw(st.booleans())]
    bits = encode_revealed(game.zones, revealed)
    assert bits[0] == REVEALED_BITS and decode_revealed(game.zones, bits) == revealed


@given(document=st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda c: (
    st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4)
)))  # fmt: skip
def test_any_json_document_a_compact_format_cannot_hold_is_kept_as_json(document: Any) -> None:
    shaped = {"game": "cash", "extra": document} if not isinstance(document, dict) else document
    stored = encode_document(shaped)
    assert _same(decode_document(stored), shaped)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(prize_cents=True),  # a bool is not an amount
        lambda d: d["your_numbers"][0].update(amount_cents=-5),
        lambda d: d["your_numbers"].__setitem__(
            slice(None), [{"number": i + 1, "amount_cents": i + 1} for i in range(20)]
        ),  # 20 distinct amounts: more than the format's 16
        lambda d: d.update(note="?"),
    ],
)
def test_a_cash_document_off_the_compact_shape_is_stored_as_json_and_read_back(change: Any) -> None:
    document = json.loads(json.dumps(CASH_TICKET))
    change(document)
    stored = encode_document(document)
    assert stored[0] == GENERIC_JSON and _same(decode_document(stored), document)


def test_an_astro_banner_whose_multiplier_disagrees_with_its_phrase_is_kept_as_json() -> None:
    document = json.loads(json.dumps(ASTRO_TICKET))
    document["banner"]["multiplier"] = 3
    assert encode_document(document)[0] == GENERIC_JSON


def test_zones_out_of_the_games_order_or_unknown_are_kept_as_a_list() -> None:
    zones = find_game("astro").zones
    for revealed in (["gain", "symbols/0"], ["nowhere"], ["gain", "gain"]):
        stored = encode_revealed(zones, revealed)
        assert stored[0] != REVEALED_BITS and decode_revealed(zones, stored) == revealed


@pytest.mark.parametrize(
    "stored", ["", "07", "01", CASH_BYTES + "00", ASTRO_BYTES[:-2], "00ff", "005b5d", "02ff"]
)
def test_bytes_that_are_no_stored_ticket_are_an_inconsistency_not_a_guess(stored: str) -> None:
    with pytest.raises(Inconsistent, match="cannot be read"):
        decode_document(bytes.fromhex(stored))


def test_a_bit_beyond_the_games_zones_is_an_inconsistency() -> None:
    with pytest.raises(Inconsistent):
        decode_revealed(find_game("astro").zones, bytes.fromhex("0180"))
