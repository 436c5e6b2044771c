from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support import DATABASES, World, make_world


@pytest.fixture(params=DATABASES)
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with make_world(request.param, tmp_path) as built:
        yield built


def cli_env(world: World) -> dict[str, str]:
    return {
        "GRATTAGE_DATABASE_URL": world.settings.database_url,
        "GRATTAGE_KEY_DIR": str(world.settings.key_dir),
        "GRATTAGE_DISCLOSURE_DIR": str(world.settings.disclosure_dir),
    }
