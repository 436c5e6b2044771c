"""The HTTP API: :func:`create_app` builds it from the settings (never at import time)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import anyio
from fastapi import FastAPI

from grattage import __version__
from grattage.adapters.passwords import HashingSlots
from grattage.adapters.pictures import MatplotlibCharts
from grattage.clock import Clock
from grattage.entrypoints.bootstrap import build_platform
from grattage.entrypoints.disclosures import publish_disclosure_files
from grattage.entrypoints.draw_loop import DrawLoop
from grattage.entrypoints.http import (
    admin_players,
    admin_routes,
    fairness_routes,
    log_routes,
    responsible_routes,
    try_routes,
)
from grattage.entrypoints.http.batching import writes_for
from grattage.entrypoints.http.docs import mount_docs
from grattage.entrypoints.http.errors import AnswerBugs, install_error_handlers
from grattage.entrypoints.http.limits import BodyLimits, LimitBodies
from grattage.entrypoints.http.routes import router
from grattage.entrypoints.http.security import SecurityHeaders
from grattage.entrypoints.serving import die_with_master
from grattage.errors import Unavailable
from grattage.games import game_names
from grattage.service import prizes_left, transparency, try_mode
from grattage.service.context import Platform
from grattage.service.emission_jobs import JobRunner
from grattage.service.tickets import sweep
from grattage.settings import Settings

log = logging.getLogger("grattage.sweeper")

TRY_PURGE_INTERVAL_SECONDS = 60.0


async def _sweep_forever(
    platform: Platform, interval: float, disclosure_dir: Path, sequence: bool
) -> None:
    next_purge = 0.0
    while True:
        try:
            finished = await anyio.to_thread.run_sync(sweep, platform)
            if finished:
                log.info("finished %d unattended tickets", finished)
            if platform.witness is None and sequence:  # else the drawer or `grattage sequence`
                # (a sweeper in a busy worker held the log's lock for hundreds of ms while
                # it waited for the GIL, and the drawer's cosigning waited behind it)
                await anyio.to_thread.run_sync(transparency.integrate_round, platform)
            if time.monotonic() >= next_purge:
                # Try sessions last hours: a purge a minute is plenty, and spares the database
                # a delete every second.
                next_purge = time.monotonic() + TRY_PURGE_INTERVAL_SECONDS
                purged = await anyio.to_thread.run_sync(try_mode.purge, platform)
                if purged:
                    log.info("purged %d expired try sessions", purged)
            published = await anyio.to_thread.run_sync(
                publish_disclosure_files, platform, disclosure_dir
            )
            for path in published:
                log.info("published the disclosure %s", path)
        except Exception:  # the sweeper must outlive a bad moment of the database
            log.exception("sweep failed; retrying")
        await asyncio.sleep(interval)


async def _start_drawing(platform: Platform, settings: Settings) -> DrawLoop | None:
    """Drawn blocks: the witness's health for this process's sales, and the drawer."""
    if platform.witness is None:
        return None
    with contextlib.suppress(Unavailable):  # a first contact, so that sales can start at once
        await anyio.to_thread.run_sync(platform.witness.poll)
    drawing = DrawLoop(platform, lead=settings.run_drawer)
    drawing.start()
    return drawing


def create_app(
    settings: Settings | None = None,
    platform: Platform | None = None,
    clock: Clock | None = None,
    mount_web: bool = True,
) -> FastAPI:
    """The app: the API under ``/api``, OpenAPI at ``/docs``, the pages at ``/`` (last)."""
    settings = settings or Settings()
    platform = platform or build_platform(
        settings, clock=clock, run_migrations=settings.migrate_on_start
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(sweep, platform)  # what was left when the server stopped
        await anyio.to_thread.run_sync(prizes_left.close_blocks_top_prize_sold_out, platform)
        drawing = await _start_drawing(platform, settings)
        task = None
        if settings.run_sweeper:
            task = asyncio.create_task(
                _sweep_forever(
                    platform,
                    settings.sweep_interval_seconds,
                    settings.disclosure_dir,
                    settings.run_sequencer,
                )
            )
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if drawing is not None:
                await anyio.to_thread.run_sync(drawing.stop)
            await anyio.to_thread.run_sync(jobs.stop)  # each job still running is marked failed
            writes.close()

    # The interactive docs are served from a packaged Swagger UI: nothing is fetched from a CDN.
    app = FastAPI(
        title="grattage", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    mount_docs(app)
    app.state.settings = settings
    app.state.platform = platform
    app.state.hashing_slots = HashingSlots(
        settings.password_checks_at_once, settings.password_wait_seconds
    )
    app.state.charts = MatplotlibCharts()  # the pictures port (admin_routes draws charts)
    writes = writes_for(
        platform.uow,
        lanes=game_names(),
        after_batch=None if platform.witness is None else partial(transparency.integrate, platform),
    )
    app.state.writes = writes
    jobs = JobRunner(platform)
    app.state.jobs = jobs  # the emissions this process makes in the background (admin_routes)
    # Added first, so it runs inside SecurityHeaders: a 413 carries the security headers too.
    app.add_middleware(
        LimitBodies,
        limits=BodyLimits(
            default=settings.max_body_bytes,
            larger={("POST", "/api/admin/emissions"): settings.max_table_body_bytes},
        ),
    )
    app.add_middleware(AnswerBugs)  # inside SecurityHeaders: a bug's 500 carries them too
    app.add_middleware(SecurityHeaders)
    install_error_handlers(app)
    app.include_router(router)
    app.include_router(fairness_routes.router)
    app.include_router(log_routes.router)
    app.include_router(responsible_routes.router)
    app.include_router(try_routes.router)
    app.include_router(admin_routes.public)
    app.include_router(admin_routes.router)
    app.include_router(admin_players.router)
    if mount_web:
        from grattage.entrypoints.web import mount_admin_pages

        mount_admin_pages(app)
        from grattage.entrypoints.web import STATIC_DIR, mount_pages

        if STATIC_DIR.is_dir():  # the pages ship separately; the API works without them
            mount_pages(app)
    return app


def app_from_environment() -> FastAPI:
    """The app of ``grattage serve`` (a uvicorn factory, one per worker process)."""
    die_with_master()  # first: a worker must not outlive its master, even while starting
    app = create_app(Settings())
    # What exists by now (the modules of FastAPI, SQLAlchemy, pydantic…: hundreds of
    # thousands of objects) lives as long as the process. Left to the collector, every
    # full collection walked them all: about 60 ms, once a second under load, which was
    # most of the purchases' p99. Frozen, a full collection takes about 1 ms.
    gc.collect()
    gc.freeze()
    return app
