"""A drawn block's draws file, published beside its disclosure (docs/draw.md, "The draws
file"), on SQLite and PostgreSQL: written once by the sweep, the log's own draws byte for byte,
its SHA-256 in the block's ``disclosure.published``; served by ``GET /api/blocks/{id}/draws``
as a file that never changes (404 before, and for a block that is not drawn); a crash between
the file and the entry leaves no half file, and the next sweep finishes the job."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from grattage.blocks import draw_file_writer
from grattage.blocks.draw_file import draw_file_from_log
from grattage.entrypoints.disclosures import disclosure_path, publish_disclosure_files
from grattage.entrypoints.draws_files import draws_path
from grattage.entrypoints.http import create_app
from grattage.service import block_log, draws_publication, emissions, tickets, transparency
from support import DATABASES, World, make_world


@pytest.fixture(params=DATABASES)
def drawn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with make_world(request.param, tmp_path, drawn=True) as world:
        yield world


def _entries(world: World) -> list[dict[str, Any]]:
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    rows: list[dict[str, Any]] = []
    for start in range(0, size, 1000):
        rows += transparency.entries(world.platform, start, min(size, start + 1000) - 1)
    return [row["entry"] for row in rows]


def _ended_block(world: World, sales: int) -> int:
    """A block of the world's, ``sales`` sold and drawn over several rounds, then closed."""
    world.stock("cash")
    player = world.player(sales * 500)
    for turn in range(sales):
        tickets.buy(world.platform, player, game_name="cash", mode="auto")
        if turn % 5 == 4:
            world.draw()
    world.draw()
    (block,) = emissions.list_blocks(world.platform, "cash")
    emissions.close_block(world.platform, block.id)
    return block.id


def _published(world: World, block_id: int) -> dict[str, Any] | None:
    with world.platform.uow.read() as repos:
        body = repos.log.block_entry_body(block_id, "disclosure.published")
    return None if body is None else dict(json.loads(body))


def _directory(world: World) -> Path:
    return world.settings.disclosure_dir


def _from_log(entries: list[dict[str, Any]]) -> bytes:
    """What a verifier that read the whole log builds (docs/draw.md)."""
    (commitment,) = [e["commitment"] for e in entries if e["kind"] == "block.commitment"]
    return draw_file_from_log(commitment["block_id"], commitment["size"], entries)


