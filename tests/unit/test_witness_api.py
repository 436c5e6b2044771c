"""The witness's HTTP app (grattage.entrypoints.http.witness_app): hostile input answers a
clear 4xx, never a 500; rounds are never answered before their time."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from grattage.adapters.witness_store import SqliteWitnessStore
from grattage.entrypoints.http.witness_app import create_witness_app, wall_clock_ms
from grattage.errors import InvalidInput
from grattage.service.witness import initialise
from grattage.settings import WitnessSettings
from operator_log import OperatorLog

PERIOD = 0.2


@pytest.fixture
def operator():
    return OperatorLog()


@pytest.fixture
def client(tmp_path, operator):
    initialise(SqliteWitnessStore(tmp_path, create=True), wall_clock_ms() - 1000, 200, 10_000)
    settings = WitnessSettings(
        data_dir=tmp_path,
        beacon_seconds=PERIOD,
        chain_length=10_000,
        operator_public_key=operator.signer.public_key.hex(),
    )
    with TestClient(create_witness_app(settings), raise_server_exceptions=False) as client:
        yield client


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"\xff\xfe\x00",
        b"[]",
        b'{"sth": 1, "round": 1, "consistency": []}',
        b'{"sth": {}, "round": 1, "consistency": []}',
        b'{"sth": {"format": "grattage-sth/1"}, "round": 1, "consistency": []}',
        b'{"sth": {}, "round": -1, "consistency": []}',
        b'{"sth": {}, "round": 1, "consistency": ["00"], "extra": 1}',
        b'{"sth": {}, "round": 99999999999999999999999, "consistency": []}',
        b'{"sth": {}, "round": 1, "consistency": [], "chain_id": "../../etc"}',
        b"[" * 5000 + b"]" * 5000,
    ],
)
def test_a_hostile_cosign_body_is_a_4xx_json_error(client, body):
    answer = client.post(
        "/witness/cosign", content=body, headers={"Content-Type": "application/json"}
    )
    assert 400 <= answer.status_code < 500, answer.text
    assert "error" in answer.json()


def test_a_body_over_64_kib_is_refused_with_413(client):
    answer = client.post("/witness/cosign", content=b"{" + b" " * 70_000 + b"}")
    assert answer.status_code == 413


@pytest.mark.parametrize(
    "path",
    [
        "/witness/rounds/0",
        "/witness/rounds/-1",
        "/witness/rounds/x",
        "/witness/rounds/99999999999999999999999",
        "/witness/rounds/1?chain_id=zz",
        "/witness/cosigned",
        "/witness/cosigned?round=0",
        "/witness/chain?chain_id=" + "0" * 64,
    ],
)
def test_hostile_reads_are_a_4xx_json_error(client, path):
    answer = client.get(path)
    assert 400 <= answer.status_code < 500 and "error" in answer.json(), answer.text


def test_a_round_ahead_is_404_and_wait_answers_it_at_its_time(client):
    latest = client.get("/witness/rounds/latest").json()
    ahead = latest["round"] + 2
    early = client.get(f"/witness/rounds/{ahead}")
    assert early.status_code == 404 and early.headers["cache-control"] == "no-store"
    waited = client.get(f"/witness/rounds/{ahead}", params={"wait": 1})
    assert waited.status_code == 200
    assert waited.json()["time_ms"] <= wall_clock_ms()
    assert client.get(f"/witness/rounds/{ahead + 100}", params={"wait": 1}).status_code == 404


def test_the_app_refuses_to_start_without_the_operator_key(tmp_path):
    with pytest.raises(InvalidInput, match="OPERATOR_PUBLIC_KEY"):
        create_witness_app(WitnessSettings(data_dir=tmp_path))


def test_time_moves_on(client):
    first = client.get("/witness/rounds/latest").json()["round"]
    time.sleep(PERIOD * 1.5)
    assert client.get("/witness/rounds/latest").json()["round"] > first
