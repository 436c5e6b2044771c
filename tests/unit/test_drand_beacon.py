"""drand behind the Beacon port (grattage.adapters.drand_beacon), on recorded rounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grattage.adapters.drand_beacon import DEFAULT, QUICKNET, DrandBeacon, check_drand_round
from grattage.errors import NotFound, Unavailable, VerificationFailed

ROUNDS = json.loads((Path(__file__).parents[1] / "fixtures" / "drand_rounds.json").read_text())
QUICK, CHAINED = ROUNDS["quicknet"], ROUNDS["default"]


def test_a_recorded_quicknet_round_verifies_and_its_value_is_its_randomness():
    checked = check_drand_round(QUICK, QUICKNET)
    assert checked.value.hex() == QUICK["randomness"] and checked.round == QUICK["round"]
    assert checked.time_ms == (QUICKNET.genesis_time + (QUICK["round"] - 1) * 3) * 1000


def test_a_recorded_default_chain_round_verifies():
    assert check_drand_round(CHAINED, DEFAULT).value.hex() == CHAINED["randomness"]


def test_a_quicknet_signature_presented_for_another_round_is_refused():
    with pytest.raises(VerificationFailed, match="signature"):
        check_drand_round({**QUICK, "round": QUICK["round"] + 1}, QUICKNET)


def test_a_default_chain_round_with_another_previous_signature_is_refused():
    forged = {**CHAINED, "previous_signature": CHAINED["signature"]}
    with pytest.raises(VerificationFailed, match="signature"):
        check_drand_round(forged, DEFAULT)


@pytest.mark.parametrize("signature", ["", "zz", "00" * 48, "c0" + "00" * 47])
def test_a_malformed_or_forged_signature_is_refused(signature):
    with pytest.raises(VerificationFailed):
        check_drand_round({**QUICK, "signature": signature}, QUICKNET)


def test_a_randomness_that_is_not_the_hash_of_the_signature_is_refused():
    with pytest.raises(VerificationFailed, match="randomness"):
        check_drand_round({**QUICK, "randomness": "00" * 32}, QUICKNET)


def test_the_drand_beacon_fetches_and_checks_through_its_relay():
    asked = []

    def recorded(url: str) -> object:
        asked.append(url)
        return QUICK

    beacon = DrandBeacon("https://relay.example/", QUICKNET, fetch=recorded)
    assert beacon.round(QUICK["round"]).value.hex() == QUICK["randomness"]
    assert asked == [f"https://relay.example/{QUICKNET.chain_hash}/public/{QUICK['round']}"]
    with pytest.raises(VerificationFailed, match="answered round"):
        beacon.round(QUICK["round"] - 1)


def test_waiting_for_a_drand_round_far_ahead_is_not_found():
    beacon = DrandBeacon("https://relay.example", QUICKNET, fetch=lambda _url: QUICK)
    with pytest.raises(NotFound):
        beacon.round(10**9, wait=True)


def test_an_unreachable_drand_relay_is_unavailable():
    with pytest.raises(Unavailable):
        DrandBeacon("http://127.0.0.1:9", QUICKNET).latest()