@pytest.mark.parametrize("window", [10_000, 5])
def test_the_sweep_writes_the_log_s_draws_and_logs_their_sha256(
    drawn: World, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(draws_publication, "WINDOW", window)  # 5: the log read in many reads
    block_id = _ended_block(drawn, 17)
    publish_disclosure_files(drawn.platform, _directory(drawn))
    data = draws_path(_directory(drawn), block_id).read_bytes()
    entries = _entries(drawn)
    assert data == _from_log(entries)
    entry = _published(drawn, block_id)
    assert entry is not None
    assert entry["draws_sha256"] == hashlib.sha256(data).hexdigest()
    disclosure = disclosure_path(_directory(drawn), block_id).read_bytes()
    assert entry["sha256"] == hashlib.sha256(disclosure).hexdigest()
    assert sorted(entry) == [
        "block_id", "commitment_index", "draws_sha256", "key", "kind", "sha256", "time", "v",
    ]  # fmt: skip


def test_a_drawn_block_closed_before_any_sale_publishes_an_empty_draws_file(drawn: World) -> None:
    block_id = _ended_block(drawn, 0)
    publish_disclosure_files(drawn.platform, _directory(drawn))
    data = draws_path(_directory(drawn), block_id).read_bytes()
    assert data == _from_log(_entries(drawn))
    entry = _published(drawn, block_id)
    assert entry is not None and entry["draws_sha256"] == hashlib.sha256(data).hexdigest()


def test_a_block_not_drawn_keeps_its_entry_and_has_no_draws_file(tmp_path: Path) -> None:
    with make_world("sqlite", tmp_path, drawn=False) as world:
        world.stock("cash")
        player = world.player(2000)
        for _ in range(3):
            tickets.buy(world.platform, player, game_name="cash", mode="auto")
        (block,) = emissions.list_blocks(world.platform, "cash")
        emissions.close_block(world.platform, block.id)
        publish_disclosure_files(world.platform, _directory(world))
        entry = _published(world, block.id)
        assert entry is not None
        assert sorted(entry) == [
            "block_id",
            "commitment_index",
            "key",
            "kind",
            "sha256",
            "time",
            "v",
        ]
        assert not draws_path(_directory(world), block.id).exists()
        app = create_app(world.settings, platform=world.platform, mount_web=False)
        with TestClient(app) as client:
            answer = client.get(f"/api/blocks/{block.id}/draws")
        assert answer.status_code == 404 and answer.json()["error"] == "not_found"


def test_the_route_serves_the_file_once_published_as_a_file_that_never_changes(
    drawn: World,
) -> None:
    block_id = _ended_block(drawn, 12)
    app = create_app(drawn.settings, platform=drawn.platform, mount_web=False)
    with TestClient(app) as client:  # anonymous: no session
        before = client.get(f"/api/blocks/{block_id}/draws")
        assert before.status_code == 404 and before.json()["error"] == "not_found"
        assert client.get("/api/blocks/999/draws").status_code == 404
        publish_disclosure_files(drawn.platform, _directory(drawn))
        answer = client.get(f"/api/blocks/{block_id}/draws")
        assert answer.status_code == 200
        data = draws_path(_directory(drawn), block_id).read_bytes()
        assert answer.content == data
        sha256 = hashlib.sha256(data).hexdigest()
        assert answer.headers["content-length"] == str(len(data))
        assert answer.headers["etag"] == f'"{sha256}"'
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert answer.headers["content-type"] == "application/octet-stream"
        again = client.get(
            f"/api/blocks/{block_id}/draws", headers={"If-None-Match": f'"{sha256}"'}
        )
        assert again.status_code == 304 and again.content == b""
        part = client.get(f"/api/blocks/{block_id}/draws", headers={"Range": "bytes=0-3"})
        assert part.status_code == 206 and part.content == b"GDRW"
        assert client.get("/api/me").headers["cache-control"] == "no-store"


def test_a_disclosure_built_by_a_request_leaves_the_draws_file_and_the_entry_to_the_sweep(
    drawn: World,
) -> None:
    block_id = _ended_block(drawn, 6)
    app = create_app(drawn.settings, platform=drawn.platform, mount_web=False)
    with TestClient(app) as client:
        assert client.get(f"/api/blocks/{block_id}/disclosure").status_code == 200
        assert not draws_path(_directory(drawn), block_id).exists()
        assert _published(drawn, block_id) is None
        assert client.get(f"/api/blocks/{block_id}/draws").status_code == 404
        publish_disclosure_files(drawn.platform, _directory(drawn))
        entry = _published(drawn, block_id)
        assert entry is not None and "draws_sha256" in entry
        assert client.get(f"/api/blocks/{block_id}/draws").status_code == 200


class Crash(Exception):
    """The process dying at that point (the finally blocks run; a SIGKILL's would not: see
    the stale temporary file below)."""


def test_a_crash_while_writing_leaves_no_half_file_and_the_next_sweep_writes_it(
    drawn: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_id = _ended_block(drawn, 9)
    directory = _directory(drawn)
    directory.mkdir(parents=True, exist_ok=True)
    path = draws_path(directory, block_id)
    stale = directory / f".{path.name}.4242.partial"  # a writer SIGKILLed mid-file
    stale.write_bytes(b"GDRW half")
    real_copy = draw_file_writer.DrawFileWriter._copy

    def dying_copy(self: Any, name: str, emit: Any) -> None:
        real_copy(self, name, emit)
        if name == "slots":
            raise Crash

    monkeypatch.setattr(draw_file_writer.DrawFileWriter, "_copy", dying_copy)
    with pytest.raises(Crash):
        publish_disclosure_files(drawn.platform, directory)
    assert not path.exists() and not stale.exists()
    assert not list(directory.glob("*.partial")) and not list(directory.glob(".*.partial"))
    assert _published(drawn, block_id) is None  # nothing logged for a file not written
    assert disclosure_path(directory, block_id).exists()
    monkeypatch.undo()
    publish_disclosure_files(drawn.platform, directory)
    entry = _published(drawn, block_id)
    assert entry is not None
    assert entry["draws_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_crash_between_the_file_and_the_entry_is_finished_by_the_next_sweep(
    drawn: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_id = _ended_block(drawn, 9)
    directory = _directory(drawn)

    def dying(*_: object) -> bool:
        raise Crash

    monkeypatch.setattr(block_log, "log_disclosure_published", dying)
    with pytest.raises(Crash):
        publish_disclosure_files(drawn.platform, directory)
    path = draws_path(directory, block_id)
    written = path.read_bytes()
    assert _published(drawn, block_id) is None
    monkeypatch.undo()
    publish_disclosure_files(drawn.platform, directory)
    entry = _published(drawn, block_id)
    assert entry is not None and entry["draws_sha256"] == hashlib.sha256(written).hexdigest()
    assert path.read_bytes() == written  # not rewritten
    publish_disclosure_files(drawn.platform, directory)
    kinds = [e["kind"] for e in _entries(drawn)]
    assert kinds.count("disclosure.published") == 1
