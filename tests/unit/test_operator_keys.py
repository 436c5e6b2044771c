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


def test_monitor_compare_with_one_key_names_a_head_signed_by_another_and_points_to_the_log(
    tmp_path: Path,
) -> None:
    # Two monitors' heads from either side of a key rotation: with --key, the later head's
    # signature "did not verify" — true, but it is the key history that tells them apart.
    import json

    from click.testing import CliRunner

    from grattage.entrypoints.cli import cli

    old, new = Signer(Signer.new_private_key()), Signer(Signer.new_private_key())
    first = tmp_path / "first.json"
    second = tmp_path / "second.json"
    first.write_text(json.dumps(old.sign_tree_head(5, 1_000, b"\x01" * 32).to_json()))
    second.write_text(json.dumps(new.sign_tree_head(9, 2_000, b"\x02" * 32).to_json()))
    result = CliRunner().invoke(
        cli, ["monitor", "compare", str(first), str(second), "--key", old.public_key.hex()]
    )
    assert result.exit_code == 1, result.output
    assert f"the head of size 9 is signed by key {new.key_id[:16]}…" in result.stderr
    assert "give --log" in result.stderr


def test_a_log_key_history_whose_first_key_starts_after_entry_0_is_refused() -> None:
    # The outsider's doctored GET /api/log/key (the first key's from_index set to 1): the
    # monitor and verify-block refused it, verify-ticket --log took it.
    from grattage.entrypoints.cli.monitor import LogClient
    from grattage.errors import VerificationFailed

    signer = Signer(Signer.new_private_key())
    head = signer.sign_tree_head(3, 1_000, b"\x03" * 32)

    class Doctored(LogClient):
        def get(self, path: str, **params: int) -> object:
            assert path == "key"
            period = {"key_id": signer.key_id, "public_key": signer.public_key.hex()}
            return {
                "algorithm": "Ed25519",
                **period,
                "keys": [{**period, "from_index": 1, "change_index": None}],
            }

    with pytest.raises(VerificationFailed, match="starts at entry 1, not 0"):
        Doctored("http://log.test").key_chain(head)
