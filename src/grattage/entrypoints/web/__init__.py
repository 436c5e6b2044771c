"""The pages: HTML from Jinja2 templates sharing one base layout, CSS and JavaScript modules
shipped in the package, no build step.

The templates hold no per-request data (the pages ask the API for everything), so each page is
rendered once, when the app is built, and served from memory.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

WEB_DIR = Path(str(resources.files("grattage.entrypoints.web")))
STATIC_DIR = WEB_DIR / "static"
TEMPLATES_DIR = WEB_DIR / "templates"
ADMIN_DIR = STATIC_DIR / "admin"

PAGES: dict[str, tuple[str, ...]] = {
    "index.html": ("/", "/index.html"),
    "login.html": ("/login", "/login.html"),
    "cash.html": ("/cash", "/cash.html"),
    "astro.html": ("/astro", "/astro.html"),
    "history.html": ("/history", "/history.html"),
    "limits.html": ("/limits.html",),
    # « Règles du jeu », public: each game's template extends rules.html (answers.rules_page).
    "cash_rules.html": ("/regles/cash",),
    "astro_rules.html": ("/regles/astro",),
}
"""Each page's template and the addresses that serve it."""

TRY_PAGES: dict[str, str] = {"/essai/cash": "cash.html", "/essai/astro": "astro.html"}
"""« Essayer gratuitement »: each game's own page rendered in the try mode (play money, the
try banner and history; game.html), at its address."""


def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_pages() -> dict[str, str]:
    """Every page's HTML by template name; a missing block or variable is an error, not a gap."""
    environment = _environment()
    return {name: environment.get_template(name).render(try_mode=False) for name in PAGES}


def render_try_pages() -> dict[str, str]:
    """Every try page's HTML by address."""
    environment = _environment()
    return {
        path: environment.get_template(name).render(try_mode=True)
        for path, name in TRY_PAGES.items()
    }


def render_not_found_page() -> str:
    """The French 404 page a browser gets for an address that leads nowhere (errors.py)."""
    return _environment().get_template("not_found.html").render(try_mode=False)


def _page_route(app: FastAPI, path: str, html: str) -> None:
    @app.api_route(path, methods=["GET", "HEAD"], include_in_schema=False)
    def serve_page() -> HTMLResponse:
        return HTMLResponse(html)


def mount_pages(app: FastAPI) -> None:
    """Serve the pages and the static files at ``/``. Call it after the API routes."""
    for name, html in render_pages().items():
        for path in PAGES[name]:
            _page_route(app, path, html)
    for path, html in render_try_pages().items():
        _page_route(app, path, html)
    app.state.not_found_page = render_not_found_page()  # read by errors.py's 404 answer
    app.mount("/", StaticFiles(directory=STATIC_DIR), name="pages")


def mount_admin_pages(app: FastAPI) -> None:
    """Serve the operator's pages at ``/admin`` (before ``/``, which would shadow them)."""
    if ADMIN_DIR.is_dir():
        app.mount("/admin", StaticFiles(directory=ADMIN_DIR, html=True), name="admin")
