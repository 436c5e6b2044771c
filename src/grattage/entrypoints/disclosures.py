"""Publishing disclosures as files: one per exhausted or closed block, built once, atomically.

A disclosure (16 MB for a Cash block) is built at most once per block and kept as a file in
``disclosure_dir``: by the server's background loop and ``grattage sweep`` once the block ends
(:func:`publish_disclosure_files`), or by the first ``GET /api/blocks/{id}/disclosure`` that
finds no file (:func:`disclosure_file`). The route then serves the file as it is, in chunks,
with ``ETag``, ``Last-Modified`` and ``Range`` (Starlette's ``FileResponse``): a download costs
the server a file read, never a rebuild, and its memory does not grow with the file or with
the number of downloads. (Rebuilt per request, 40 downloads at once took each worker to 1.2 GB.)

Once a v2 block's file is written, the SHA-256 of its bytes goes into the transparency log
(``disclosure.published``, :func:`grattage.service.block_log.log_disclosure_published`): every
downloader can check they got the very file everyone else got. A drawn block's draws file is
written just before that entry, which binds its SHA-256 too (:mod:`.draws_files`); a crash
between a file and the entry leaves the entry to the next sweep, which writes what is missing.

Building takes an exclusive ``flock`` on a lock file per block, so the requests and workers
that find no file at once build it once between them: the others wait, then serve the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path

from grattage.entrypoints.draws_files import draws_file_once
from grattage.entrypoints.file_locks import exclusive
from grattage.errors import Conflict
from grattage.service import block_log, draws_publication, fairness
from grattage.service.context import Platform

log = logging.getLogger("grattage.disclosures")


def disclosure_path(directory: Path, block_id: int) -> Path:
    return directory / f"disclosure-block-{block_id}.json"


def publish_disclosure_files(platform: Platform, directory: Path) -> list[Path]:
    """Write the disclosure of every ended block that has no file yet, and log the SHA-256 of
    every file not logged yet (one written just before a crash, say); the paths written."""
    written = []
    for block_id in fairness.ended_block_ids(platform):
        path = disclosure_path(directory, block_id)
        if not path.exists():
            path, built = _build_once(platform, directory, block_id)
            if built:
                written.append(path)
        elif not block_log.disclosure_logged(platform, block_id):
            _log_published(platform, directory, block_id, path)
    return written


def _log_published(platform: Platform, directory: Path, block_id: int, path: Path) -> None:
    """The ``disclosure.published`` entry: what a verifier checks the files it got against.
    A drawn block's draws file is written first; while the log still lacks some of its draws,
    the entry waits for a later sweep."""
    try:
        draws_sha256 = draws_file_once(platform, directory, block_id)
    except Conflict as waiting:
        log.info("the draws file of block %d waits: %s", block_id, waiting)
        return
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for piece in iter(lambda: source.read(1 << 20), b""):
            digest.update(piece)
    block_log.log_disclosure_published(platform, block_id, digest.hexdigest(), draws_sha256)


def disclosure_file(platform: Platform, directory: Path, block_id: int) -> Path:
    """The file of block ``block_id``'s disclosure, built now if there is none yet.

    Raises what :func:`fairness.disclosure` raises (NotFound, Conflict while the block is
    pending or open) when there is no file."""
    path = disclosure_path(directory, block_id)
    if path.exists():
        return path
    return _build_once(platform, directory, block_id, for_request=True)[0]


def _build_once(
    platform: Platform, directory: Path, block_id: int, for_request: bool = False
) -> tuple[Path, bool]:
    """The disclosure's file, and whether this call built it (not another, meanwhile)."""
    path = disclosure_path(directory, block_id)
    directory.mkdir(parents=True, exist_ok=True)
    with exclusive(directory / f".{path.name}.lock"):
        if path.exists():  # built by whoever held the lock before us
            return path, False
        document = fairness.disclosure(platform, block_id)
        # a unique temporary name, then a rename: readers never see half a file
        temporary = directory / f".{path.name}.{os.getpid()}.partial"
        try:
            with temporary.open("w", encoding="utf-8") as out:
                json.dump(document, out)  # encoded piece by piece, not as one 16 MB string
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
        # a crash before the entry: the next sweep logs it. A request that built the file
        # leaves a drawn block's entry to the sweep, which first writes its draws file (about
        # 100 s of CPU for 12 000 000 sales: not a request's work).
        if not (for_request and draws_publication.is_drawn(platform, block_id)):
            _log_published(platform, directory, block_id, path)
        return path, True
