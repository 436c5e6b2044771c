"""The reliability suite (issue 7): short runs in ``make test``, long ones in ``make soak``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support import DATABASES, World, make_world

from .harness import FIGURES, PLAY_WITHOUT_LIMITS, SOAK


@pytest.fixture(params=DATABASES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    """A fresh database of each kind; its books must reconcile at teardown."""
    with make_world(request.param, tmp_path, **PLAY_WITHOUT_LIMITS) as built:
        yield built


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section(f"reliability figures ({'soak' if SOAK else 'short'} run)")
    for entry in FIGURES:
        values = ", ".join(f"{k}={v}" for k, v in entry.items() if k not in {"scenario", "soak"})
        terminalreporter.write_line(f"{entry['scenario']}: {values}")
