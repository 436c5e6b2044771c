"""The pages: plain HTML, CSS and JavaScript modules shipped in the package, no build step."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(str(resources.files("grattage.entrypoints.web").joinpath("static")))

PAGES = ("login", "cash", "astro", "history")
"""Pages also reachable without ``.html`` (``/cash`` as well as ``/cash.html``)."""


def _page_route(app: FastAPI, name: str) -> None:
    page = STATIC_DIR / f"{name}.html"

    @app.get(f"/{name}", include_in_schema=False)
    def serve_page() -> FileResponse:
        return FileResponse(page, media_type="text/html")


def mount_pages(app: FastAPI) -> None:
    """Serve the pages at ``/`` (``/index.html`` is the lobby). Call it after the API routes."""
    for name in PAGES:
        _page_route(app, name)
    app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="pages")


ADMIN_DIR = STATIC_DIR / "admin"


def mount_admin_pages(app: FastAPI) -> None:
    """Serve the operator's pages at ``/admin`` (before ``/``, which would shadow them)."""
    if ADMIN_DIR.is_dir():
        app.mount("/admin", StaticFiles(directory=ADMIN_DIR, html=True), name="admin")
