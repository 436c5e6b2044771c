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
