"""Publishing disclosures as files: one per exhausted or closed block, written once, atomically.

The server's background loop and ``grattage sweep`` call :func:`publish_disclosure_files`; the
same documents are served at ``GET /api/blocks/{id}/disclosure``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from grattage.service import fairness
from grattage.service.context import Platform


def disclosure_path(directory: Path, block_id: int) -> Path:
    return directory / f"disclosure-block-{block_id}.json"


def publish_disclosure_files(platform: Platform, directory: Path) -> list[Path]:
    """Write the disclosure of every ended block that has no file yet; the paths written."""
    written = []
    for block_id in fairness.ended_block_ids(platform):
        path = disclosure_path(directory, block_id)
        if path.exists():
            continue
        document = fairness.disclosure(platform, block_id)
        directory.mkdir(parents=True, exist_ok=True)
        # a unique temporary name, then a rename: readers never see half a file, and two
        # workers publishing at once both write the same bytes
        temporary = directory / f".{path.name}.{os.getpid()}.partial"
        temporary.write_text(json.dumps(document), "utf-8")
        os.replace(temporary, path)
        written.append(path)
    return written
