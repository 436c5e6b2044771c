"""What the operator sees of blocks and sales: block views and reports, from the ledger.

Every figure comes from the ledger's movements (stakes and prizes on the players' accounts) and
the sold tickets: nothing here reads a block's sealed tiers, so no view shows the prize of an
unsold unit. Money is integer cents; ratios are exact fractions or left to the reader to divide (the
entry points format them).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, date, datetime, time, timedelta
from fractions import Fraction
from typing import Any, Literal

from grattage.errors import InvalidInput, NotFound
from grattage.service.context import Platform
from grattage.service.model import Block, ReportRow
from grattage.service.ports import Repositories
from grattage.service.records import (
    BlockDetail,
    BlockReportRow,
    BlockSummary,
    DayReportRow,
    PayoutPoint,
    PayoutSeries,
    TierBar,
    TierSales,
    TierSeries,
)

ReportKind = Literal["blocks", "days"]
BLOCK_COLUMNS = (
    "block_id",
    "game",
    "state",
    "units_sold",
    "stakes_cents",
    "prizes_cents",
    "ggr_cents",
    "players",
)
DAY_COLUMNS = ("day", "game", "units_sold", "stakes_cents", "prizes_cents", "ggr_cents", "players")


def _summary_fields(platform: Platform, block: Block, sales: ReportRow | None) -> dict[str, Any]:
    """The fields of a :class:`BlockSummary` (a :class:`BlockDetail` adds its tiers)."""
    game = platform.game_for_table(block.table_json)
    table = game.table
    stakes = sales.stakes_cents if sales else 0
    prizes = sales.prizes_cents if sales else 0
    return {
        "id": block.id,
        "emission_id": block.emission_id,
        "game": block.game,
        "state": block.state,
        "size": block.size,
        "units_sold": block.sold,
        "units_remaining": block.size - block.sold,
        "stakes_cents": stakes,
        "prizes_paid_cents": prizes,
        "ggr_cents": stakes - prizes,
        "players": sales.players if sales else 0,
        "price_cents": block.price_cents,
        "table_prizes_total_cents": table.prizes_total_cents,
        "table_title": block.title,
    }


def _sales_by_block(repos: Repositories) -> dict[int, ReportRow]:
    return {int(row.key): row for row in repos.reports.by_block(None, None)}


def blocks(platform: Platform, game: str | None = None) -> list[BlockSummary]:
    with platform.uow.read() as repos:
        found = repos.blocks.all(game)
        sales = _sales_by_block(repos)
    return [
        BlockSummary(**_summary_fields(platform, block, sales.get(block.id))) for block in found
    ]


def block(platform: Platform, block_id: int) -> BlockDetail:
    """One block with its prizes paid tier by tier against its table."""
    with platform.uow.read() as repos:
        found = repos.blocks.get(block_id)
        if found is None:
            raise NotFound(f"no block {block_id!r}")
        sales = _sales_by_block(repos).get(block_id)
        paid = repos.reports.prizes_paid(block_id)
    table = platform.game_for_table(found.table_json).table
    tiers = tuple(
        TierSales(
            tier=tier.index,
            prize_cents=tier.prize_cents,
            table_count=tier.count,
            paid_count=paid.get(tier.prize_cents, (0, 0))[0],
            paid_cents=paid.get(tier.prize_cents, (0, 0))[1],
        )
        for tier in table.tiers
    )
    return BlockDetail(**_summary_fields(platform, found, sales), tiers=tiers)


def payout_series(platform: Platform, block_id: int, points: int = 200) -> PayoutSeries:
    """Cumulative payout (prizes paid / stakes) as the block's units sell, in sale order: at
    most ``points`` points over the units sold so far (not the whole block: 27 sales of a
    12 000 000-unit block are 27 points, not one), the last one at the last unit sold."""
    with platform.uow.read() as repos:
        found = repos.blocks.get(block_id)
        if found is None:
            raise NotFound(f"no block {block_id!r}")
        bucket = max(1, -(-found.sold // points))
        rows = repos.reports.progress(block_id, bucket)
    game = platform.game_for_table(found.table_json)
    series: list[PayoutPoint] = []
    stakes = prizes = 0
    for slot, slot_stakes, slot_prizes in rows:
        stakes += slot_stakes
        prizes += slot_prizes
        if stakes:
            series.append(
                PayoutPoint(min((slot + 1) * bucket, found.sold), Fraction(prizes, stakes))
            )
    return PayoutSeries(
        block_id=found.id,
        game=found.game,
        size=found.size,
        points=tuple(series),
        table_payout=game.table.payout(),
    )


def tier_series(platform: Platform, block_id: int) -> TierSeries:
    """Per tier of the block's table: its count, the count expected by now, the count paid."""
    view = block(platform, block_id)
    return TierSeries(
        block_id=view.id,
        game=view.game,
        bars=tuple(
            TierBar(
                prize_cents=tier.prize_cents,
                table_count=tier.table_count,
                expected_so_far=Fraction(tier.table_count * view.units_sold, view.size),
                paid_count=tier.paid_count,
            )
            for tier in view.tiers
        ),
    )


