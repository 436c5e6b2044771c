"""The transparency log in the database: entries reach the tree only with their change, in
queue order; every proof the log answers verifies; the database refuses to rewrite it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

from grattage.blocks.signing import TreeHead, canonical_json
from grattage.blocks.tlog import entry_leaf_hash, verify_consistency, verify_inclusion
from grattage.errors import InvalidInput, NotFound
from grattage.service import transparency
from support import World, make_world


def queue(world: World, count: int, kind: str = "block.opened") -> None:
    with world.platform.uow.write() as repos:
        for number in range(count):
            transparency.queue_entry(repos, world.clock.now(), kind, {"number": number})


def test_an_entry_reaches_the_tree_only_if_its_change_commits(world: World) -> None:
    with pytest.raises(RuntimeError), world.platform.uow.write() as repos:
        transparency.queue_entry(repos, world.clock.now(), "block.opened", {"number": 1})
        raise RuntimeError("the change fails")
    assert transparency.integrate(world.platform) is None
    queue(world, 1)
    head = transparency.integrate(world.platform)
    assert head is not None and head.tree_size == 1


def test_every_inclusion_and_consistency_proof_of_the_log_verifies(world: World) -> None:
    heads: list[TreeHead] = []
    for batch in (1, 2, 5, 8, 13):
        queue(world, batch)
        head = transparency.integrate(world.platform)
        assert head is not None
        head.check(world.platform.signer().public_key)
        heads.append(head)
    size = heads[-1].tree_size
    assert size == 29
    listed = transparency.entries(world.platform, 0, size)
    assert [item["index"] for item in listed] == list(range(size))
    assert [item["entry"]["number"] for item in listed[:3]] == [0, 0, 1]
    for head in heads:
        for index in range(head.tree_size):
            proof = transparency.inclusion(world.platform, index, head.tree_size)
            leaf = entry_leaf_hash(canonical_json(listed[index]["entry"]))
            assert proof["leaf_hash"] == leaf.hex()
            path = [bytes.fromhex(node) for node in proof["path"]]
            assert verify_inclusion(leaf, index, head.tree_size, path, head.root_hash)
    for first in heads:
        for second in heads:
            if first.tree_size <= second.tree_size:
                proof = transparency.consistency(world.platform, first.tree_size, second.tree_size)[
                    "proof"
                ]
                assert verify_consistency(
                    first.tree_size,
                    second.tree_size,
                    first.root_hash,
                    second.root_hash,
                    [bytes.fromhex(node) for node in proof],
                )
    assert transparency.current_head(world.platform).tree_size == size
    assert transparency.current_head(world.platform, 3).tree_size == 3


def test_questions_about_trees_the_log_never_had_are_refused(world: World) -> None:
    queue(world, 3)
    transparency.integrate(world.platform)
    with pytest.raises(NotFound):
        transparency.inclusion(world.platform, 0, 4)
    with pytest.raises(InvalidInput):
        transparency.inclusion(world.platform, 3, 3)
    with pytest.raises(InvalidInput):
        transparency.consistency(world.platform, 0, 3)
    with pytest.raises(NotFound):
        transparency.current_head(world.platform, 2)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE log_entries SET body = '{}' WHERE idx = 0",
        "DELETE FROM log_entries WHERE idx = 1",
        "UPDATE log_nodes SET hash = hash",
        "DELETE FROM log_heads",
        "INSERT INTO log_entries (idx, kind, body, leaf) SELECT idx, kind, '{}', leaf "
        "FROM log_entries WHERE idx = 0 ON CONFLICT (idx) DO UPDATE SET body = excluded.body",
        # an outsider's: the size lowered, so that the next merge collides with the entries
        "UPDATE log_state SET tree_size = tree_size - 1",
    ],
)
def test_the_database_refuses_to_rewrite_the_log(world: World, statement: str) -> None:
    queue(world, 4)
    transparency.integrate(world.platform)
    engine = world.platform.uow.engine  # type: ignore[attr-defined]
    with pytest.raises(DatabaseError, match="append-only|only grows"), engine.begin() as connection:
        connection.execute(text(statement))


@pytest.fixture
def sqlite_world(tmp_path: Path) -> Iterator[World]:
    with make_world("sqlite", tmp_path) as built:
        yield built


@pytest.mark.parametrize(
    ("table", "statement"),
    [
        (
            "log_entries",
            "INSERT OR REPLACE INTO log_entries (idx, kind, body, leaf) "
            "SELECT idx, kind, '{}', leaf FROM log_entries WHERE idx = 0",
        ),
        ("log_nodes", "REPLACE INTO log_nodes SELECT level, idx, zeroblob(32) FROM log_nodes"),
        (
            "log_heads",
            "REPLACE INTO log_heads SELECT tree_size, timestamp_ms + 1, root, key_id, signature "
            "FROM log_heads",
        ),
        (
            "log_keys",
            "REPLACE INTO log_keys SELECT key_id, public_key, from_index, 7 FROM log_keys",
        ),
        ("log_state", "REPLACE INTO log_state VALUES (1, 0)"),
    ],
)
def test_sqlite_s_replace_cannot_rewrite_the_log_either(
    sqlite_world: World, table: str, statement: str
) -> None:
    """An outsider's finding: SQLite's REPLACE deletes the row it collides with, and that
    delete fires no DELETE trigger; it rewrote a logged receipt and a signed head."""
    world = sqlite_world  # REPLACE is SQLite's (PostgreSQL's ON CONFLICT is refused above)
    engine = world.platform.uow.engine  # type: ignore[attr-defined]
    queue(world, 4)
    transparency.integrate(world.platform)
    if table == "log_keys":  # written by a rotation only: an insert is what the log allows
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO log_keys VALUES ('k', zeroblob(32), 0, NULL)"))
    with engine.connect() as connection:
        before = connection.execute(text(f"SELECT * FROM {table}")).all()
    assert before
    with pytest.raises(DatabaseError, match="append-only|only grows"), engine.begin() as connection:
        connection.execute(text(statement))
    with engine.connect() as connection:
        assert connection.execute(text(f"SELECT * FROM {table}")).all() == before


def test_concurrent_sequencers_build_one_tree_with_every_entry_once(world: World) -> None:
    queue(world, 200)
    heads: list[TreeHead | None] = []
    workers = [
        threading.Thread(target=lambda: heads.append(transparency.integrate(world.platform, 37)))
        for _ in range(8)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    transparency.integrate_all(world.platform)
    final = transparency.current_head(world.platform)
    assert final.tree_size == 200
    numbers = [item["entry"]["number"] for item in transparency.entries(world.platform, 0, 199)]
    assert numbers == list(range(200))


class _SalesBetweenTransactions:
    """The platform's unit of work, with a sale's entry committed after each sequencer
    transaction (up to ``sales``), as sales go on while the sequencer runs."""

    def __init__(self, world: World, sales: int) -> None:
        self.world, self.inner, self.sales = world, world.platform.uow, sales

    @contextmanager
    def write(self) -> Iterator[Any]:
        with self.inner.write() as repos:
            yield repos
        if self.sales > 0:
            self.sales -= 1
            with self.inner.write() as repos:
                transparency.queue_entry(repos, self.world.clock.now(), "sale.receipt", {})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_sequencer_round_integrates_what_waits_and_leaves_later_sales_to_the_next(
    world: World,
) -> None:
    queue(world, 80)
    world.platform.uow = _SalesBetweenTransactions(world, sales=50)  # type: ignore[assignment]
    try:
        head = transparency.integrate_round(world.platform, limit=37)
    finally:
        world.platform.uow = world.platform.uow.inner  # type: ignore[attr-defined]
    # 37 + 37 + 8 (80 waited, 2 sold meanwhile): the third transaction found the queue short
    assert head is not None and head.tree_size == 82
    assert transparency.current_head(world.platform, 37).tree_size == 37
    later = transparency.integrate_round(world.platform, limit=37)
    assert later is not None and later.tree_size == 83
    assert transparency.integrate_round(world.platform) is None


def test_the_log_answers_monitors_over_http_and_refuses_bad_questions_with_4xx(
    world: World, client: TestClient
) -> None:
    queue(world, 6)
    transparency.integrate(world.platform)
    key = client.get("/api/log/key").json()
    assert key["algorithm"] == "Ed25519" and len(bytes.fromhex(key["public_key"])) == 32
    head = TreeHead.from_json(client.get("/api/log/sth").json())
    head.check(bytes.fromhex(key["public_key"]))
    listed = client.get("/api/log/entries", params={"start": 0, "end": 99}).json()["entries"]
    assert len(listed) == 6
    proof = client.get("/api/log/proof", params={"index": 4, "tree_size": 6}).json()
    leaf = entry_leaf_hash(canonical_json(listed[4]["entry"]))
    path = [bytes.fromhex(node) for node in proof["path"]]
    assert verify_inclusion(leaf, 4, 6, path, head.root_hash)
    assert client.get("/api/log/consistency", params={"first": 6, "second": 6}).json() == {
        "first": 6,
        "second": 6,
        "proof": [],
    }
    for route, params, status in [
        ("/api/log/proof", {"index": 6, "tree_size": 6}, 422),
        ("/api/log/proof", {"index": 0, "tree_size": 7}, 404),
        ("/api/log/proof", {"index": -1, "tree_size": 6}, 422),
        ("/api/log/entries", {"start": 5, "end": 2}, 422),
        ("/api/log/entries", {"start": "x", "end": 2}, 422),
        ("/api/log/consistency", {"first": 9, "second": 3}, 422),
        ("/api/log/sth", {"tree_size": 5}, 404),
        ("/api/log/proof", {"index": 2**70, "tree_size": 6}, 422),
    ]:
        answer = client.get(route, params=params)
        assert answer.status_code == status, (route, params, answer.text)
        assert "error" in answer.json() or "detail" in answer.json()


def test_an_entry_integrated_between_the_two_reads_of_a_look_up_is_still_found(
    world: World,
) -> None:
    """A look-up reads the queue and the tree, a statement each; the sequencer commits
    between them (it moved a published draws file's entry in between, under load, and the
    file answered 404 between two 200s)."""
    with world.platform.uow.write() as repos:
        transparency.queue_entry(
            repos, world.clock.now(), "disclosure.published", {"n": 1}, block_row=1
        )
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        execute = db.execute
        statements = 0

        def execute_then_integrate(*args: Any, **kwargs: Any) -> Any:
            nonlocal statements
            answer = execute(*args, **kwargs)
            statements += 1
            if statements == 1:  # the other process's sequencer, right after the first read
                done = threading.Thread(target=transparency.integrate_all, args=(world.platform,))
                done.start()
                done.join()
            return answer

        db.execute = execute_then_integrate
        try:
            found = repos.log.block_entry_body(1, "disclosure.published")
        finally:
            db.execute = execute
    assert found is not None and '"n":1' in found
