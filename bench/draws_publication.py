"""Writing a drawn block's draws file from the platform's log, as the sweep does at the
block's publication (docs/draw.md, "The draws file"): its time and its peak memory.

    .venv/bin/python -m bench.draws_publication [--sales 1000000] [--database URL]

A SQLite database (or ``--database``, e.g. PostgreSQL's, which must be empty) is filled with a
closed drawn block of ``--sales`` sales and the log entries the file is made of — its
``sale.drawn`` entries, 600 a round behind each ``draw.round``, and a ``beacon.chain`` — written
directly (no signature: the file is not replayed here, only written). Then a fresh process runs
:func:`grattage.service.draws_publication.write_draws_file` into a file and reports the wall
and CPU time and its peak resident memory (``VmHWM``, reset just before) above what it held
before (``VmRSS``): the figure a server worker pays. The load average is printed beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert

from grattage.adapters.tables import (
    block_commitments,
    blocks,
    emissions,
    log_entries,
    log_heads,
    log_state,
)
from grattage.blocks.signing import canonical_json
from grattage.entrypoints.bootstrap import build_platform
from grattage.settings import Settings

PER_ROUND = 600
BLOCK_ID = bytes(range(16)).hex()
CHAIN_ID = hashlib.sha256(b"bench chain").hexdigest()
INSERT_ROWS = 20_000


def _settings(url: str, directory: Path) -> Settings:
    return Settings(database_url=url, key_dir=directory / "keys", run_sweeper=False)


def _entry(kind: str, **fields: object) -> str:
    return canonical_json({"v": 1, "kind": kind, "time": "2026-12-01T00:00:00Z", **fields}).decode()


def fill(url: str, directory: Path, sales: int) -> None:
    platform = build_platform(_settings(url, directory))
    now = datetime.now(UTC)
    engine = platform.uow.engine  # type: ignore[attr-defined]
    with engine.begin() as db:
        db.execute(
            insert(emissions).values(
                id=1, game="cash", table_json="{}", table_digest="0" * 64, created_at=now,
                price_cents=500, title="bench",
            )
        )  # fmt: skip
        db.execute(
            insert(blocks).values(
                id=1, emission_id=1, game="cash", key_id="bench", size=sales, sold=sales,
                state="closed", chunk_units=1024, created_at=now, price_cents=500,
                title="bench", commitment_index=0,
            )
        )  # fmt: skip
        db.execute(
            insert(block_commitments).values(
                block_id=1, commitment=json.dumps({"block_id": BLOCK_ID}), chunk_roots=b""
            )
        )
    chain = {"chain_id": CHAIN_ID, "format": "grattage-beacon-chain/1", "head": "00" * 32}
    rows = [
        _row(0, "block.commitment", _entry("block.commitment", commitment={}), 1),
        _row(1, "beacon.chain", _entry("beacon.chain", chain=chain), None),
    ]
    index = 2
    with engine.begin() as db:
        for n in range(sales):
            if n % PER_ROUND == 0:
                number = 2 + n // PER_ROUND
                document = {"chain_id": CHAIN_ID, "round": number, "value": _hex(b"w%d" % number)}
                rows.append(_row(index, "draw.round", _entry("draw.round", round=document), None))
                index += 1
            body = _entry(
                "sale.drawn", block_id=BLOCK_ID, sequence=n, receipt_sha256=_hex(b"H%d" % n),
                beacon={"chain_id": CHAIN_ID, "round": 2 + n // PER_ROUND}, slot=n + n % 7,
                unit=(n * 7919) % sales, link="00" * 32, receipt_index=n, j_set_by=None,
                n_set_by=None,
            )  # fmt: skip
            rows.append(_row(index, "sale.drawn", body, 1))
            index += 1
            if len(rows) >= INSERT_ROWS:
                db.execute(insert(log_entries), rows)
                rows = []
        if rows:
            db.execute(insert(log_entries), rows)
        db.execute(log_state.update().values(tree_size=index))
        head = {"tree_size": index, "timestamp_ms": 1, "root": bytes(32), "key_id": "bench"}
        db.execute(insert(log_heads).values(**head, signature=bytes(64)))  # unsigned: unread


def _hex(seed: bytes) -> str:
    return hashlib.sha256(seed).hexdigest()


def _row(index: int, kind: str, body: str, block_id: int | None) -> dict[str, object]:
    return {"idx": index, "kind": kind, "body": body, "leaf": bytes(32), "block_id": block_id}


def measure(url: str, directory: Path) -> None:
    """In a fresh process: what writing the file costs a server worker."""
    from grattage.service.draws_publication import write_draws_file

    platform = build_platform(_settings(url, directory), run_migrations=False)
    before_kib = _status_kib("VmRSS")
    with contextlib.suppress(OSError):  # Linux: the peak (VmHWM) starts again from VmRSS
        Path("/proc/self/clear_refs").write_text("5")
    cpu, wall = time.process_time(), time.perf_counter()
    with (directory / "draws.gdrw").open("wb") as out:
        digest = write_draws_file(platform, 1, directory, out)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_kib = _status_kib("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    size = (directory / "draws.gdrw").stat().st_size
    print(
        f"draws file of {size / 1e6:,.1f} MB written in {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"(load {os.getloadavg()[0]:.1f}/{os.cpu_count()} cores); peak memory "
        f"{peak_kib / 1024:.0f} MiB, {max(0, peak_kib - before_kib) / 1024:.0f} MiB above the "
        f"{before_kib / 1024:.0f} MiB held before; SHA-256 {digest[:16]}…"
    )


def _status_kib(name: str) -> int:
    """A figure of /proc/self/status in KiB (0 where there is none)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sales", type=int, default=1_000_000)
    parser.add_argument("--database", help="an empty database (default: a new SQLite file)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the fresh process's directory
    arguments = parser.parse_args()
    if arguments.measure:
        measure(arguments.database, Path(arguments.measure))
        return
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        url = arguments.database or f"sqlite:///{directory / 'bench.db'}"
        started = time.perf_counter()
        fill(url, directory, arguments.sales)
        print(f"{arguments.sales:,} sales logged in {time.perf_counter() - started:.0f} s")
        command = [sys.executable, "-m", "bench.draws_publication", "--database", url]
        subprocess.run([*command, "--measure", str(directory)], check=True)


if __name__ == "__main__":
    main()
