"""The HTTP API: :func:`create_app` builds it from the settings (never at import time)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from fastapi import FastAPI

from grattage import __version__
from grattage.adapters.pictures import MatplotlibCharts
from grattage.clock import Clock
from grattage.entrypoints.bootstrap import build_platform
from grattage.entrypoints.disclosures import publish_disclosure_files
from grattage.entrypoints.http import admin_routes, fairness_routes, responsible_routes
from grattage.entrypoints.http.batching import writes_for
from grattage.entrypoints.http.docs import mount_docs
from grattage.entrypoints.http.errors import install_error_handlers
from grattage.entrypoints.http.routes import router
from grattage.entrypoints.http.security import SecurityHeaders
from grattage.service.context import Platform
from grattage.service.tickets import sweep
from grattage.settings import Settings

log = logging.getLogger("grattage.sweeper")


async def _sweep_forever(platform: Platform, interval: float, disclosure_dir: Path) -> None:
    while True:
        try:
            finished = await anyio.to_thread.run_sync(sweep, platform)
            if finished:
                log.info("finished %d unattended tickets", finished)
            published = await anyio.to_thread.run_sync(
                publish_disclosure_files, platform, disclosure_dir
            )
            for path in published:
                log.info("published the disclosure %s", path)
        except Exception:  # the sweeper must outlive a bad moment of the database
            log.exception("sweep failed; retrying")
        await asyncio.sleep(interval)


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
        task = None
        if settings.run_sweeper:
            task = asyncio.create_task(
                _sweep_forever(platform, settings.sweep_interval_seconds, settings.disclosure_dir)
            )
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            writes.close()

    # The interactive docs are served from a packaged Swagger UI: nothing is fetched from a CDN.
    app = FastAPI(
        title="grattage", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    mount_docs(app)
    app.state.settings = settings
    app.state.platform = platform
    app.state.charts = MatplotlibCharts()  # the pictures port (admin_routes draws charts)
    writes = writes_for(platform.uow, settings.purchase_threads)
    app.state.writes = writes
    app.add_middleware(SecurityHeaders)
    install_error_handlers(app)
    app.include_router(router)
    app.include_router(fairness_routes.router)
    app.include_router(responsible_routes.router)
    app.include_router(admin_routes.public)
    app.include_router(admin_routes.router)
    if mount_web:
        from grattage.entrypoints.web import mount_admin_pages

        mount_admin_pages(app)
        from grattage.entrypoints.web import STATIC_DIR, mount_pages

        if STATIC_DIR.is_dir():  # the pages ship separately; the API works without them
            mount_pages(app)
    return app


def app_from_environment() -> FastAPI:
    """The app of ``grattage serve`` (a uvicorn factory, one per worker process)."""
    app = create_app(Settings())
    # What exists by now (the modules of FastAPI, SQLAlchemy, pydantic…: hundreds of
    # thousands of objects) lives as long as the process. Left to the collector, every
    # full collection walked them all: about 60 ms, once a second under load, which was
    # most of the purchases' p99. Frozen, a full collection takes about 1 ms.
    gc.collect()
    gc.freeze()
    return app
