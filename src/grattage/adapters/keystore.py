"""Block keys live in files, one per block, never in the database; so do the operator's.

A key is written and fsynced (file and directory) before the block's row commits, so a block
the database knows always has its key on disk. Keys are cached in memory once read: they never
change. The operator's first signing key is ``operator-ed25519.key``, created on first use;
each key a rotation makes is ``operator-ed25519-<key id>.key``, written the same way before the
rotation commits (docs/fairness.md, "Key rotation").
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path

from grattage.blocks.sealing import KEY_BYTES
from grattage.blocks.signing import Signer
from grattage.errors import Unavailable

OPERATOR_KEY_FILE = "operator-ed25519.key"
"""The operator's signing key: commitments, receipts and tree heads (docs/fairness.md)."""
PSEUDONYM_KEY_FILE = "pseudonym.key"
"""Keys the players' pseudonyms in receipts: stable per player, unlinkable without it."""
OWN_KEY_BYTES = 32


class FileKeyStore:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def _path(self, key_id: str) -> Path:
        if not key_id.isalnum():
            raise ValueError(f"a key id is alphanumeric, got {key_id!r}")
        return self.directory / f"block-{key_id}.key"

    def put(self, key_id: str, key: bytes) -> None:
        self._write_new(self._path(key_id), key)

    def _write_new(self, path: Path, key: bytes) -> None:
        """A new file, 0600, fsynced with its directory; refused if it exists."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(descriptor, key)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def get(self, key_id: str) -> bytes:
        with self._lock:
            cached = self._cache.get(key_id)
        if cached is not None:
            return cached
        try:
            key = self._path(key_id).read_bytes()
        except FileNotFoundError:
            raise Unavailable(
                f"the key of block {key_id!r} is missing from the key store"
            ) from None
        if len(key) != KEY_BYTES:
            raise Unavailable(f"the key of block {key_id!r} is damaged")
        with self._lock:
            self._cache[key_id] = key
        return key

    def discard(self, key_id: str) -> None:
        """Remove a key whose block never committed."""
        self._path(key_id).unlink(missing_ok=True)

    # -- the operator's own keys: created once, on first use, by whichever process is first --
    def _own_key(self, name: str, new: Callable[[], bytes]) -> bytes:
        with self._lock:
            cached = self._cache.get(name)
        if cached is not None:
            return cached
        path = self.directory / name
        if not path.exists():
            try:
                self._create_own_key(path, name, new)
            except OSError as error:  # an app host's key store is read-only (docs/deploy.md)
                raise Unavailable(
                    f"the key store holds no {name!r} and cannot be written here "
                    f"({error.strerror}): run `grattage log key` where blocks are created"
                ) from None
        key = path.read_bytes()
        if len(key) != OWN_KEY_BYTES:
            raise Unavailable(f"the key file {name!r} is damaged")
        with self._lock:
            self._cache[name] = key
        return key

    def _create_own_key(self, path: Path, name: str, new: Callable[[], bytes]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.directory / f".{name}.{os.getpid()}.{threading.get_ident()}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(descriptor, new())
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        try:
            os.link(temporary, path)  # atomic: the first process's key wins, whole
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def operator_key(self, key_id: str | None = None) -> bytes:
        """The operator's signing key ``key_id`` (None: the first one, made on first use)."""
        first = self._own_key(OPERATOR_KEY_FILE, Signer.new_private_key)
        if key_id is None or Signer(first).key_id == key_id:
            return first
        name = self._operator_key_name(key_id)
        with self._lock:
            cached = self._cache.get(name)
        if cached is not None:
            return cached
        try:
            key = (self.directory / name).read_bytes()
        except FileNotFoundError:
            raise Unavailable(f"operator key {key_id!r} is missing from the key store") from None
        if len(key) != OWN_KEY_BYTES or Signer(key).key_id != key_id:
            raise Unavailable(f"the key file {name!r} is damaged")
        with self._lock:
            self._cache[name] = key
        return key

    def put_operator_key(self, key_id: str, key: bytes) -> None:
        """A rotation's new signing key, on disk (0600, fsynced) before it commits."""
        self._write_new(self.directory / self._operator_key_name(key_id), key)

    def discard_operator_key(self, key_id: str) -> None:
        (self.directory / self._operator_key_name(key_id)).unlink(missing_ok=True)
        with self._lock:
            self._cache.pop(self._operator_key_name(key_id), None)

    @staticmethod
    def _operator_key_name(key_id: str) -> str:
        if len(key_id) != 64 or not all(char in "0123456789abcdef" for char in key_id):
            raise ValueError(f"an operator key id is 64 lowercase hex digits, got {key_id!r}")
        return f"operator-ed25519-{key_id}.key"

    def pseudonym_key(self) -> bytes:
        return self._own_key(PSEUDONYM_KEY_FILE, lambda: secrets.token_bytes(OWN_KEY_BYTES))
