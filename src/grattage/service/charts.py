"""Charts of a block, drawn on the server with matplotlib (Agg, no display, no network).

Plot coordinates are floats; the figures they come from are exact (integer cents, fractions).
"""

from __future__ import annotations

import io
from typing import Literal

from grattage.errors import InvalidInput
from grattage.games.money import format_euros
from grattage.service import back_office
from grattage.service.context import Platform

ChartFormat = Literal["png", "svg"]
FORMATS: dict[str, str] = {"png": "image/png", "svg": "image/svg+xml"}


def _figure() -> object:
    from matplotlib.figure import Figure  # Figure alone: no pyplot, no global state

    return Figure(figsize=(7, 3.6), dpi=100, layout="constrained")


def _render(figure: object, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise InvalidInput(f"a chart is png or svg, got {fmt!r}")
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)  # type: ignore[attr-defined]
    return buffer.getvalue()


def payout_chart(platform: Platform, block_id: int, fmt: str = "svg") -> bytes:
    """Payout so far (prizes paid / stakes) against the table's payout, as sales progress."""
    progress = back_office.payout_progress(platform, block_id)
    block = progress["block"]
    figure = _figure()
    axes = figure.add_subplot()  # type: ignore[attr-defined]
    xs = [units for units, _ in progress["series"]]
    ys = [float(ratio * 100) for _, ratio in progress["series"]]
    axes.plot(xs, ys, color="#1f5fa8", label="payout so far")
    axes.axhline(
        float(progress["table_payout"] * 100), color="#c0392b", linestyle="--", label="table"
    )
    axes.set_xlim(0, max(block.size, 1))
    axes.set_xlabel("units sold")
    axes.set_ylabel("payout (% of stakes)")
    axes.set_title(f"Block {block.id} ({block.game}): payout as sales progress")
    axes.legend(loc="upper right")
    axes.grid(alpha=0.3)
    return _render(figure, fmt)


def tiers_chart(platform: Platform, block_id: int, fmt: str = "svg") -> bytes:
    """Prizes paid per tier against the table (whole block, and expected at this point)."""
    from matplotlib.ticker import FuncFormatter

    view = back_office.block(platform, block_id)
    tiers = view["tiers"]
    figure = _figure()
    axes = figure.add_subplot()  # type: ignore[attr-defined]
    positions = list(range(len(tiers)))
    width = 0.28
    axes.bar(
        [p - width for p in positions],
        [t["table_count"] for t in tiers],
        width,
        label="table (whole block)",
        color="#bdc3c7",
    )
    axes.bar(
        positions,
        [float(t["expected_so_far"]) for t in tiers],
        width,
        label="expected so far",
        color="#f5b041",
    )
    axes.bar(
        [p + width for p in positions],
        [t["paid_count"] for t in tiers],
        width,
        label="paid",
        color="#1f5fa8",
    )
    if max((t["table_count"] for t in tiers), default=0) > 1000:
        # A full block's tiers run from a few top prizes to a million small ones.
        axes.set_yscale("symlog", linthresh=1)
        axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_xticks(positions, [format_euros(t["prize_cents"]) for t in tiers], rotation=45)
    axes.set_ylabel("tickets")
    axes.set_title(f"Block {view['id']} ({view['game']}): prizes paid per tier")
    axes.legend(loc="upper left", fontsize="small")
    return _render(figure, fmt)
