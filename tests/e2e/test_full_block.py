"""One real 12 000 000-unit Cash block takes at most 64 MB and sells (its load time is a
benchmark figure, printed here, never asserted: timings belong to ``make bench``)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from grattage.games import default_table
from grattage.service import tickets
from grattage.service.emissions import create_emission, list_blocks
from support import make_world

MAX_BYTES = 64 * 1024 * 1024


def test_a_full_cash_block_fits_in_64_mb_and_sells(tmp_path: Path) -> None:
    with make_world("sqlite", tmp_path, drawn=False) as world:  # the block file, sold in order
        table = default_table("cash")
        assert table.block_size == 12_000_000
        started = time.perf_counter()
        create_emission(world.platform, "cash", 1, table=table)
        elapsed = time.perf_counter() - started
        world.platform.uow.close()  # type: ignore[attr-defined]
        with sqlite3.connect(tmp_path / "grattage.db") as raw:
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(path.stat().st_size for path in tmp_path.glob("grattage.db*"))
        print(f"12 000 000-unit Cash block: {elapsed:.2f} s, {size / 1e6:.1f} MB")
        assert size <= MAX_BYTES
        player = world.player(5000)
        for _ in range(10):
            ticket, _ = tickets.buy(world.platform, player, game_name="cash", mode="auto")
            assert ticket.prize_cents == 0 or table.tier_for_prize(ticket.prize_cents)
        assert list_blocks(world.platform, "cash")[0].sold == 10
