from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from grattage.entrypoints.http import create_app
from support import DATABASES, World, make_world


@pytest.fixture(params=DATABASES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    """Every scenario runs on SQLite and on PostgreSQL; the books must reconcile afterwards."""
    with make_world(request.param, tmp_path) as built:
        yield built


@pytest.fixture
def client(world: World) -> Iterator[TestClient]:
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as test_client:
        yield test_client
