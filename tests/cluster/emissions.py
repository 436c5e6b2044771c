"""The cluster's Cash blocks and players, made on its ops host (the one host that writes the
key store): 200 000-unit blocks from the scaled test table, drawn when the witness is known
at their emission (else undrawn for good), and ``open_blocks`` of them on sale at once when
undrawn (a drawn game sells from one block at a time: docs/draw.md)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from reliability.harness import big_table_text

from . import units

if TYPE_CHECKING:
    from .cluster import Cluster

HERE = Path(__file__).resolve().parent


def create_blocks(cluster: Cluster) -> None:
    table = cluster.root / "cash.toml"
    table.write_text(big_table_text("cash", 5000, on_sale=True))  # 200 000 units a block
    blocks = str(max(3, cluster.open_blocks))
    made = cluster.on("ops", units.HERE_GRATTAGE, "emission", "create", "cash", "--blocks",
                      blocks, "--prize-table", str(table), env=cluster.env("ops"))  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    seeded = cluster.on("ops", sys.executable, str(HERE / "seed.py"), str(cluster.players),
                        str(10**9), env=cluster.env("ops"))  # fmt: skip
    assert seeded.returncode == 0, seeded.stderr


def open_more_blocks(cluster: Cluster) -> None:
    """Blocks 2 … ``open_blocks`` opened beside the first, each once its commitment is in the
    transparency log (the drawer merges the log's queue: it may take a moment)."""
    for block in range(2, cluster.open_blocks + 1):
        deadline = time.monotonic() + 60
        while True:
            opened = cluster.on("ops", units.HERE_GRATTAGE, "block", "open", str(block),
                                env=cluster.env("ops"))  # fmt: skip
            if opened.returncode == 0:
                break
            assert time.monotonic() < deadline, opened.stderr
            time.sleep(0.5)
