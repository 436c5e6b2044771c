"""The monitor against a real log: clean runs keep a small state and pick up where they
stopped; a rewritten entry, a fork and a split view are each named."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from grattage.blocks.signing import TreeHead
from grattage.entrypoints.cli.monitor import LogClient, watch
from grattage.errors import VerificationFailed
from grattage.service import transparency
from support import World


class ServedLog(LogClient):
    """The monitor's client, answered by the app in-process."""

    def __init__(self, client: TestClient) -> None:
        super().__init__("http://log.test")
        self.client = client

    def get(self, path: str, **params: int) -> Any:
        answer = self.client.get(f"/api/log/{path}", params=params)
        if answer.status_code != 200:
            raise VerificationFailed(f"the log answered {answer.status_code}")
        return answer.json()


def opened(world: World, count: int) -> None:
    """Log ``count`` entries cheaply: commitments of blocks that are never stored (the rules
    of block and sale entries are the auditor's tests, tests/unit/test_log_audit.py)."""
    signer = world.platform.signer()
    with world.platform.uow.write() as repos:
        for number in range(count):
            commitment = signer.sign_document(
                "commitment",
                {
                    "format": "grattage-commitment/2",
                    "block_id": uuid.uuid4().hex,
                    "game": "cash",
                    "rules_version": "cash/2009-03-16/design-v2",
                    "price_cents": 500,
                    "size": 4,
                    "table": {"block_size": 4, "tiers": [{"prize_cents": 1000, "count": 1}]},
                    "table_sha256": "00" * 32,
                    "leaf": "grattage-unit/2",
                    "root": "11" * 32,
                    "created_at": f"2026-12-01T12:00:{number % 60:02d}.000000Z",
                    "key_id": signer.key_id,
                },
            )
            transparency.queue_entry(
                repos, world.clock.now(), "block.commitment", {"commitment": commitment}
            )
    transparency.integrate_all(world.platform)


def test_the_monitor_follows_the_log_and_resumes_from_its_state(
    world: World, client: TestClient, tmp_path: Path
) -> None:
    log = ServedLog(client)
    opened(world, 3)
    auditor, checked = watch(log, None)
    assert checked == 3
    state = json.loads(json.dumps(auditor.to_json()))
    opened(world, 1500)
    from grattage.blocks.log_audit import LogAuditor

    auditor, checked = watch(log, LogAuditor.from_json(state))
    assert checked == 1500 and auditor.head is not None and auditor.head.tree_size == 1503


def test_an_entry_rewritten_in_the_database_is_caught_by_the_monitor(
    world: World, client: TestClient
) -> None:
    log = ServedLog(client)
    opened(world, 4)
    engine = world.platform.uow.engine  # type: ignore[attr-defined]
    with engine.begin() as connection:  # an operator with the database's owner rights
        if connection.dialect.name == "sqlite":
            connection.execute(text("DROP TRIGGER log_entries_no_update"))
        else:
            connection.execute(text("ALTER TABLE log_entries DISABLE TRIGGER USER"))
        connection.execute(
            text("UPDATE log_entries SET body = replace(body, :was, :now) WHERE idx = 2"),
            {"was": ":02.0", "now": ":58.0"},
        )
    with pytest.raises(VerificationFailed, match="not canonical|signature|do not hash"):
        watch(log, None)


def test_a_log_that_forgets_its_past_is_caught_as_a_fork(world: World, client: TestClient) -> None:
    log = ServedLog(client)
    opened(world, 5)
    auditor, _ = watch(log, None)
    seen = auditor.head
    assert seen is not None
    forged = world.platform.signer().sign_tree_head(5, 2, bytes(32))

    class Forked(ServedLog):
        def get(self, path: str, **params: int) -> Any:
            if path == "sth":
                return forged.to_json()
            return super().get(path, **params)

    with pytest.raises(VerificationFailed, match="forked"):
        watch(Forked(client), auditor)
    assert TreeHead.from_json(seen.to_json()).root_hash != forged.root_hash
