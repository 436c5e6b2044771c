"""An app host's key store is read-only (docs/deploy.md): the operator's own keys are made
where blocks are made, and a host that cannot make a missing one says so (503), never 500."""

from __future__ import annotations

from pathlib import Path

import pytest

from grattage.adapters.keystore import PSEUDONYM_KEY_FILE, FileKeyStore
from grattage.errors import Unavailable
from support import World


def test_a_key_store_that_cannot_be_written_refuses_a_missing_own_key_as_unavailable(
    tmp_path: Path,
) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    store = FileKeyStore(tmp_path / "a-file" / "keys")  # no key can ever be written there
    with pytest.raises(Unavailable, match="cannot be written here"):
        store.pseudonym_key()
    with pytest.raises(Unavailable, match="cannot be written here"):
        store.operator_key()


def test_an_emission_makes_the_operators_own_keys_on_the_host_that_writes_the_key_store(
    world: World,
) -> None:
    key_dir = world.settings.key_dir
    (key_dir / PSEUDONYM_KEY_FILE).unlink(missing_ok=True)
    world.stock("cash")
    assert (key_dir / PSEUDONYM_KEY_FILE).stat().st_size == 32
