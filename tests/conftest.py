"""Shared test configuration, and the one ``world`` fixture of the suite.

In CI (``GRATTAGE_REQUIRE_POSTGRES`` / ``_BROWSER`` / ``_CLUSTER`` set) a test that would be
skipped for want of PostgreSQL, Chromium or the cluster's tools (tests/cluster/) fails
instead, so a green run proves they ran.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from support import DATABASES, World, make_world

settings.register_profile("ci", max_examples=200, deadline=None)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REQUIRED_SKIPS = {
    "postgres": "GRATTAGE_REQUIRE_POSTGRES",
    "browser": "GRATTAGE_REQUIRE_BROWSER",
    "cluster": "GRATTAGE_REQUIRE_CLUSTER",
}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if not report.skipped:
        return
    for marker, flag in REQUIRED_SKIPS.items():
        if item.get_closest_marker(marker) and os.environ.get(flag):
            report.outcome = "failed"
            report.longrepr = f"{flag} is set, so this {marker} test may not be skipped: " + str(
                report.longrepr
            )


@pytest.fixture
def world_settings() -> dict[str, object]:
    """Settings the ``world`` overrides; a folder whose worlds need others overrides this
    fixture in its own conftest (the reliability suite plays without limits)."""
    return {}


@pytest.fixture(params=DATABASES)
def world(
    request: pytest.FixtureRequest, tmp_path: Path, world_settings: dict[str, object]
) -> Iterator[World]:
    """A platform on a fresh database of each kind (SQLite, PostgreSQL), with a clock the test
    moves; the books must reconcile at teardown."""
    with make_world(request.param, tmp_path, **world_settings) as built:
        yield built
