"""Block keys live in files, one per block, never in the database.

A key is written and fsynced (file and directory) before the block's row commits, so a block
the database knows always has its key on disk. Keys are cached in memory once read: they never
change.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from grattage.blocks.sealing import KEY_BYTES
from grattage.errors import Unavailable


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
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self._path(key_id)
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
