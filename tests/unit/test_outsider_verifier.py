"""The docs are enough: a verifier written from docs/fairness.md and docs/games.md alone
(``outsider_verifier.py``: the standard library and ``cryptography``, nothing of grattage)
accepts the version-2 proofs the platform hands out, and refuses them once anything is edited.

grattage is imported here only to produce the proofs to check."""

from __future__ import annotations

import ast
import base64
import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import outsider_designs
import outsider_verifier
import pytest
from fastapi.testclient import TestClient
from forged_logs import reforged, vector_entries, vector_keys
from outsider_verifier import Refused, consistent, verify, verify_disclosure

from grattage.blocks.signing import Signer
from grattage.entrypoints.http import create_app
from grattage.service import transparency
from grattage.service.emissions import close_block, list_blocks
from grattage.service.key_rotation import rotate_key
from support import PASSWORD, World, make_world

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"
CSRF = {"X-Grattage-CSRF": "1"}


def vectors() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "transparency_vectors.json").read_text("utf-8"))
    return data


@pytest.mark.parametrize("module", [outsider_verifier, outsider_designs])
def test_the_outsider_verifier_imports_only_the_standard_library_and_cryptography(
    module: ModuleType,
) -> None:
    tree = ast.parse(Path(str(module.__file__)).read_text("utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(str(node.module).split(".")[0])
    allowed = {"__future__", "base64", "hashlib", "json", "typing", "cryptography"}
    assert imported <= allowed | {"outsider_designs"}


@pytest.mark.parametrize("name", ["cash_proof", "astro_proof", "cash_proof_losing"])
def test_the_outsider_verifier_accepts_the_vectors_proofs_pinned(name: str) -> None:
    assert verify(vectors()[name], vectors()["sth"]["head"]) == "PINNED"
    assert verify(vectors()[name]) == "UNPINNED"


class Served:
    """What the platform served: proofs with the head then, disclosures, the operator key."""

    def __init__(self) -> None:
        self.proofs: list[tuple[Any, Any]] = []
        self.disclosures: list[Any] = []
        self.key = b""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Tickets of both games bought through the HTTP API, then their blocks closed."""
    # undrawn blocks: the outsider verifier of a drawn ticket comes with the verifiers of issue 15
    with make_world("sqlite", tmp_path_factory.mktemp("outsider"), drawn=False) as world:
        yield _buy_prove_and_close(world)


def _buy_prove_and_close(world: World) -> Served:
    served = Served()
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as client:
        world.player(50_000, email="outsider@example.org")
        login = {"email": "outsider@example.org", "password": PASSWORD}
        assert client.post("/api/sessions", json=login).status_code == 200
        for game in ("cash", "astro"):
            world.stock(game)
            signs: list[str | None] = ["leo", "pisces", "aries", None, None, None]
            # six tickets per game; the last game buys on until the proofs hold a winner and a
            # loser (the blocks are random: twelve losing tickets come about once in forty runs)
            last = game == "astro"
            while signs or (last and not _a_winner_and_a_loser(served)):
                assert len(served.proofs) < 80, "no winner and loser in 80 tickets"
                sign = signs.pop(0) if signs else None
                body = {"mode": "auto", **({"sign": sign or "virgo"} if game == "astro" else {})}
                bought = client.post(f"/api/games/{game}/tickets", json=body, headers=CSRF)
                assert bought.status_code == 201, bought.text
                proof = client.get(f"/api/tickets/{bought.json()['id']}/proof")
                assert proof.status_code == 200, proof.text
                served.proofs.append((proof.json(), client.get("/api/log/sth").json()))
        for block in list_blocks(world.platform):
            close_block(world.platform, block.id)
            disclosure = client.get(f"/api/blocks/{block.id}/disclosure")
            assert disclosure.status_code == 200, disclosure.text
            served.disclosures.append(disclosure.json())
        served.key = bytes.fromhex(client.get("/api/log/key").json()["public_key"])
    return served


def _a_winner_and_a_loser(served: Served) -> bool:
    prizes = {bool(proof["unit"]["prize_cents"]) for proof, _ in served.proofs}
    return prizes == {True, False}


def test_the_outsider_verifier_accepts_every_proof_the_platform_serves(served: Served) -> None:
    assert len(served.proofs) >= 12
    games = {proof["commitment"]["game"] for proof, _ in served.proofs}
    assert games == {"cash", "astro"}
    versions = {proof["commitment"]["rules_version"] for proof, _ in served.proofs}
    assert versions == {"cash/2009-03-16/design-v2", "astro/2005-08-29/design-v2"}
    assert any(proof["unit"]["prize_cents"] for proof, _ in served.proofs)
    assert any(not proof["unit"]["prize_cents"] for proof, _ in served.proofs)
    for proof, head in served.proofs:
        assert verify(proof, head) == "PINNED"


def test_the_outsider_verifier_rebuilds_every_disclosure_the_platform_serves(
    served: Served,
) -> None:
    assert len(served.disclosures) == 2
    for disclosure in served.disclosures:
        counts = verify_disclosure(disclosure, served.key)
        assert sum(counts) == disclosure["commitment"]["size"]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(proof: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        target: Any = proof
        for name in parents:
            target = target[int(name)] if isinstance(target, list) else target[name]
        if isinstance(target, list):
            target[int(last)] = value(target[int(last)]) if callable(value) else value
        else:
            target[last] = value(target[last]) if callable(value) else value

    return edit


def _flip(hex_text: str) -> str:
    return ("1" if hex_text[0] == "0" else "0") + hex_text[1:]


EDITS = {
    "the prize": _set("unit/prize_cents", lambda p: p + 500),
    "the tier": _set("unit/tier", lambda t: (t + 1) % 4),
    "the salt": _set("unit/salt", _flip),
    "a unit path node": _set("unit/path/0", _flip),
    "the position": _set("unit/position", lambda p: p + 1),
    "the ticket's prize": _set("ticket/prize_cents", lambda p: p + 1),
    "the receipt's position": _set("receipt/position", lambda p: p + 1),
    "the committed root": _set("commitment/root", _flip),
    "the committed size": _set("commitment/size", lambda s: s + 1),
    "the commitment time": _set("commitment/created_at", "2020-01-01T00:00:00.000000Z"),
    "a table prize": _set("commitment/table/tiers/0/prize_cents", lambda p: p + 100),
    "the head's root": _set("log/sth/root_hash", _flip),
    "the head's size": _set("log/sth/tree_size", lambda s: s + 1),
    "a receipt entry path node": _set("log/receipt_entry/path/0", _flip),
    "the commitment entry index": _set("log/commitment_entry/index", lambda i: i + 1),
}


@pytest.mark.parametrize("what", EDITS)
def test_the_outsider_verifier_refuses_a_proof_with_one_edit(what: str) -> None:
    proof = copy.deepcopy(vectors()["cash_proof"])
    EDITS[what](proof)
    with pytest.raises((Refused, KeyError, IndexError, ValueError)):
        verify(proof, vectors()["sth"]["head"])


def test_the_outsider_verifier_refuses_a_symbol_of_the_ticket_changed() -> None:
    proof = copy.deepcopy(vectors()["astro_proof"])
    symbols = proof["ticket"]["symbols"]
    symbols[symbols.index("sign")] = "moon" if "moon" not in symbols else "sun"
    with pytest.raises(Refused, match="committed design"):
        verify(proof, vectors()["sth"]["head"])


def test_the_outsider_verifier_refuses_a_proof_against_another_head_than_the_pinned_one() -> None:
    pinned = dict(vectors()["sth"]["head"], tree_size=3)
    with pytest.raises(Refused, match="pinned"):
        verify(vectors()["cash_proof"], pinned)


def test_the_outsider_verifier_checks_the_vectors_consistency_proofs() -> None:
    log = vectors()["log"]
    roots = [bytes.fromhex(root) for root in log["roots"]]
    for item in log["consistency"]:
        proof = [bytes.fromhex(node) for node in item["proof"]]
        first, second = item["first"], item["second"]
        assert consistent(first, second, roots[first], roots[second], proof)
        assert not consistent(first, second, roots[first], roots[second - 1], proof)
        assert not consistent(first, second, roots[first], roots[second], proof[:-1])


def test_the_outsider_verifier_rebuilds_a_disclosure_and_refuses_two_tiers_swapped() -> None:
    disclosure = vectors()["disclosure"]["document"]
    key = bytes.fromhex(vectors()["operator_key"]["public_key"])
    assert verify_disclosure(disclosure, key) == [7, 1, 2, 3]
    tiers = bytearray(base64.b64decode(disclosure["tiers"]))
    tiers[0], tiers[1] = tiers[1], tiers[0]
    swapped = dict(disclosure, tiers=base64.b64encode(bytes(tiers)).decode("ascii"))
    with pytest.raises(Refused, match="root"):
        verify_disclosure(swapped, key)


# -- key rotation (fairness.md, "Key rotation") ---------------------------------------------------
@pytest.mark.parametrize("name", ["astro_proof", "cash_proof"])
def test_the_outsider_verifier_follows_the_vectors_rotation(name: str) -> None:
    rotation = vectors()["rotation"]
    for key in rotation["history"]:
        pinned_key = bytes.fromhex(key["public_key"])
        assert verify(rotation[name], rotation["sth"]["head"], pinned_key) == "PINNED"


def test_the_outsider_verifier_refuses_a_key_change_signed_by_the_new_key_only() -> None:
    _, new = vector_keys()
    entries = vector_entries(rotated=True)
    change = new.sign_document("key-change", entries[11]["key_change"])
    entries[11] = {**entries[11], "key_change": change}
    with pytest.raises(Refused, match="key-change: bad signature"):
        verify(reforged(vectors()["rotation"]["astro_proof"], entries, new))


def test_the_outsider_verifier_refuses_a_receipt_of_the_retired_key_after_the_change() -> None:
    old, new = vector_keys()
    entries = vector_entries(rotated=True)
    receipt = old.sign_document("receipt", {**entries[12]["receipt"], "key_id": old.key_id})
    entries[12] = {**entries[12], "receipt": receipt}
    with pytest.raises(Refused, match="the receipt names another key"):
        verify(reforged(vectors()["rotation"]["astro_proof"], entries, new))


def test_the_outsider_verifier_refuses_a_head_of_a_key_the_history_does_not_hold() -> None:
    proof = copy.deepcopy(vectors()["rotation"]["cash_proof"])
    del proof["log"]["key_changes"]
    with pytest.raises(Refused, match="the head names another key"):
        verify(proof)


def test_the_outsider_verifier_refuses_a_head_signed_by_a_key_outside_the_history() -> None:
    stranger = Signer(bytes(range(3, 35)))
    proof = reforged(vectors()["rotation"]["astro_proof"], vector_entries(rotated=True), stranger)
    with pytest.raises(Refused, match="the head names another key"):
        verify(proof)


def test_the_outsider_verifier_accepts_proofs_served_across_a_rotation(tmp_path: Path) -> None:
    with make_world("sqlite", tmp_path, drawn=False) as world:  # undrawn: v1 proofs
        app = create_app(world.settings, platform=world.platform, mount_web=False)
        with TestClient(app) as client:
            world.player(5_000, email="rotation@example.org")
            login = {"email": "rotation@example.org", "password": PASSWORD}
            assert client.post("/api/sessions", json=login).status_code == 200
            world.stock("cash")
            buy = lambda: client.post(  # noqa: E731
                "/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF
            ).json()["id"]
            before = [buy(), buy()]
            transparency.integrate_all(world.platform)
            rotate_key(world.platform)
            after = [buy(), buy()]
            keys = [
                bytes.fromhex(k["public_key"]) for k in client.get("/api/log/key").json()["keys"]
            ]
            assert len(keys) == 2
            for ticket in before + after:
                proof = client.get(f"/api/tickets/{ticket}/proof").json()
                head = client.get("/api/log/sth").json()
                for pinned_key in keys:
                    assert verify(proof, head, pinned_key) == "PINNED"
