"""Rotating the operator key on a real database (SQLite and PostgreSQL): the new key is on disk
before it rules, the log hands over at the index after its ``key.change``, sales in flight on
many threads never land a receipt of the old key after it, and the monitor and the proof
checker follow it."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from grattage.adapters.local_witness import ManualMsClock
from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.proofs_v2 import verify_ticket_proof
from grattage.blocks.signing import Signer, TreeHead, check_document
from grattage.entrypoints.cli.monitor import watch
from grattage.errors import SoldOut, VerificationFailed
from grattage.service import fairness, tickets, transparency
from grattage.service.drawer import Drawer
from grattage.service.key_rotation import rotate_key
from support import DATABASES, World, make_world

from .test_monitor import ServedLog


@pytest.fixture
def world_settings() -> dict[str, object]:
    """The ``world`` of these tests sells undrawn (v1 receipts, a result at the sale): the
    drawn sales across a rotation have worlds of their own (``make_world(drawn=True)``)."""
    return {"drawn": False}


def sell(world: World, player: int, count: int) -> list[int]:
    return [
        tickets.buy(world.platform, player, game_name="cash", mode="auto")[0].id
        for _ in range(count)
    ]


def receipts(world: World) -> list[tuple[int, dict[str, Any]]]:
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    listed: list[dict[str, Any]] = []
    while len(listed) < size:
        listed += transparency.entries(world.platform, len(listed), size - 1)
    return [
        (item["index"], item["entry"]["receipt"])
        for item in listed
        if item["entry"]["kind"] == "sale.receipt"
    ]


def test_a_rotation_hands_the_log_to_the_new_key_at_the_index_after_its_change(
    world: World, client: TestClient
) -> None:
    world.stock("cash", blocks=2)
    player = world.player(100 * 500)
    before = sell(world, player, 3)
    transparency.integrate_all(world.platform)
    old = world.platform.signer()
    log = ServedLog(client)
    seen, _ = watch(log, None)  # a monitor that knew only the first key
    state = json.loads(json.dumps(seen.to_json()))
    sell(world, player, 2)  # queued, not yet merged: the rotation places them first

    rotation = rotate_key(world.platform, actor="test")
    new = world.platform.signer()
    assert (rotation.old_key_id, rotation.new_key_id) == (old.key_id, new.key_id)
    assert rotation.integrated == 2  # the two receipts queued since the last merge
    assert rotation.head.tree_size == rotation.from_index == rotation.change_index + 1
    after = sell(world, player, 3)

    stored = world.settings.key_dir / f"operator-ed25519-{new.key_id}.key"
    assert stored.stat().st_mode & 0o777 == 0o600
    assert Signer(stored.read_bytes()).key_id == new.key_id
    assert (world.settings.key_dir / "operator-ed25519.key").exists()  # kept, retired
    answer = client.get("/api/log/key").json()
    assert (answer["public_key"], answer["key_id"]) == (new.public_key.hex(), new.key_id)
    assert answer["keys"] == [
        {"key_id": old.key_id, "public_key": old.public_key.hex(), "from_index": 0,
         "change_index": None},
        {"key_id": new.key_id, "public_key": new.public_key.hex(),
         "from_index": rotation.from_index, "change_index": rotation.change_index},
    ]  # fmt: skip
    for index, receipt in receipts(world):
        signer = new if index > rotation.change_index else old
        assert receipt["key_id"] == signer.key_id, index
        check_document("receipt", receipt, signer.public_key)

    resumed, checked = watch(log, LogAuditor.from_json(state))
    assert checked > 0 and resumed.public_key == new.public_key
    assert watch(log, None)[0].keys.periods == resumed.keys.periods  # a new monitor, from key 1

    head = log.head()
    chain = log.key_chain(head)
    for ticket_id in (before[0], after[-1]):
        proof = fairness.ticket_proof(world.platform, player, ticket_id)
        assert proof["operator_key"] == old.public_key.hex()
        assert [part["index"] for part in proof["log"]["key_changes"]] == [rotation.change_index]
        for pinned in (old.public_key, new.public_key):
            verify_ticket_proof(proof, public_key=pinned, log_keys=chain)
        assert verify_ticket_proof(proof, pinned=head).pinned


class EditedKeyHistory(ServedLog):
    """A log whose key list was edited in the database (the outsider's backdated rotation):
    its entries are the log's, its ``GET /api/log/key`` says the new key ruled earlier."""

    def get(self, path: str, **params: int) -> Any:
        answer = super().get(path, **params)
        if path == "key":
            answer["keys"][-1]["from_index"] -= 3
        return answer


def test_a_key_history_edited_in_the_database_is_named_by_the_monitor(
    world: World, client: TestClient
) -> None:
    world.stock("cash")
    player = world.player(100 * 500)
    sell(world, player, 4)
    rotate_key(world.platform, actor="test")
    sell(world, player, 2)
    transparency.integrate_all(world.platform)
    assert watch(ServedLog(client), None)[1] > 0  # the log as served: clean
    with pytest.raises(VerificationFailed, match="another key history than the log's"):
        watch(EditedKeyHistory(client), None)


def test_a_rotation_that_fails_before_its_commit_leaves_no_stray_key_file(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.stock("cash")
    sell(world, world.player(10 * 500), 2)
    before = world.platform.signer().key_id
    files = sorted(path.name for path in world.settings.key_dir.iterdir())

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the process fails between the new key's file and the commit")

    monkeypatch.setattr(transparency, "sign_head", broken)
    with pytest.raises(RuntimeError):
        rotate_key(world.platform, actor="test")
    monkeypatch.undo()
    assert sorted(path.name for path in world.settings.key_dir.iterdir()) == files
    assert world.platform.signer().key_id == before
    assert rotate_key(world.platform, actor="test").old_key_id == before  # and it can go on


def test_a_proof_taken_before_the_rotation_still_verifies_against_the_log_after_it(
    world: World, client: TestClient
) -> None:
    world.stock("cash")
    player = world.player(10 * 500)
    sold = sell(world, player, 2)
    old_proof = fairness.ticket_proof(world.platform, player, sold[0])
    assert "key_changes" not in old_proof["log"]  # as every proof before rotations
    rotate_key(world.platform)
    log = ServedLog(client)
    chain = log.key_chain(log.head())
    verify_ticket_proof(old_proof, log_keys=chain, public_key=chain.periods[0].public_key)


def test_sales_in_flight_on_many_threads_never_land_an_old_receipt_after_the_change(
    world: World, client: TestClient
) -> None:
    """Eight threads sell without pause while the key rotates under them (PostgreSQL: eight
    connections, each sale its own transaction): every receipt merged after the change is the
    new key's, every one before it the old key's, and the monitor finds the log clean."""
    world.stock("cash", blocks=12)  # 480 units
    players = [world.player(60 * 500) for _ in range(8)]
    old = world.platform.signer()
    stop = threading.Event()
    sold_count = [0] * len(players)

    def keep_selling(number: int) -> None:
        while not stop.is_set():
            try:
                tickets.buy(world.platform, players[number], game_name="cash", mode="auto")
            except SoldOut:
                return
            sold_count[number] += 1

    with ThreadPoolExecutor(max_workers=len(players)) as pool:
        running = [pool.submit(keep_selling, number) for number in range(len(players))]
        deadline = time.monotonic() + 60
        while sum(sold_count) < 80 and time.monotonic() < deadline:
            time.sleep(0.01)
        rotation = rotate_key(world.platform)
        sold_at_rotation = sum(sold_count)
        while sum(sold_count) < sold_at_rotation + 80 and time.monotonic() < deadline:
            time.sleep(0.01)
        stop.set()
        for future in running:
            future.result()
    new = world.platform.signer()
    assert new.key_id == rotation.new_key_id
    logged = receipts(world)
    assert len(logged) == sum(sold_count)
    assert {r["key_id"] for i, r in logged if i < rotation.change_index} == {old.key_id}
    assert {r["key_id"] for i, r in logged if i > rotation.change_index} == {new.key_id}
    auditor, _ = watch(ServedLog(client), None)
    assert auditor.head is not None and auditor.public_key == new.public_key
    head = TreeHead.from_json(client.get("/api/log/sth").json())
    assert head.key_id == new.key_id


@pytest.mark.parametrize("database", DATABASES)
def test_a_rotation_during_drawn_sales_keeps_the_monitor_and_every_proof_clean(
    tmp_path: Path, database: str
) -> None:
    """Four threads buy drawn tickets and a drawer thread cosigns and draws while the key
    rotates: every receipt v2 before the change is the old key's and after it the new key's,
    heads cosigned before the rotation (the old key's) are still accepted in the rounds logged
    after it, the monitor finds the log clean and every ticket's proof verifies against the
    log's key history. The witness refuses the new key's heads until it is restarted with it
    (docs/witness.md): sales covered meanwhile are drawn late, by a later round."""
    with make_world(database, tmp_path, drawn=True) as drawn:
        _drawn_load_with_a_rotation(drawn)


def _drawn_load_with_a_rotation(drawn: World) -> None:
    drawn.stock("cash", blocks=12)
    players = [drawn.player(60 * 500) for _ in range(4)]
    witness = drawn.witness
    assert witness is not None
    old = drawn.platform.signer()
    stop, drawing = threading.Event(), threading.Event()
    sold: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def keep_buying(player: int) -> None:
        try:
            while not stop.is_set():
                try:
                    view = tickets.buy(drawn.platform, player, game_name="cash", mode="auto")[0]
                except SoldOut:
                    return
                sold.append((player, view.id))
        except BaseException as error:  # reported below
            errors.append(error)

    def keep_drawing() -> None:
        drawer = Drawer(drawn.platform)
        try:
            while not drawing.is_set():
                drawer.cosign()
                with drawn.platform.uow.read() as repos:
                    rounds = repos.draws.pending_rounds(2**62)
                if rounds:
                    clock = witness.clock
                    assert isinstance(clock, ManualMsClock)
                    clock.set(max(clock(), min(ms for _, _, ms in rounds)))
                drawer.draw()
                time.sleep(0.005)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=keep_buying, args=(p,)) for p in players]
    threads.append(threading.Thread(target=keep_drawing))
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 120

    def until(count: int) -> None:
        while len(sold) < count and time.monotonic() < deadline and not errors:
            time.sleep(0.01)

    until(30)
    rotation = rotate_key(drawn.platform)
    new = drawn.platform.signer()
    until(len(sold) + 15)  # the witness still pins the old key: these wait, drawn late
    witness.restart(new.public_key)
    until(len(sold) + 15)
    stop.set()
    for thread in threads[:-1]:
        thread.join()
    drawing.set()
    threads[-1].join()
    assert errors == []
    drawn.draw()  # whatever the drawer thread left
    assert len(sold) >= 60

    logged = receipts(drawn)
    assert len(logged) == len(sold)
    assert {r["format"] for _, r in logged} == {"grattage-receipt/2"}
    assert {r["key_id"] for i, r in logged if i < rotation.change_index} == {old.key_id}
    assert {r["key_id"] for i, r in logged if i > rotation.change_index} == {new.key_id}
    rows = transparency.entries(drawn.platform, 0, 0)
    size = transparency.current_head(drawn.platform).tree_size
    while len(rows) < size:
        rows += transparency.entries(drawn.platform, len(rows), size - 1)
    entries = [row["entry"] for row in rows]
    assert len([e for e in entries if e["kind"] == "sale.drawn"]) == len(sold)
    listed_after = [
        pair["sth"]["key_id"]
        for index, e in enumerate(entries)
        if e["kind"] == "draw.round" and index > rotation.change_index
        for pair in e["cosigned"]
    ]
    assert new.key_id in listed_after  # the witness cosigned the new key's heads

    auditor = LogAuditor(old.public_key)  # the monitor, from the first key
    for index, entry in enumerate(entries):
        auditor.feed(index, entry)
    head = transparency.current_head(drawn.platform)
    cosigned = auditor.draws.largest_cosigned
    assert cosigned is not None
    if cosigned.tree_size < head.tree_size:
        answer = transparency.consistency(drawn.platform, cosigned.tree_size, head.tree_size)
        auditor.check_cosigned(head, [bytes.fromhex(node) for node in answer["proof"]])
    auditor.accept_head(head)
    assert auditor.public_key == new.public_key

    chain = transparency.key_chain(drawn.platform)
    late = 0
    for player, ticket_id in sold:
        proof = json.loads(json.dumps(fairness.ticket_proof(drawn.platform, player, ticket_id)))
        verified = verify_ticket_proof(proof, public_key=new.public_key, log_keys=chain)
        assert verified.draw is not None
        late += verified.draw.late
    assert late  # the sales covered while the witness pinned the old key


