"""Emission jobs: their rows, and writes that hold only while the job is still the runner's.

Every write but the insert is conditional (``WHERE state = 'running' AND …``) and answers
whether it changed the row: a job marked failed stays failed whatever its runner still tries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from grattage.adapters.rows import record_of
from grattage.adapters.tables import emission_jobs
from grattage.service.model import EmissionJob, JobStage


def _job(row: Any) -> EmissionJob:
    return record_of(EmissionJob, row)


class SqlEmissionJobs:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(
        self, actor: str, game: str, blocks: int, table_digest: str, runner: str, now: datetime
    ) -> int:
        return int(
            self.db.execute(
                insert(emission_jobs)
                .values(
                    actor=actor,
                    game=game,
                    blocks=blocks,
                    table_digest=table_digest,
                    state="running",
                    stage="queued",
                    runner=runner,
                    heartbeat_at=now,
                    created_at=now,
                )
                .returning(emission_jobs.c.id)
            ).scalar_one()
        )

    def get(self, job_id: int) -> EmissionJob | None:
        row = self.db.execute(select(emission_jobs).where(emission_jobs.c.id == job_id)).first()
        return None if row is None else _job(row)

    def latest(self, limit: int) -> list[EmissionJob]:
        query = select(emission_jobs).order_by(emission_jobs.c.id.desc()).limit(limit)
        return [_job(row) for row in self.db.execute(query)]

    def stale(self, heartbeat_before: datetime) -> list[int]:
        query = select(emission_jobs.c.id).where(
            emission_jobs.c.state == "running", emission_jobs.c.heartbeat_at < heartbeat_before
        )
        return [int(job_id) for job_id in self.db.execute(query).scalars()]

    def _update_running(self, job_id: int, *conditions: Any, **values: Any) -> bool:
        changed = self.db.execute(
            update(emission_jobs)
            .where(emission_jobs.c.id == job_id, emission_jobs.c.state == "running", *conditions)
            .values(**values)
            .returning(emission_jobs.c.id)
        ).first()
        return changed is not None

    def beat(
        self,
        job_id: int,
        runner: str,
        now: datetime,
        progress: tuple[JobStage, int, int, int],
        emission_id: int | None = None,
    ) -> bool:
        stage, block, done, total = progress
        values: dict[str, Any] = {"heartbeat_at": now, "stage": stage, "block": block}
        values |= {"done": done, "total": total}
        if emission_id is not None:
            values["emission_id"] = emission_id
        return self._update_running(job_id, emission_jobs.c.runner == runner, **values)

    def succeed(self, job_id: int, runner: str, now: datetime, opened: str) -> bool:
        return self._update_running(
            job_id,
            emission_jobs.c.runner == runner,
            state="succeeded",
            stage="done",
            done=emission_jobs.c.total,  # the last stage's count, reached: done / total is full
            opened=opened,
            finished_at=now,
        )

    def fail(
        self,
        job_id: int,
        error: str,
        now: datetime,
        *,
        runner: str | None = None,
        heartbeat_before: datetime | None = None,
        progress: tuple[JobStage, int, int, int] | None = None,
    ) -> bool:
        """Mark the job failed if it still runs under ``runner``, or, for a job whose runner
        died, if its heartbeat is still older than ``heartbeat_before``; with the ``progress``
        it had reached, if known."""
        values: dict[str, Any] = {"state": "failed", "error": error, "finished_at": now}
        if progress is not None:
            stage, block, done, total = progress
            values |= {"stage": stage, "block": block, "done": done, "total": total}
        conditions = []
        if runner is not None:
            conditions.append(emission_jobs.c.runner == runner)
        if heartbeat_before is not None:
            conditions.append(emission_jobs.c.heartbeat_at < heartbeat_before)
        return self._update_running(job_id, *conditions, **values)
