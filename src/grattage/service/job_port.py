"""The emission jobs' storage port (its adapter: :mod:`grattage.adapters.emission_jobs`), kept
beside :mod:`grattage.service.ports`, which re-exports it."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from grattage.service.model import EmissionJob, JobStage


class EmissionJobRepository(Protocol):
    """Every write but ``add`` changes a job only while it is running (under ``runner``,
    when one is given) and answers whether it did."""

    def add(
        self, actor: str, game: str, blocks: int, table_digest: str, runner: str, now: datetime
    ) -> int: ...
    def get(self, job_id: int) -> EmissionJob | None: ...
    def latest(self, limit: int) -> list[EmissionJob]: ...
    def stale(self, heartbeat_before: datetime) -> list[int]:
        """The running jobs whose heartbeat is older than ``heartbeat_before``."""
        ...

    def beat(
        self,
        job_id: int,
        runner: str,
        now: datetime,
        progress: tuple[JobStage, int, int, int],
        emission_id: int | None = None,
    ) -> bool:
        """The heartbeat and the (stage, block, done, total) reached."""
        ...

    def succeed(self, job_id: int, runner: str, now: datetime, opened: str) -> bool: ...
    def fail(
        self,
        job_id: int,
        error: str,
        now: datetime,
        *,
        runner: str | None = None,
        heartbeat_before: datetime | None = None,
        progress: tuple[JobStage, int, int, int] | None = None,
    ) -> bool: ...