@pytest.mark.parametrize("database", DATABASES)
def test_a_head_cosigned_before_the_rotation_draws_its_round_after_it(
    tmp_path: Path, database: str
) -> None:
    """The witness cosigned the old key's head for a round; the key rotates before the round
    is out: the drawer, the monitor and verify-ticket check that head with the old key (the
    key in force at its size), and a receipt of the new key chains on the old key's."""
    with make_world(database, tmp_path, drawn=True) as drawn:
        drawn.stock("cash")
        player = drawn.player(20 * 500)
        witness = drawn.witness
        assert witness is not None and isinstance(witness.clock, ManualMsClock)
        before = [
            tickets.buy(drawn.platform, player, game_name="cash", mode="auto")[0].id
            for _ in range(3)
        ]
        Drawer(drawn.platform).cosign()  # the old key's head, cosigned for the sales' round
        rotate_key(drawn.platform)
        new = drawn.platform.signer()
        witness.restart(new.public_key)
        after = [
            tickets.buy(drawn.platform, player, game_name="cash", mode="auto")[0].id
            for _ in range(3)
        ]
        assert drawn.draw() == 6
        entries = [e["entry"] for e in transparency.entries(drawn.platform, 0, 999)]
        change = next(i for i, e in enumerate(entries) if e["kind"] == "key.change")
        listed = [
            pair["sth"]["tree_size"]
            for e in entries[change:]
            if e["kind"] == "draw.round"
            for pair in e["cosigned"]
        ]
        assert min(listed) <= change  # an old key's head, listed after the change
        auditor = LogAuditor(drawn.platform.signer_of(None).public_key)
        for index, entry in enumerate(entries):
            auditor.feed(index, entry)
        chain = transparency.key_chain(drawn.platform)
        for ticket_id in before + after:
            proof = json.loads(json.dumps(fairness.ticket_proof(drawn.platform, player, ticket_id)))
            assert verify_ticket_proof(proof, log_keys=chain).draw is not None