FIRST_DAY = date(2000, 1, 1)
LAST_DAY = date(2100, 12, 31)
"""The days a report may name: nothing was sold before, and a later date is a typo."""
LONGEST_PERIOD_DAYS = 366
"""A report with both ends covers at most this many days (a year, leap or not)."""
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_day(text: str | None, name: str) -> date | None:
    """A report's day ``YYYY-MM-DD`` between :data:`FIRST_DAY` and :data:`LAST_DAY`; None when
    absent. Only that form: ``date.fromisoformat`` would also take ``20240101`` or a week
    date."""
    if text is None or text == "":
        return None
    try:
        if not _ISO_DAY.fullmatch(text):
            raise ValueError(text)
        day = date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{name} is a date YYYY-MM-DD, got {text!r}") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise InvalidInput(f"{name} is a day from {FIRST_DAY} to {LAST_DAY}, got {text!r}")
    return day


def _window(since: date | None, until: date | None) -> tuple[datetime | None, datetime | None]:
    for day in (since, until):
        if day is not None and not FIRST_DAY <= day <= LAST_DAY:
            raise InvalidInput(f"a report's days are from {FIRST_DAY} to {LAST_DAY}, got {day}")
    if since is not None and until is not None:
        if since > until:
            raise InvalidInput(f"the period starts ({since}) after it ends ({until})")
        if (until - since).days + 1 > LONGEST_PERIOD_DAYS:
            raise InvalidInput(
                f"a report covers at most {LONGEST_PERIOD_DAYS} days; "
                f"{since} to {until} is {(until - since).days + 1}"
            )
    start = None if since is None else datetime.combine(since, time(), UTC)
    # The last day is included: the window ends at the next midnight (LAST_DAY is far from
    # date.max, so there always is one).
    end = None if until is None else datetime.combine(until + timedelta(days=1), time(), UTC)
    return start, end


def report(
    platform: Platform, kind: ReportKind, since: date | None = None, until: date | None = None
) -> list[BlockReportRow] | list[DayReportRow]:
    """Sales per block or per day (UTC) and game: units, stakes, prizes, GGR, players."""
    start, end = _window(since, until)
    with platform.uow.read() as repos:
        if kind == "blocks":
            rows = repos.reports.by_block(start, end)
            known = {block.id: block for block in repos.blocks.all()}
        elif kind == "days":
            rows = repos.reports.by_day(start, end)
        else:
            raise InvalidInput(f"a report is 'blocks' or 'days', got {kind!r}")
    if kind == "blocks":
        return [
            BlockReportRow(
                **_figures(row),
                block_id=int(row.key),
                state=known[int(row.key)].state if int(row.key) in known else None,
            )
            for row in rows
        ]
    return [
        DayReportRow(**_figures(row), day=date.fromisoformat(str(row.key)[:10])) for row in rows
    ]


def _figures(row: ReportRow) -> dict[str, Any]:
    return {
        "game": row.game,
        "units_sold": row.units,
        "stakes_cents": row.stakes_cents,
        "prizes_cents": row.prizes_cents,
        "ggr_cents": row.stakes_cents - row.prizes_cents,
        "players": row.players,
    }


def to_csv(kind: ReportKind, rows: Sequence[BlockReportRow | DayReportRow]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=BLOCK_COLUMNS if kind == "blocks" else DAY_COLUMNS, lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows(asdict(row) for row in rows)
    return buffer.getvalue()
