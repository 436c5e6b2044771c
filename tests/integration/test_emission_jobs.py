"""An emission from the back office is a background job, on SQLite and PostgreSQL: 202 and a
job to follow at once, the blocks stored whole as each is sealed, a failure shown, audited and
leaving no block behind, a job whose process died marked failed at the next look."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from grattage.adapters.tables import block_chunks, block_commitments, blocks
from grattage.service import audit_trail, emission_jobs, emissions, operators
from grattage.service.emission_jobs import JobRunner
from support import FIXTURES, PASSWORD, World

OPERATOR = "jobs@operator.example"
STALE_SECONDS = 600.0
"""Short of the sessions' idle time: the tests move the clock past it."""


@pytest.fixture(autouse=True)
def no_beat_during_a_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """A heartbeat would stamp the clock the tests move: none beats within a test."""
    monkeypatch.setattr(emission_jobs, "PROGRESS_SECONDS", STALE_SECONDS)


@pytest.fixture
def world_settings() -> dict[str, object]:
    return {"job_stale_seconds": STALE_SECONDS}


@pytest.fixture
def admin(world: World, client: TestClient) -> dict[str, str]:
    operators.create(world.platform, OPERATOR, PASSWORD)
    response = client.post("/api/admin/sessions", json={"email": OPERATOR, "password": PASSWORD})
    client.cookies.clear()
    return {"Authorization": f"Bearer {response.json()['token']}"}


def tiny_body(blocks: int) -> dict[str, Any]:
    table = (FIXTURES / "tables" / "tiny_cash_on_sale.toml").read_text("utf-8")
    return {"game": "cash", "blocks": blocks, "prize_table": table, "prize_table_name": "t.toml"}


def start(client: TestClient, admin: dict[str, str], blocks: int = 2) -> str:
    response = client.post("/api/admin/emissions", json=tiny_body(blocks), headers=admin)
    assert response.status_code == 202, response.text
    location = response.headers["Location"]
    assert response.json() == {"job_id": int(location.rsplit("/", 1)[1]), "location": location}
    return location


