"""Emissions made in the background: the back office asks, a thread of the process that took
the request makes the blocks, and the job's row tells how far it got.

A job is run by the one process that created it, on a thread of its own, under a ``runner``
name (host, process id, a random tag) that nobody else uses: no job is ever taken over or run
twice. While it runs, a heartbeat thread writes its progress and the time every
:data:`PROGRESS_SECONDS` (at least five times within ``job_stale_seconds``), and every write
of the job (each block's transaction included, through
:class:`~grattage.service.emissions.EmissionWatch`) holds only while the job still runs under
that runner. A running job whose heartbeat is older than ``job_stale_seconds`` had its process
die: the next look at it, or the next job started, marks it failed.

Each block is written whole, in one transaction, once sealed and committed to
(:func:`~grattage.service.emissions.create_emission`), so no failure — an error, a lost
database, a SIGKILL — leaves half a block. A failed job sells nothing: in the transaction
that marks it failed, the blocks it stored that are still pending are closed, and the failure
is audited (``emission.job.fail``) with the reason, the blocks stored and the blocks closed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import socket
import threading
from dataclasses import dataclass, field
from datetime import timedelta

from grattage.errors import GrattageError, NotFound, Unavailable
from grattage.games import PrizeTable, default_table, find_game
from grattage.service.audit_trail import record, record_block_changes
from grattage.service.context import Platform
from grattage.service.emissions import EmissionCreated, check_block_count, create_emission
from grattage.service.model import EmissionJob, JobStage
from grattage.service.ports import Repositories
from grattage.service.records import EmissionJobRecord

log = logging.getLogger(__name__)

_PHASE = re.compile(r"block (\d+): (shuffling|committing|storing)")
"""How :func:`create_emission` names the phases it reports (``block 2: committing``)."""

DIED = "the process running the job stopped (no heartbeat for {seconds:g} s)"
STOPPED = "the server stopped during the job"
MAX_ERROR_LENGTH = 500
PROGRESS_SECONDS = 0.5
"""How often a running job writes its progress (with its heartbeat), at most: what the back
office's page, polling, can show."""


class _Abandoned(Exception):
    """The job may not go on: its process is stopping, or it is no longer the runner's."""


def _reason(error: BaseException) -> str:
    """What the operator reads: our own errors' messages, never a driver's or a traceback."""
    if isinstance(error, GrattageError | _Abandoned):
        text = str(error)
    else:
        text = f"internal error ({type(error).__name__}); the server log has the details"
    return text[:MAX_ERROR_LENGTH]


@dataclass
class _Run:
    """One job as its runner sees it: the progress reached, written by the heartbeat."""

    job_id: int
    runner: str
    game: str
    blocks: int
    table: PrizeTable
    actor: str
    stage: JobStage = "queued"
    block: int = 0
    done: int = 0
    total: int = 0
    emission_id: int | None = None
    lost: bool = False
    finished: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def snapshot(self) -> tuple[JobStage, int, int, int]:
        with self.lock:
            return self.stage, self.block, self.done, self.total


class JobRunner:
    """Runs this process's emission jobs, each on a thread of its own."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._tag = f"{socket.gethostname()[:30]}:{os.getpid()}"

    @property
    def heartbeat_seconds(self) -> float:
        """Progress every :data:`PROGRESS_SECONDS`, and a heartbeat at least five times within
        ``job_stale_seconds``."""
        return min(PROGRESS_SECONDS, self.platform.policy.job_stale_seconds / 5)

    def start(
        self, game_name: str, blocks: int, *, table: PrizeTable | None = None, actor: str
    ) -> int:
        """Check the request, record the job (audited) and start it; its id, at once."""
        check_block_count(blocks)
        table = table or default_table(game_name)
        game = find_game(game_name, table)
        if self._stopping.is_set():
            raise Unavailable("the server is stopping; start the emission again in a moment")
        fail_stale_jobs(self.platform)
        run = _Run(0, f"{self._tag}:{secrets.token_hex(4)}", game.name, blocks, table, actor)
        now = self.platform.clock.now()
        with self.platform.uow.write() as repos:
            run.job_id = repos.emission_jobs.add(
                actor, game.name, blocks, table.digest(), run.runner, now
            )
            details = {"game": game.name, "blocks": blocks, "table_digest": table.digest()}
            record(repos, now, actor, "emission.job.start", f"job:{run.job_id}", details)
        thread = threading.Thread(
            target=self._run, args=(run,), name=f"emission-job-{run.job_id}", daemon=True
        )
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return run.job_id

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the running jobs at their next step (each is marked failed) and wait."""
        self._stopping.set()
        self.wait(timeout)

    def wait(self, timeout: float = 30.0) -> None:
        """Wait for the jobs this runner started to end."""
        for thread in self._threads:
            thread.join(timeout)

    def _run(self, run: _Run) -> None:
        beat = threading.Thread(target=self._beat, args=(run,), daemon=True)
        beat.start()
        try:
            create_emission(
                self.platform,
                run.game,
                run.blocks,
                table=run.table,
                actor=run.actor,
                progress=lambda phase, done, total: self._progress(run, phase, done, total),
                watch=_Watch(self, run),
            )
        except BaseException as error:  # whatever it is, the job failed
            run.finished.set()
            beat.join()
            if not isinstance(error, GrattageError | _Abandoned):
                log.exception("emission job %s failed", run.job_id)
            try:
                _fail(
                    self.platform, run.job_id, _reason(error), runner=run.runner, at=run.snapshot()
                )
            except GrattageError:  # its heartbeat has stopped: the next look marks it failed
                log.exception("emission job %s: could not record its failure", run.job_id)
            return
        run.finished.set()
        beat.join()

    def _progress(self, run: _Run, phase: str, done: int, total: int) -> None:
        if run.lost:
            raise _Abandoned("the job was marked failed while it ran")
        if self._stopping.is_set():
            raise _Abandoned(STOPPED)
        matched = _PHASE.fullmatch(phase)
        with run.lock:
            if matched is not None:
                run.block = int(matched.group(1))
                run.stage = matched.group(2)  # type: ignore[assignment]
            run.done, run.total = done, total

    def _beat(self, run: _Run) -> None:
        while not run.finished.wait(self.heartbeat_seconds):
            try:
                with self.platform.uow.write() as repos:
                    alive = repos.emission_jobs.beat(
                        run.job_id, run.runner, self.platform.clock.now(), run.snapshot()
                    )
            except GrattageError:
                continue  # the database is away for now; the next beat tries again
            if not alive:
                run.lost = True
                return


