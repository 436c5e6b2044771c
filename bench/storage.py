"""Storage benchmark (issue 17, item 5): bytes per sold ticket and the read cost of a history page.

One run per database: a fresh schema with one 12 000 000-unit Cash block and 100 players, then
100 000 ``auto`` sales written **in bulk through the repositories**, 1 000 per transaction:
each sale stores exactly the rows a purchase stores (``tickets.add`` with a ticket designed by
the game for a prize drawn from the table's own distribution, the stake movement and its two
entries, and the prize movement and its two entries for a win), without the purchase's checks,
locks and per-sale commit (100 000 purchases through ``tickets.buy`` would take minutes per
database on this machine, and write the same rows). The transparency log's entries are not
counted: they are the log's, not the ticket's.

Printed: bytes per sold ticket of ``tickets`` and of the ledger (``movements`` + ``entries``),
each with its indexes (SQLite: the ``dbstat`` pages of those tables and their indexes before and
after, so free space inside pages counts; PostgreSQL: ``pg_table_size`` of each table, which
counts TOAST, and ``pg_relation_size`` of each of its indexes), each relation's share printed
too, against the target of ≤ 500 bytes; and the median time of
``tickets.history`` (a page of 20, newest first, and one page 500 tickets deep) for a player
with 1 000 tickets. Run with ``python -m bench.storage``; PostgreSQL when
``GRATTAGE_BENCH_POSTGRES_URL`` (or ``GRATTAGE_TEST_DATABASE_URL``) is set, in a schema of its
own dropped afterwards.
"""

from __future__ import annotations

import os
import random
import secrets
import statistics
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from bench.platform import postgres_schema

SALES = int(os.environ.get("GRATTAGE_BENCH_STORAGE_SALES", "100000"))
PLAYERS = 100
PER_TRANSACTION = 1_000
TARGET_BYTES = 500
HISTORY_READS = 200
MEASURED = ("tickets", "movements", "entries")


def _platform(database_url: str, folder: str, schema: str | None) -> Any:
    from grattage.entrypoints.bootstrap import build_platform
    from grattage.settings import Settings

    settings = Settings(
        database_url=database_url,
        key_dir=Path(folder) / "keys",
        password_time_cost=1,
        password_memory_kib=1024,
    )
    return build_platform(settings, schema=schema)


def _players(platform: Any) -> list[tuple[int, int]]:
    """(player id, wallet account id) of each bench player."""
    from grattage.service import accounts

    found = []
    for index in range(PLAYERS):
        player_id = accounts.register(
            platform,
            f"storage{index}@example.org",
            "bench-password",
            date(1980, 1, 1),
            first_name="Banc",
            last_name="Stockage" + "".join(chr(ord("a") + int(d)) for d in str(index)),
        )
        with platform.uow.read() as repos:
            found.append((player_id, repos.ledger.player_account_id(player_id)))
    return found


def _prize_draw(game: Any, rng: random.Random) -> Any:
    """Prizes drawn as a block deals them: each tier by its count, the rest losing."""
    table = game.table
    prizes = [0, *(tier.prize_cents for tier in table.tiers)]
    winners = sum(tier.count for tier in table.tiers)
    weights = [table.block_size - winners, *(tier.count for tier in table.tiers)]
    return lambda: rng.choices(prizes, weights)[0]


def _sell_in_bulk(platform: Any, block_id: int, players: list[tuple[int, int]]) -> float:
    """``SALES`` auto sales' rows, as a purchase writes them; the seconds it took."""
    from grattage.blocks.sealing import design_unit
    from grattage.service.model import HOUSE_PRIZES, HOUSE_STAKES, Leg, Movement, NewTicket
    from grattage.service.views import stored_document, stored_revealed

    with platform.uow.read() as repos:
        game = platform.loaded_block(repos, block_id).game
        stakes = repos.ledger.house_account(HOUSE_STAKES)
        prizes = repos.ledger.house_account(HOUSE_PRIZES)
    rng = random.Random(17)
    next_prize = _prize_draw(game, rng)
    start = platform.clock.now()
    started = time.perf_counter()
    for first in range(0, SALES, PER_TRANSACTION):
        with platform.uow.write() as repos:
            for position in range(first, min(first + PER_TRANSACTION, SALES)):
                player_id, account = players[position % len(players)]
                # one sale a millisecond: every sale has its own time, as purchases do (one
                # time for all would let the indexes on times deduplicate what they never can)
                now = start + timedelta(milliseconds=position)
                prize = next_prize()
                document = design_unit(game, secrets.token_bytes(32), prize, None)
                ticket_id = repos.tickets.add(
                    NewTicket(
                        player_id=player_id,
                        game=game.name,
                        block_id=block_id,
                        position=position,
                        sequence=position,
                        mode="auto",
                        sign=None,
                        stake_cents=game.table.price_cents,
                        prize_cents=prize,
                        document=stored_document(document),
                        revealed=stored_revealed(game, game.zones),
                        state="finished",
                        created_at=now,
                        last_action_at=now,
                        finished_at=now,
                        finished_by="auto",
                        balance_before_cents=100_000,
                        balance_after_cents=100_000 - game.table.price_cents + prize,
                    )
                )
                stake = [Leg(account, -game.table.price_cents), Leg(stakes, game.table.price_cents)]
                repos.ledger.record(Movement("stake", stake, now, player_id, ticket_id))
                if prize:
                    legs = [Leg(account, prize), Leg(prizes, -prize)]
                    repos.ledger.record(Movement("prize", legs, now, player_id, ticket_id))
    return time.perf_counter() - started


