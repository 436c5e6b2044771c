"""What the end-to-end tests add to the shared ``world`` (tests/conftest.py)."""

from __future__ import annotations

import pytest

from support import World


@pytest.fixture
def world_settings() -> dict[str, object]:
    """Undrawn blocks: these tests run the CLI and servers as processes, which cannot reach a
    witness in the test's own process, and check the proofs of tickets sold unit n to sale n
    (a drawn ticket's proof is the verifiers' part of issue 15). Drawn sales through real
    processes, with a real witness process: tests/reliability/test_drawn_crash.py."""
    return {"drawn": False}


def cli_env(world: World) -> dict[str, str]:
    return {
        "GRATTAGE_DATABASE_URL": world.settings.database_url,
        "GRATTAGE_KEY_DIR": str(world.settings.key_dir),
        "GRATTAGE_DISCLOSURE_DIR": str(world.settings.disclosure_dir),
    }