def until_ended(client: TestClient, admin: dict[str, str], location: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        job = client.get(location, headers=admin).json()
        if job["state"] != "running" or time.monotonic() > deadline:
            return dict(job)
        time.sleep(0.02)


def stored_blocks(world: World) -> list[tuple[int, str, int, int, int]]:
    """(id, state, size, chunk bytes, commitments) of every block row."""
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        chunk_bytes = (
            select(func.coalesce(func.sum(func.length(block_chunks.c.sealed_tiers)), 0))
            .where(block_chunks.c.block_id == blocks.c.id)
            .scalar_subquery()
        )
        committed = (
            select(func.count())
            .where(block_commitments.c.block_id == blocks.c.id)
            .scalar_subquery()
        )
        query = select(blocks.c.id, blocks.c.state, blocks.c.size, chunk_bytes, committed)
        return [tuple(row) for row in db.execute(query.order_by(blocks.c.id))]


def actions(world: World) -> list[tuple[str, str]]:
    return [(e.action, e.subject) for e in reversed(audit_trail.latest(world.platform, 100))]


@pytest.fixture
def fail_commitment(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Make the commitment of the ``n``-th block (1-based) raise once under way, as a full
    disk would."""

    def arm(n: int) -> None:
        real = emissions.build_tree_and_chain
        calls = []

        def commitment(*args: Any, progress: Any, **kwargs: Any) -> Any:
            calls.append(1)
            if len(calls) != n:
                return real(*args, progress=progress, **kwargs)

            def fail_after_the_first_step(phase: str, done: int, total: int) -> None:
                progress(phase, done, total)
                if done:
                    raise OSError(28, "No space left on device")

            return real(*args, progress=fail_after_the_first_step, **kwargs)

        monkeypatch.setattr(emissions, "build_tree_and_chain", commitment)

    return arm


class Held:
    """A commitment held back: ``entered`` once a job reached it, it goes on at ``release``."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()


@pytest.fixture
def held_commitment(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    held = Held()
    real = emissions.build_tree_and_chain

    def commitment(*args: Any, **kwargs: Any) -> Any:
        held.entered.set()
        assert held.release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(emissions, "build_tree_and_chain", commitment)
    yield held
    held.release.set()


def test_an_emission_answers_202_at_once_and_its_job_ends_with_every_block_sealed(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    location = start(client, admin, blocks=2)
    job = until_ended(client, admin, location)
    assert {k: job[k] for k in ("state", "stage", "block", "blocks", "error")} == {
        "state": "succeeded",
        "stage": "done",
        "block": 2,
        "blocks": 2,
        "error": None,
    }
    assert (job["block_ids"], job["opened"], job["actor"]) == ([1, 2], [1], f"operator:{OPERATOR}")
    assert job["finished_at"] is not None
    assert stored_blocks(world) == [(1, "open", 40, 40, 1), (2, "pending", 40, 40, 1)]
    assert actions(world)[-6:] == [
        ("emission.job.start", "job:1"),
        ("emission.create", "emission:1"),
        ("block.create", "block:1"),
        ("block.create", "block:2"),
        ("block.open", "block:1"),
        ("emission.job.finish", "job:1"),
    ]
    listed = client.get("/api/admin/jobs", headers=admin).json()["jobs"]
    assert [(j["id"], j["state"]) for j in listed] == [(1, "succeeded")]


def test_a_failure_at_the_first_commitment_fails_the_job_audited_and_stores_no_block(
    world: World, client: TestClient, admin: dict[str, str], fail_commitment: Any
) -> None:
    fail_commitment(1)
    job = until_ended(client, admin, start(client, admin, blocks=2))
    assert (job["state"], job["stage"], job["block"], job["block_ids"]) == (
        "failed",
        "committing",
        1,
        [],
    )
    assert job["error"] == "internal error (OSError); the server log has the details"
    assert stored_blocks(world) == []
    failure = audit_trail.latest(world.platform, 1)[0]
    assert (failure.action, failure.subject, failure.actor) == (
        "emission.job.fail",
        "job:1",
        f"operator:{OPERATOR}",
    )
    assert failure.details == {
        "error": job["error"],
        "emission": job["emission_id"],
        "blocks": [],
        "closed": [],
    }
    assert audit_trail.verify(world.platform).clean


def test_a_failure_at_a_later_block_closes_the_blocks_already_sealed_so_none_is_sold(
    world: World, client: TestClient, admin: dict[str, str], fail_commitment: Any
) -> None:
    fail_commitment(2)
    job = until_ended(client, admin, start(client, admin, blocks=3))
    assert (job["state"], job["block"], job["block_ids"], job["opened"]) == ("failed", 2, [1], [])
    assert stored_blocks(world) == [(1, "closed", 40, 40, 1)]
    assert actions(world)[-2:] == [("block.closed", "block:1"), ("emission.job.fail", "job:1")]
    assert audit_trail.latest(world.platform, 1)[0].details["closed"] == [1]


def test_a_bad_request_is_refused_at_once_and_starts_no_job(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    for body in ({**tiny_body(1), "blocks": 0}, {**tiny_body(1), "game": "nope"}):
        assert client.post("/api/admin/emissions", json=body, headers=admin).status_code == 422
    assert client.get("/api/admin/jobs", headers=admin).json() == {"jobs": []}
    assert client.get("/api/admin/jobs/1", headers=admin).status_code == 404


def test_a_job_whose_process_died_is_marked_failed_at_the_next_look_and_audited(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    with world.platform.uow.write() as repos:  # a job left running by a process now dead
        repos.emission_jobs.add("operator:x", "cash", 2, "0" * 64, "gone:1:ab", world.clock.now())
    world.clock.advance(STALE_SECONDS - 1)
    assert client.get("/api/admin/jobs/1", headers=admin).json()["state"] == "running"
    world.clock.advance(2)
    job = client.get("/api/admin/jobs/1", headers=admin).json()
    assert (job["state"], job["error"]) == (
        "failed",
        "the process running the job stopped (no heartbeat for 600 s)",
    )
    failure = audit_trail.latest(world.platform, 1)[0]
    assert (failure.action, failure.actor, failure.details["error"]) == (
        "emission.job.fail",
        "system",
        job["error"],
    )
    assert emission_jobs.fail_stale_jobs(world.platform) == []  # failed once, audited once


def test_a_job_marked_failed_while_it_runs_stores_nothing_more(
    world: World, client: TestClient, admin: dict[str, str], held_commitment: Held
) -> None:
    location = start(client, admin, blocks=1)
    assert held_commitment.entered.wait(30)
    world.clock.advance(STALE_SECONDS + 1)  # as if its heartbeat had stopped
    assert client.get(location, headers=admin).json()["state"] == "failed"
    held_commitment.release.set()  # its runner goes on: its block's transaction finds the job gone
    runner: JobRunner = client.app.state.jobs  # type: ignore[attr-defined]
    runner.wait()
    assert stored_blocks(world) == []
    job = client.get(location, headers=admin).json()
    assert job["error"].startswith("the process running the job stopped")
    assert [a for a, _ in actions(world)].count("emission.job.fail") == 1


def test_a_server_stopping_fails_its_running_jobs_at_their_next_step(
    world: World, client: TestClient, admin: dict[str, str], held_commitment: Held
) -> None:
    location = start(client, admin, blocks=1)
    assert held_commitment.entered.wait(30)
    runner: JobRunner = client.app.state.jobs  # type: ignore[attr-defined]
    stopping = threading.Thread(target=runner.stop)
    stopping.start()
    while not runner._stopping.is_set():
        time.sleep(0.01)
    held_commitment.release.set()
    stopping.join(30)
    job = client.get(location, headers=admin).json()
    assert (job["state"], job["error"]) == ("failed", "the server stopped during the job")
    assert stored_blocks(world) == []
    refused = client.post("/api/admin/emissions", json=tiny_body(1), headers=admin)
    assert refused.status_code == 503


def test_a_succeeded_job_reads_done_equal_to_total_whatever_its_last_beat_said(
    world: World,
) -> None:
    now = world.platform.clock.now()
    with world.platform.uow.write() as repos:
        job_id = repos.emission_jobs.add("operator:x", "cash", 1, "00" * 32, "r", now)
        assert repos.emission_jobs.beat(job_id, "r", now, ("storing", 1, 14, 69))
        assert repos.emission_jobs.succeed(job_id, "r", now, "[1]")
    with world.platform.uow.read() as repos:
        job = repos.emission_jobs.get(job_id)
    assert job is not None and (job.stage, job.done, job.total) == ("done", 69, 69)
