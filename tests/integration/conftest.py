"""The HTTP client over the shared ``world`` (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from grattage.entrypoints.http import create_app
from support import World


@pytest.fixture
def client(world: World) -> Iterator[TestClient]:
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as test_client:
        yield test_client