@dataclass
class _Watch:
    """The job's books inside each of the emission's transactions."""

    runner: JobRunner
    run: _Run

    def stored(self, repos: Repositories, emission_id: int) -> None:
        run = self.run
        run.emission_id = emission_id
        now = self.runner.platform.clock.now()
        if not repos.emission_jobs.beat(run.job_id, run.runner, now, run.snapshot(), emission_id):
            raise _Abandoned("the job was marked failed while it ran")

    def finished(self, repos: Repositories, created: EmissionCreated) -> None:
        run = self.run
        now = self.runner.platform.clock.now()
        with run.lock:
            run.stage, run.done, run.total = "opening", run.blocks, run.blocks
        opened = json.dumps(list(created.opened))
        if not repos.emission_jobs.succeed(run.job_id, run.runner, now, opened):
            raise _Abandoned("the job was marked failed while it ran")
        details = {"emission": created.emission_id, "blocks": list(created.block_ids)}
        details["opened"] = list(created.opened)
        record(repos, now, run.actor, "emission.job.finish", f"job:{run.job_id}", details)


def _fail(
    platform: Platform,
    job_id: int,
    reason: str,
    *,
    runner: str | None = None,
    stale: bool = False,
    at: tuple[JobStage, int, int, int] | None = None,
) -> bool:
    """Mark the job failed (if it still runs under ``runner``, or still has a stale
    heartbeat) at the progress ``at``, close its blocks still pending and audit it, in one
    transaction."""
    now = platform.clock.now()
    cutoff = now - timedelta(seconds=platform.policy.job_stale_seconds) if stale else None
    with platform.uow.write() as repos:
        if not repos.emission_jobs.fail(
            job_id, reason, now, runner=runner, heartbeat_before=cutoff, progress=at
        ):
            return False
        job = repos.emission_jobs.get(job_id)
        assert job is not None
        stored = _block_ids(repos, job)
        closed = [b for b in stored if repos.blocks.set_state(b, "closed", only_from="pending")]
        actor = "system" if stale else job.actor
        record_block_changes(repos, now, actor)
        details = {"error": reason, "emission": job.emission_id, "blocks": list(stored)}
        details["closed"] = closed
        record(repos, now, actor, "emission.job.fail", f"job:{job_id}", details)
    return True


def fail_stale_jobs(platform: Platform) -> list[int]:
    """Mark failed every running job whose process died (heartbeat stale); their ids."""
    seconds = platform.policy.job_stale_seconds
    cutoff = platform.clock.now() - timedelta(seconds=seconds)
    with platform.uow.read() as repos:
        stale = repos.emission_jobs.stale(cutoff)
    reason = DIED.format(seconds=seconds)
    return [job_id for job_id in stale if _fail(platform, job_id, reason, stale=True)]


def _block_ids(repos: Repositories, job: EmissionJob) -> tuple[int, ...]:
    if job.emission_id is None:
        return ()
    return tuple(b.id for b in repos.blocks.all(job.game) if b.emission_id == job.emission_id)


def _record(repos: Repositories, job: EmissionJob) -> EmissionJobRecord:
    return EmissionJobRecord(
        id=job.id,
        game=job.game,
        actor=job.actor,
        state=job.state,
        stage=job.stage,
        block=job.block,
        blocks=job.blocks,
        done=job.done,
        total=job.total,
        error=job.error,
        emission_id=job.emission_id,
        block_ids=_block_ids(repos, job),
        opened=tuple(json.loads(job.opened)),
        table_digest=job.table_digest,
        created_at=job.created_at,
        finished_at=job.finished_at,
    )


def job(platform: Platform, job_id: int) -> EmissionJobRecord:
    """The job as it is now; a running job whose process died is marked failed first."""
    cutoff = platform.clock.now() - timedelta(seconds=platform.policy.job_stale_seconds)
    with platform.uow.read() as repos:
        found = repos.emission_jobs.get(job_id)
        if found is None:
            raise NotFound(f"no job {job_id!r}")
        if not (found.state == "running" and found.heartbeat_at < cutoff):
            return _record(repos, found)
    reason = DIED.format(seconds=platform.policy.job_stale_seconds)
    _fail(platform, job_id, reason, stale=True)
    with platform.uow.read() as repos:
        found = repos.emission_jobs.get(job_id)
        assert found is not None
        return _record(repos, found)


def latest_jobs(platform: Platform, limit: int = 20) -> list[EmissionJobRecord]:
    """The latest jobs, newest first (the stale ones marked failed first)."""
    fail_stale_jobs(platform)
    with platform.uow.read() as repos:
        return [_record(repos, found) for found in repos.emission_jobs.latest(limit)]
