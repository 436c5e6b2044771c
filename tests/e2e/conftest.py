"""What the end-to-end tests add to the shared ``world`` (tests/conftest.py)."""

from __future__ import annotations

from support import World


def cli_env(world: World) -> dict[str, str]:
    return {
        "GRATTAGE_DATABASE_URL": world.settings.database_url,
        "GRATTAGE_KEY_DIR": str(world.settings.key_dir),
        "GRATTAGE_DISCLOSURE_DIR": str(world.settings.disclosure_dir),
    }
