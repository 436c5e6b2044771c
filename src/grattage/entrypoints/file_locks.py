"""The exclusive ``flock`` that makes the published files (a block's disclosure, its draws)
built once when several workers, requests or ``grattage sweep`` find none at once."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing lets the lock go


def fsync_directory(directory: Path) -> None:
    """Make a rename into ``directory`` durable: the new name survives a power cut."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
