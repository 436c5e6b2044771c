"""The reliability suite (issue 7): short runs in ``make test``, long ones in ``make soak``."""

from __future__ import annotations

import pytest

from .harness import FIGURES, PLAY_WITHOUT_LIMITS, SOAK


@pytest.fixture
def world_settings() -> dict[str, object]:
    """The shared ``world`` (tests/conftest.py), without the responsible-gaming limits, its
    blocks undrawn: the server processes these scenarios start cannot reach a witness in the
    test's own process. Drawn sales through real processes, with a real witness process:
    test_drawn_crash.py."""
    return {**PLAY_WITHOUT_LIMITS, "drawn": False}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section(f"reliability figures ({'soak' if SOAK else 'short'} run)")
    for entry in FIGURES:
        values = ", ".join(f"{k}={v}" for k, v in entry.items() if k not in {"scenario", "soak"})
        terminalreporter.write_line(f"{entry['scenario']}: {values}")
