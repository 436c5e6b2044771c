"""The pages: plain HTML, CSS and JavaScript modules shipped in the package, no build step."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(str(resources.files("grattage.entrypoints.web").joinpath("static")))


def mount_pages(app: FastAPI) -> None:
    """Serve the pages at ``/`` (``/index.html`` is the lobby)."""
    app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="pages")


ADMIN_DIR = STATIC_DIR / "admin"


def mount_admin_pages(app: FastAPI) -> None:
    """Serve the operator's pages at ``/admin`` (before ``/``, which would shadow them)."""
    if ADMIN_DIR.is_dir():
        app.mount("/admin", StaticFiles(directory=ADMIN_DIR, html=True), name="admin")
