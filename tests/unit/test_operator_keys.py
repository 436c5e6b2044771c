"""The operator's signing keys in the key store: the first one made on first use; each key a
rotation makes written 0600 under its key id, refused if it exists, and read back by its id."""

from __future__ import annotations

from pathlib import Path

import pytest

from grattage.adapters.keystore import FileKeyStore
from grattage.blocks.signing import Signer
from grattage.errors import Unavailable


def test_a_rotation_s_key_is_stored_0600_under_its_id_and_read_back_by_it(tmp_path: Path) -> None:
    store = FileKeyStore(tmp_path / "keys")
    first = Signer(store.operator_key())
    assert store.operator_key(first.key_id) == store.operator_key(None)
    private = Signer.new_private_key()
    new = Signer(private)
    store.put_operator_key(new.key_id, private)
    path = tmp_path / "keys" / f"operator-ed25519-{new.key_id}.key"
    assert path.read_bytes() == private and path.stat().st_mode & 0o777 == 0o600
    assert FileKeyStore(tmp_path / "keys").operator_key(new.key_id) == private
    with pytest.raises(FileExistsError):
        store.put_operator_key(new.key_id, Signer.new_private_key())


def test_a_key_missing_or_not_the_one_its_name_says_is_unavailable(tmp_path: Path) -> None:
    store = FileKeyStore(tmp_path / "keys")
    store.operator_key()
    other = Signer(Signer.new_private_key())
    with pytest.raises(Unavailable, match="missing from the key store"):
        store.operator_key(other.key_id)
    (tmp_path / "keys" / f"operator-ed25519-{other.key_id}.key").write_bytes(
        Signer.new_private_key()
    )
    with pytest.raises(Unavailable, match="damaged"):
        store.operator_key(other.key_id)
    with pytest.raises(ValueError, match="64 lowercase hex"):
        store.operator_key("../../etc/passwd")