def _sqlite_bytes(platform: Any) -> dict[tuple[str, str], int]:
    """Bytes of the pages of each measured table and of each of its indexes (``dbstat``)."""
    from sqlalchemy import text

    engine = platform.uow.engine
    with engine.connect() as connection:
        owners = dict(
            connection.execute(
                text("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')")
            ).all()
        )
        pages = connection.execute(text("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
        return {
            (owners[name], "heap" if name == owners[name] else name): int(size)
            for name, size in pages
            if owners.get(name) in MEASURED
        }


def _postgres_bytes(platform: Any) -> dict[tuple[str, str], int]:
    """Bytes of each measured table (``pg_table_size``: its heap, TOAST and maps) and of each
    of its indexes (``pg_relation_size``)."""
    from sqlalchemy import text

    with platform.uow.engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT t.relname, 'heap', pg_table_size(t.oid) FROM pg_class t "
                "WHERE t.relname = ANY(:tables) AND t.relkind = 'r' "
                "AND t.relnamespace = CAST(current_schema() AS regnamespace) "
                "UNION ALL SELECT t.relname, i.relname, pg_relation_size(i.oid) "
                "FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid "
                "JOIN pg_class i ON i.oid = x.indexrelid "
                "WHERE t.relname = ANY(:tables) "
                "AND t.relnamespace = CAST(current_schema() AS regnamespace)"
            ),
            {"tables": list(MEASURED)},
        )
        return {(table, relation): int(size) for table, relation, size in rows}


def _postgres_tuples(platform: Any) -> None:
    """Each measured heap's average tuple (``pgstattuple``, when the server has it): its bytes
    without the 4-byte item pointer, and the share of the pages that is free."""
    from sqlalchemy import text

    with platform.uow.engine.begin() as connection:
        if (
            connection.execute(
                text("SELECT 1 FROM pg_available_extensions WHERE name = 'pgstattuple'")
            ).first()
            is None
        ):
            print("    (pgstattuple not available)")
            return
        connection.execute(text("CREATE EXTENSION IF NOT EXISTS pgstattuple"))
        for table in MEASURED:
            if connection.execute(text("SELECT to_regclass(:t)"), {"t": table}).scalar() is None:
                continue
            count, length, free = connection.execute(
                text("SELECT tuple_count, tuple_len, free_percent FROM pgstattuple(:t)"),
                {"t": table},
            ).one()
            print(
                f"    {table} heap: {count:,} rows of {length / max(count, 1):.1f} bytes "
                f"(+ 4-byte item pointer), {free:.1f} % of its pages free"
            )


def _history_cost(platform: Any, player_id: int) -> tuple[float, float]:
    """Median milliseconds of ``tickets.history``: the first page, and one 500 tickets deep."""
    from grattage.service import tickets

    with platform.uow.read() as repos:
        deep = repos.tickets.history(player_id, 501, None)[-1].id
    figures = []
    for before in (None, deep):
        timings = []
        for _ in range(HISTORY_READS):
            started = time.perf_counter()
            tickets.history(platform, player_id, limit=20, before=before)
            timings.append(time.perf_counter() - started)
        figures.append(statistics.median(timings) * 1000)
    return figures[0], figures[1]


def _run(label: str, database_url: str, folder: str, schema: str | None = None) -> None:
    from grattage.service.emissions import create_emission

    print(f"Storage: {SALES} auto sales written in bulk through the repositories on {label}")
    platform = _platform(database_url, folder, schema)
    try:
        (block_id,) = create_emission(platform, "cash", 1, open_blocks=1).block_ids
        players = _players(platform)
        measure = _sqlite_bytes if label == "SQLite" else _postgres_bytes
        before = measure(platform)
        seconds = _sell_in_bulk(platform, block_id, players)
        if label != "SQLite":
            with platform.uow.engine.connect() as connection:
                connection.exec_driver_sql("ANALYZE")
        after = measure(platform)
        grown = {
            relation: (after.get(relation, 0) - before.get(relation, 0)) / SALES
            for relation in after.keys() | before.keys()
        }
        per_table = {
            table: sum(size for (owner, _), size in grown.items() if owner == table)
            for table in MEASURED
        }
        ledger = per_table["movements"] + per_table["entries"]
        total = per_table["tickets"] + ledger
        print(f"  written in {seconds:.1f} s ({SALES / seconds:,.0f} sales/s)")
        print(
            f"  bytes per sold ticket: tickets {per_table['tickets']:.0f} + ledger {ledger:.0f} "
            f"(movements {per_table['movements']:.0f}, entries {per_table['entries']:.0f})"
            f" = {total:.0f}, with indexes   target ≤ {TARGET_BYTES}: "
            f"{'met' if total <= TARGET_BYTES else 'MISSED'}"
        )
        for table in MEASURED:
            parts = sorted(
                (relation, size) for (owner, relation), size in grown.items() if owner == table
            )
            if parts:
                print(f"    {table}: " + ", ".join(f"{name} {size:.1f}" for name, size in parts))
        if label != "SQLite":
            _postgres_tuples(platform)
        newest, deep = _history_cost(platform, players[0][0])
        print(
            f"  history page (20 of {SALES // PLAYERS} tickets), median of {HISTORY_READS}: "
            f"newest {newest:.2f} ms, 500 deep {deep:.2f} ms"
        )
    finally:
        platform.uow.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        _run("SQLite", f"sqlite:///{folder}/storage.db", folder)
    with postgres_schema("grattage_storage") as found, tempfile.TemporaryDirectory() as folder:
        if found is None:
            return
        postgres, schema = found
        print()
        _run("PostgreSQL", postgres, folder, schema)


if __name__ == "__main__":
    main()
