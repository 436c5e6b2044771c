"""The pictures port: a block's charts drawn with matplotlib (Agg, no display, no network).

The series come exact (integer units and cents, fractions); the floats of the plot and the
labels for people are made here, in French: numbers grouped by thousands with a narrow
no-break space (« 12 000 000 », never matplotlib's « 1e7 »), decimals with a comma,
« 75 % ». The charts are drawn small (480 × 340 px) with large type, so that the page can
show them at a phone's width and still be read. An SVG keeps its text as text (not paths):
lighter, selectable, read by screen readers. matplotlib is imported on the first chart
drawn, not when the app starts: most processes never draw one.
"""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING, Any, Literal

from grattage.games.money import format_euros
from grattage.service.records import PayoutSeries, TierSeries

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


_FIRST_IMPORT = threading.Lock()
_NARROW_NBSP = "\u202f"
_NBSP = "\u00a0"
MIN_UNITS_SHOWN = 10
"""The payout chart's x axis spans the units sold (and a tenth more), at least this many."""
_STYLE = {
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 10.5,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 9.5,
    "svg.fonttype": "none",
}


def _matplotlib() -> tuple[type[Figure], Any, Any]:
    # matplotlib's first import, run on two threads at once (two chart requests right after
    # start), fails on its own circular imports (ImportError, even a deadlock): one thread
    # imports, the others wait. Figure alone: no pyplot, no global state.
    with _FIRST_IMPORT:
        import matplotlib
        from matplotlib import ticker
        from matplotlib.figure import Figure
    return Figure, ticker, matplotlib


def french_number(value: float, decimals: int = 0) -> str:
    """``12000000`` → « 12 000 000 », ``133.333`` with 2 decimals → « 133,33 »."""
    text = f"{value:,.{decimals}f}"
    return text.replace(",", _NARROW_NBSP).replace(".", ",")


def _count_label(value: float, _position: object = None) -> str:
    """A tick of a count: whole numbers only, French grouping; nothing for a fraction."""
    return french_number(value) if float(value).is_integer() else ""


def _percent_label(value: float, _position: object = None) -> str:
    whole = float(value).is_integer()
    return f"{french_number(value, 0 if whole else 1)}{_NBSP}%"


def _figure() -> Figure:
    figure_class, _, _ = _matplotlib()
    return figure_class(figsize=(4.8, 3.4), dpi=100, layout="constrained")


def _render(figure: Figure, fmt: Literal["png", "svg"]) -> bytes:
    _, _, matplotlib = _matplotlib()
    buffer = io.BytesIO()
    with matplotlib.rc_context(_STYLE):
        # No date in an SVG: the picture says when its data is from, not when it was drawn.
        figure.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    return buffer.getvalue()


def _styled(figure: Figure) -> Axes:
    _, _, matplotlib = _matplotlib()
    with matplotlib.rc_context(_STYLE):  # fonts are read when the axes and texts are made
        return figure.add_subplot()


def payout_x_limit(size: int, units_sold: int) -> int:
    """Where the payout chart's x axis ends: the units sold and a tenth more, at least
    :data:`MIN_UNITS_SHOWN`, at most the block (a line over 27 units of 12 000 000 is a dot)."""
    return max(1, min(size, max(MIN_UNITS_SHOWN, units_sold + -(-units_sold // 10))))


class MatplotlibCharts:
    """:class:`grattage.service.tool_ports.ChartRenderer` with matplotlib's Agg backend."""

    def payout(self, series: PayoutSeries, fmt: Literal["png", "svg"]) -> bytes:
        _, ticker, matplotlib = _matplotlib()
        figure = _figure()
        with matplotlib.rc_context(_STYLE):
            axes = _styled(figure)
            xs = [point.units_sold for point in series.points]
            ys = [float(point.payout * 100) for point in series.points]
            sold = xs[-1] if xs else 0
            marker = "o" if len(xs) <= 30 else None  # a few sales: each one seen
            axes.plot(xs, ys, color="#1f5fa8", marker=marker, markersize=3, label="réel")
            axes.axhline(
                float(series.table_payout * 100),
                color="#c0392b",
                linestyle="--",
                label=f"table ({_percent_label(round(float(series.table_payout * 100), 1))})",
            )
            axes.set_xlim(0, payout_x_limit(series.size, sold))
            axes.set_ylim(bottom=0)
            axes.xaxis.set_major_locator(ticker.MaxNLocator(5, integer=True))
            axes.yaxis.set_major_locator(ticker.MaxNLocator(5))
            axes.xaxis.set_major_formatter(ticker.FuncFormatter(_count_label))
            axes.yaxis.set_major_formatter(ticker.FuncFormatter(_percent_label))
            axes.set_xlabel(f"tickets vendus (sur {french_number(series.size)})")
            axes.set_ylabel("taux de retour")
            axes.set_title(f"Bloc {series.block_id} ({series.game}){_NBSP}: taux de retour")
            axes.legend(loc="best")
            axes.grid(alpha=0.3)
        return _render(figure, fmt)

    def tiers(self, series: TierSeries, fmt: Literal["png", "svg"]) -> bytes:
        _, ticker, matplotlib = _matplotlib()
        bars = series.bars
        figure = _figure()
        with matplotlib.rc_context(_STYLE):
            axes = _styled(figure)
            positions = list(range(len(bars)))
            width = 0.28
            axes.bar(
                [p - width for p in positions],
                [bar.table_count for bar in bars],
                width,
                label="table (bloc entier)",
                color="#bdc3c7",
            )
            axes.bar(
                positions,
                [float(bar.expected_so_far) for bar in bars],
                width,
                label="attendus à ce stade",
                color="#f5b041",
            )
            axes.bar(
                [p + width for p in positions],
                [bar.paid_count for bar in bars],
                width,
                label="payés",
                color="#1f5fa8",
            )
            if max((bar.table_count for bar in bars), default=0) > 1000:
                # A full block's tiers run from a few top prizes to a million small ones.
                axes.set_yscale("symlog", linthresh=1)
                axes.yaxis.set_minor_formatter(ticker.NullFormatter())
            else:
                axes.yaxis.set_major_locator(ticker.MaxNLocator(5, integer=True))
            axes.yaxis.set_major_formatter(ticker.FuncFormatter(_count_label))
            labels = [format_euros(bar.prize_cents).replace(" €", f"{_NBSP}€") for bar in bars]
            axes.set_xticks(positions, labels, rotation=60, ha="right", rotation_mode="anchor")
            axes.set_ylabel("tickets")
            axes.set_title(f"Bloc {series.block_id} ({series.game}){_NBSP}: gains par rang")
            # Under the chart: inside, it would hide the bars of the small prizes.
            figure.legend(loc="outside lower center", ncols=3, frameon=False)
        return _render(figure, fmt)
