"""The pictures port: a block's charts drawn with matplotlib (Agg, no display, no network).

The series come exact (integer units and cents, fractions); the floats of the plot and the
labels for people are made here. matplotlib is imported on the first chart drawn, not when
the app starts: most processes never draw one.
"""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING, Literal

from grattage.games.money import format_euros
from grattage.service.records import PayoutSeries, TierSeries

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter


_FIRST_IMPORT = threading.Lock()


def _matplotlib() -> tuple[type[Figure], type[FuncFormatter]]:
    # matplotlib's first import, run on two threads at once (two chart requests right after
    # start), fails on its own circular imports (ImportError, even a deadlock): one thread
    # imports, the others wait. Figure alone: no pyplot, no global state.
    with _FIRST_IMPORT:
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter
    return Figure, FuncFormatter


def _figure() -> Figure:
    figure_class, _ = _matplotlib()
    return figure_class(figsize=(7, 3.6), dpi=100, layout="constrained")


def _render(figure: Figure, fmt: Literal["png", "svg"]) -> bytes:
    buffer = io.BytesIO()
    # No date in an SVG: the picture says when its data is from, not when it was drawn.
    figure.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    return buffer.getvalue()


class MatplotlibCharts:
    """:class:`grattage.service.ports.ChartRenderer` with matplotlib's Agg backend."""

    def payout(self, series: PayoutSeries, fmt: Literal["png", "svg"]) -> bytes:
        figure = _figure()
        axes = figure.add_subplot()
        xs = [point.units_sold for point in series.points]
        ys = [float(point.payout * 100) for point in series.points]
        axes.plot(xs, ys, color="#1f5fa8", label="payout so far")
        axes.axhline(
            float(series.table_payout * 100), color="#c0392b", linestyle="--", label="table"
        )
        axes.set_xlim(0, max(series.size, 1))
        axes.set_xlabel("units sold")
        axes.set_ylabel("payout (% of stakes)")
        axes.set_title(f"Block {series.block_id} ({series.game}): payout as sales progress")
        axes.legend(loc="upper right")
        axes.grid(alpha=0.3)
        return _render(figure, fmt)

    def tiers(self, series: TierSeries, fmt: Literal["png", "svg"]) -> bytes:
        _, FuncFormatter = _matplotlib()  # noqa: N806 (a class)
        bars = series.bars
        figure = _figure()
        axes = figure.add_subplot()
        positions = list(range(len(bars)))
        width = 0.28
        axes.bar(
            [p - width for p in positions],
            [bar.table_count for bar in bars],
            width,
            label="table (whole block)",
            color="#bdc3c7",
        )
        axes.bar(
            positions,
            [float(bar.expected_so_far) for bar in bars],
            width,
            label="expected so far",
            color="#f5b041",
        )
        axes.bar(
            [p + width for p in positions],
            [bar.paid_count for bar in bars],
            width,
            label="paid",
            color="#1f5fa8",
        )
        if max((bar.table_count for bar in bars), default=0) > 1000:
            # A full block's tiers run from a few top prizes to a million small ones.
            axes.set_yscale("symlog", linthresh=1)
            axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axes.set_xticks(positions, [format_euros(bar.prize_cents) for bar in bars], rotation=45)
        axes.set_ylabel("tickets")
        axes.set_title(f"Block {series.block_id} ({series.game}): prizes paid per tier")
        axes.legend(loc="upper left", fontsize="small")
        return _render(figure, fmt)
