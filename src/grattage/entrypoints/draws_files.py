"""Publishing a drawn block's draws file (docs/draw.md, "The draws file") beside its disclosure.

Written once per ended drawn block, in ``disclosure_dir``, just before its
``disclosure.published`` entry, which binds its SHA-256 (``draws_sha256``) — by the server's
background loop and ``grattage sweep`` (:mod:`grattage.entrypoints.disclosures`).
``GET /api/blocks/{id}/draws`` serves it once that entry exists. 44 bytes a sale (528 MB for
12 000 000 sales), so it is never held whole: its columns are spooled to anonymous temporary
files and streamed into a temporary file of the directory, which is fsynced, then renamed —
readers never see half a file, and a crash leaves at most that temporary file, removed by the
next writer (it holds the block's lock: no one else is writing it).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

from grattage.entrypoints.file_locks import exclusive, fsync_directory
from grattage.service import draws_publication
from grattage.service.context import Platform


def draws_path(directory: Path, block_id: int) -> Path:
    return directory / f"draws-block-{block_id}.gdrw"


def draws_file_once(platform: Platform, directory: Path, block_id: int) -> str | None:
    """The hex SHA-256 of the ended block's draws file, written now if there is none yet;
    None for a block that is not drawn. Raises Conflict while the log lacks some of its draws
    (merged within seconds: the next sweep writes it)."""
    if not draws_publication.is_drawn(platform, block_id):
        return None
    path = draws_path(directory, block_id)
    directory.mkdir(parents=True, exist_ok=True)
    with exclusive(directory / f".{path.name}.lock"):
        if path.exists():  # written before (by whoever held the lock, or before a crash)
            return _sha256_of(path)
        for stale in directory.glob(f".{path.name}.*.partial"):
            stale.unlink()  # left by a writer killed mid-file
        temporary = directory / f".{path.name}.{os.getpid()}.partial"
        try:
            with temporary.open("wb") as out:
                digest = draws_publication.write_draws_file(platform, block_id, directory, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
            fsync_directory(directory)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
        return digest


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for piece in iter(lambda: source.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()
