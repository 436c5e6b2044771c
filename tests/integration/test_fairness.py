"""Provably fair blocks through the platform: commitments before sale, proofs for finished
tickets of both games, disclosures once a block ends, and no unsold prize anywhere."""

from __future__ import annotations

import json
import logging

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import MetaData, create_engine, select

from grattage.blocks.proofs_v2 import verify_disclosure, verify_ticket_proof
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import unseal_tiers
from grattage.blocks.signing import TreeHead
from grattage.errors import VerificationFailed
from grattage.service.emissions import close_block, list_blocks
from support import PASSWORD, World

CSRF = {"X-Grattage-CSRF": "1"}


@pytest.fixture
def world_settings() -> dict[str, object]:
    """Blocks that sell unit n to sale n: the proof of a drawn ticket (proof v2 with its draw)
    is the verifiers' part of issue 15, tested with it."""
    return {"drawn": False}


def signed_in(client: TestClient, world: World, balance_cents: int = 10_000) -> int:
    player = world.player(balance_cents, email="fair@example.org")
    response = client.post(
        "/api/sessions", json={"email": "fair@example.org", "password": PASSWORD}
    )
    assert response.status_code == 200
    return player


def buy_auto(client: TestClient, game: str) -> dict:
    body = {"mode": "auto", **({"sign": "virgo"} if game == "astro" else {})}
    response = client.post(f"/api/games/{game}/tickets", json=body, headers=CSRF)
    assert response.status_code == 201, response.text
    return response.json()


def test_the_commitment_answers_before_any_sale_and_never_changes(client, world):
    world.stock("cash")
    block_id = list_blocks(world.platform, "cash")[0].id
    before = client.get(f"/api/blocks/{block_id}/commitment")
    assert before.status_code == 200
    assert before.json()["size"] == list_blocks(world.platform, "cash")[0].size
    assert list_blocks(world.platform, "cash")[0].sold == 0
    signed_in(client, world)
    for _ in range(3):
        buy_auto(client, "cash")
    assert client.get(f"/api/blocks/{block_id}/commitment").json() == before.json()


@pytest.mark.parametrize("game", ["cash", "astro"])
def test_a_finished_ticket_s_proof_verifies_offline(client, world, game):
    world.stock(game)
    signed_in(client, world)
    key = bytes.fromhex(client.get("/api/log/key").json()["public_key"])
    for _ in range(4):
        ticket = buy_auto(client, game)
        assert ticket["receipt"]["ticket_id"] == ticket["id"]
        proof = client.get(f"/api/tickets/{ticket['id']}/proof")
        assert proof.status_code == 200, proof.text
        pinned = TreeHead.from_json(client.get("/api/log/sth").json())
        verified = verify_ticket_proof(json.loads(proof.text), pinned=pinned, public_key=key)
        assert verified.pinned and verified.prize_cents == ticket["prize_cents"]
        assert verified.receipt == ticket["receipt"]
        assert proof.json()["ticket"]["prize_cents"] == ticket["document"]["prize_cents"]


def test_a_ticket_reopened_or_resumed_carries_the_receipt_its_purchase_answered(client, world):
    world.stock("cash")
    signed_in(client, world)
    bought = client.post("/api/games/cash/tickets", json={"mode": "play"}, headers=CSRF).json()
    assert bought["receipt"]["ticket_id"] == bought["id"]
    # Still queued (not yet merged into the log), then merged: the same signed receipt.
    assert client.get("/api/me/tickets/last").json()["receipt"] == bought["receipt"]
    client.get(f"/api/tickets/{buy_auto(client, 'cash')['id']}/proof")  # merges the queue
    assert client.get(f"/api/tickets/{bought['id']}").json()["receipt"] == bought["receipt"]


def test_a_ticket_still_playing_has_no_proof_yet(client, world):
    world.stock("cash")
    signed_in(client, world)
    body = {"mode": "play"}
    ticket = client.post("/api/games/cash/tickets", json=body, headers=CSRF).json()
    response = client.get(f"/api/tickets/{ticket['id']}/proof")
    assert response.status_code == 409
    assert response.json()["error"] == "conflict"


def test_another_player_s_proof_is_not_found(client, world):
    world.stock("cash")
    signed_in(client, world)
    ticket = buy_auto(client, "cash")
    client.delete("/api/sessions", headers=CSRF)
    world.player(1000, email="other@example.org")
    client.post("/api/sessions", json={"email": "other@example.org", "password": PASSWORD})
    assert client.get(f"/api/tickets/{ticket['id']}/proof").status_code == 404


def test_an_open_block_is_not_disclosed(client, world):
    world.stock("astro")
    block_id = list_blocks(world.platform, "astro")[0].id
    response = client.get(f"/api/blocks/{block_id}/disclosure")
    assert response.status_code == 409
    assert "disclosed once it is exhausted or closed" in response.json()["message"]


def test_a_closed_block_s_disclosure_rebuilds_the_root_and_recounts(client, world):
    world.stock("astro")
    signed_in(client, world)
    buy_auto(client, "astro")
    block_id = list_blocks(world.platform, "astro")[0].id
    close_block(world.platform, block_id)
    response = client.get(f"/api/blocks/{block_id}/disclosure")
    assert response.status_code == 200
    key = bytes.fromhex(client.get("/api/log/key").json()["public_key"])
    verified = verify_disclosure(response.json(), key, workers=1)
    assert sum(verified.counts) == verified.block.size
    tampered = response.json()
    tampered["key"] = "00" * 32
    with pytest.raises(VerificationFailed):
        verify_disclosure(tampered, key, workers=1)


def test_an_unknown_block_is_not_found(client, world):
    assert client.get("/api/blocks/999/commitment").status_code == 404
    assert client.get("/api/blocks/0/commitment").status_code == 422


def test_nothing_stored_or_served_reveals_an_unsold_prize(client, world, caplog):
    caplog.set_level(logging.DEBUG)
    world.stock("cash")
    signed_in(client, world)
    sold = [buy_auto(client, "cash") for _ in range(3)]
    block = list_blocks(world.platform, "cash")[0]
    key = world.platform.keys.get(block.key_id)
    with world.platform.uow.read() as repos:
        tiers = unseal_tiers(key, repos.blocks.sealed_tiers(block, 0, block.size), 0)
    unsold_salts = [unit_salt(key, p) for p in range(len(sold), block.size)]
    secrets_to_hide = [key, key.hex().encode(), tiers[len(sold) :]]
    secrets_to_hide += [s for salt in unsold_salts[:50] for s in (salt, salt.hex().encode())]

    engine = create_engine(world.settings.database_url)
    stored = []
    with engine.connect() as connection:
        meta = MetaData()
        meta.reflect(connection)
        for table in meta.sorted_tables:
            for row in connection.execute(select(table)):
                for value in row:
                    if isinstance(value, bytes | memoryview):
                        stored.append(bytes(value))
                    elif value is not None:
                        stored.append(str(value).encode())
    engine.dispose()
    served = [
        client.get(path).content
        for path in (
            "/api/games",
            "/api/blocks",
            f"/api/blocks/{block.id}/commitment",
            "/api/me/tickets",
        )
    ]
    logged = [record.getMessage().encode() for record in caplog.records]
    for haystack in stored + served + logged:
        for needle in secrets_to_hide:
            assert needle not in haystack
