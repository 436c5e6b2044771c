"""Fixtures for the browser tests: the app served by uvicorn on a free local port, and
Debian's Chromium driven by Playwright for Python.

Every test gets a fresh browser context (its own cookies) and saves screenshots under
``test-artifacts/``.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import PageTrouble

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]


def chromium_path() -> str | None:
    path = os.environ.get("GRATTAGE_CHROMIUM", "/usr/bin/chromium")
    return path if Path(path).is_file() and os.access(path, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LiveServer:
    """uvicorn serving ``app`` in a background thread until ``stop()``."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.app = app
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


TABLES = Path(__file__).parent / "tables"
BLOCKS_PER_GAME = 5


BEACON_MS = 200


def build_app(directory: Path, inactivity_seconds: int, blocks: int, drawn: bool = False) -> Any:
    """The real app on a fresh SQLite file, stocked with small blocks of both games; ``drawn``:
    with a witness in the process on the wall clock (a round every BEACON_MS), so that its
    blocks are drawn (docs/draw.md) and the app's own drawer draws the sales."""
    from grattage.entrypoints.bootstrap import build_platform
    from grattage.entrypoints.http import create_app
    from grattage.games import load_table
    from grattage.service.emissions import create_emission
    from grattage.settings import Settings
    from support import NO_RATE_LIMITS

    settings = Settings(
        database_url=f"sqlite:///{directory / 'grattage.db'}",
        key_dir=directory / "keys",
        disclosure_dir=directory / "disclosures",
        inactivity_seconds=inactivity_seconds,
        sweep_interval_seconds=0.5,
        **NO_RATE_LIMITS,  # type: ignore[arg-type]
    )
    platform = build_platform(settings)
    if drawn:
        from grattage.adapters.local_witness import LocalWitness
        from grattage.adapters.witness_port import wall_clock_ms

        platform.witness = LocalWitness(
            directory / "witness",
            platform.signer().public_key,
            period_ms=BEACON_MS,
            chain_length=20_000,
            clock=wall_clock_ms,
        )
    for game in ("cash", "astro"):
        name = f"{game}_small.toml"
        table = load_table(game, (TABLES / name).read_text("utf-8"), name)
        create_emission(platform, game, blocks, table=table)
    return create_app(settings, platform=platform)


@pytest.fixture(scope="session")
def server_factory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def start(
        inactivity_seconds: int, blocks: int = BLOCKS_PER_GAME, drawn: bool = False
    ) -> LiveServer:
        tmp = tmp_path_factory.mktemp(f"app-inactivity-{inactivity_seconds}")
        server = LiveServer(build_app(tmp, inactivity_seconds, blocks, drawn))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def live_server(server_factory: Callable[..., LiveServer]) -> LiveServer:
    """The app with the default inactivity delay (long enough for hand scratching)."""
    return server_factory(30)


@pytest.fixture(scope="session")
def drawn_server(server_factory: Callable[..., LiveServer]) -> LiveServer:
    """The app whose blocks are drawn by a witness's rounds (issue 15)."""
    return server_factory(30, drawn=True)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    executable = chromium_path()
    if executable is None:
        pytest.skip(
            "NO CHROMIUM FOUND: browser tests need Debian's chromium at $GRATTAGE_CHROMIUM "
            "(default /usr/bin/chromium): apt-get install -y chromium"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page_trouble() -> PageTrouble:
    """What went wrong on the test's pages (a test may ``allow`` an error it causes)."""
    return PageTrouble()


@pytest.fixture
def new_page(browser: Any, page_trouble: PageTrouble) -> Iterator[Callable[..., Any]]:
    """Open a page in a fresh context; an uncaught exception, a console error or a CSP violation
    on the page fails the test (see :class:`PageTrouble`)."""
    contexts: list[Any] = []
    trouble = page_trouble

    def open_page(base_url: str, width: int = 1280, height: int = 900, **options: Any) -> Any:
        context = browser.new_context(
            base_url=base_url,
            viewport={"width": width, "height": height},
            locale="fr-FR",
            **options,
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        trouble.watch(page)
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert not trouble.errors, f"errors on the page: {trouble.errors}"
