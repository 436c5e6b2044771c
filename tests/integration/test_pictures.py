"""Charts behind the pictures port: the service prepares exact series, the matplotlib adapter
draws them, and no service module imports matplotlib."""

from __future__ import annotations

import ast
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Literal
from xml.etree import ElementTree

import pytest

from grattage.adapters.pictures import MatplotlibCharts
from grattage.errors import InvalidInput
from grattage.service import back_office, charts
from grattage.service.records import PayoutPoint, PayoutSeries, TierBar, TierSeries
from support import World, bought

SERVICE = Path(__file__).resolve().parents[2] / "src" / "grattage" / "service"
DRAWING_LIBRARIES = ("matplotlib",)
"""Imported by no service module (argon2, password hashing, joins this list with its port)."""


def _imported(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_service_module_imports_matplotlib_even_inside_a_function() -> None:
    for path in sorted(SERVICE.glob("*.py")):
        found = _imported(path.read_text("utf-8")) & set(DRAWING_LIBRARIES)
        assert not found, f"{path.name} imports {found}"


def test_importing_every_service_module_loads_no_matplotlib() -> None:
    probe = (
        "import importlib, pkgutil, sys\n"
        "import grattage.service as service\n"
        "for module in pkgutil.iter_modules(service.__path__):\n"
        "    importlib.import_module(f'grattage.service.{module.name}')\n"
        f"print(sorted(name for name in {DRAWING_LIBRARIES!r} if name in sys.modules))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "[]"


class RecordingRenderer:
    """A ChartRenderer that keeps what it was asked to draw."""

    def __init__(self) -> None:
        self.drawn: list[object] = []

    def payout(self, series: PayoutSeries, fmt: Literal["png", "svg"]) -> bytes:
        self.drawn.append((series, fmt))
        return b"payout"

    def tiers(self, series: TierSeries, fmt: Literal["png", "svg"]) -> bytes:
        self.drawn.append((series, fmt))
        return b"tiers"


def test_the_charts_hand_the_renderer_exact_series_from_the_ledger(world: World) -> None:
    world.stock("cash")
    player = world.player(10_000)
    for _ in range(7):
        bought(world, player, game_name="cash", mode="auto")
    renderer = RecordingRenderer()
    assert charts.tiers_chart(world.platform, renderer, 1, "png") == b"tiers"
    assert charts.payout_chart(world.platform, renderer, 1, "svg") == b"payout"
    (tiers, tiers_format), (payout, payout_format) = renderer.drawn
    assert (tiers_format, payout_format) == ("png", "svg")
    block = back_office.block(world.platform, 1)
    assert isinstance(tiers, TierSeries) and isinstance(payout, PayoutSeries)
    assert [bar.expected_so_far for bar in tiers.bars] == [
        Fraction(tier.table_count * 7, block.size) for tier in block.tiers
    ]
    assert [bar.paid_count for bar in tiers.bars] == [tier.paid_count for tier in block.tiers]
    last = payout.points[-1]
    assert last.units_sold == 7
    assert last.payout == Fraction(block.prizes_paid_cents, block.stakes_cents)
    assert isinstance(payout.table_payout, Fraction)
    with pytest.raises(InvalidInput):
        charts.payout_chart(world.platform, renderer, 1, "gif")
    assert len(renderer.drawn) == 2


def test_the_matplotlib_renderer_draws_png_and_svg_from_exact_series() -> None:
    renderer = MatplotlibCharts()
    payout = PayoutSeries(
        block_id=3,
        game="cash",
        size=100,
        points=(PayoutPoint(10, Fraction(1, 3)), PayoutPoint(20, Fraction(7, 5))),
        table_payout=Fraction(3, 4),
    )
    bars = (TierBar(50_000_000, 3, Fraction(3, 7), 0), TierBar(500, 2_000, Fraction(2_000, 7), 1))
    tiers = TierSeries(block_id=3, game="cash", bars=bars)
    for drawn in (renderer.payout(payout, "png"), renderer.tiers(tiers, "png")):
        assert drawn.startswith(b"\x89PNG\r\n\x1a\n") and len(drawn) > 1000
    for drawn in (renderer.payout(payout, "svg"), renderer.tiers(tiers, "svg")):
        assert ElementTree.fromstring(drawn).tag.endswith("svg")
    assert b"<dc:date>" not in renderer.payout(payout, "svg")


def test_the_first_charts_drawn_on_eight_threads_at_once_all_succeed() -> None:
    # In a fresh interpreter: matplotlib's first import is what races (two chart requests
    # right after the server starts).
    probe = """
import threading
from fractions import Fraction
from grattage.adapters.pictures import MatplotlibCharts
from grattage.service.records import PayoutPoint, PayoutSeries, TierBar, TierSeries
renderer = MatplotlibCharts()
payout = PayoutSeries(1, "cash", 10, (PayoutPoint(1, Fraction(1, 2)),), Fraction(1, 2))
tiers = TierSeries(1, "cash", (TierBar(500, 3, Fraction(1, 3), 1),))
failures = []
together = threading.Barrier(8)
def draw(index):
    together.wait()
    try:
        renderer.payout(payout, "svg") if index % 2 else renderer.tiers(tiers, "png")
    except Exception as error:
        failures.append(repr(error))
threads = [threading.Thread(target=draw, args=(index,)) for index in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(failures)
"""
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert shown.strip() == "[]"


def _texts(svg: bytes) -> list[str]:
    """The words an SVG chart shows (its text is kept as text, not drawn as paths)."""
    root = ElementTree.fromstring(svg)
    return ["".join(node.itertext()) for node in root.iter() if node.tag.endswith("text")]


def test_the_payout_chart_is_french_and_zoomed_to_the_units_sold_of_a_full_block() -> None:
    """27 units sold of 12 000 000: the x axis spans about 30 units, not the block (where
    the line would be a dot), labelled in French, with no scientific notation."""
    points = tuple(
        PayoutPoint(n, Fraction(4, 3) if n == 9 else Fraction(1, 3)) for n in range(1, 28)
    )
    series = PayoutSeries(3, "cash", 12_000_000, points, Fraction(3, 4))
    texts = _texts(MatplotlibCharts().payout(series, "svg"))
    ticks = [int(t.replace("\u202f", "")) for t in texts if t.replace("\u202f", "").isdigit()]
    assert max(ticks) == 30
    assert "tickets vendus (sur 12\u202f000\u202f000)" in texts
    assert "Bloc 3 (cash)\u00a0: taux de retour" in texts
    assert "table (75\u00a0%)" in texts
    assert any(t.endswith("\u00a0%") for t in texts if t != "table (75\u00a0%)")
    assert not any("e+" in t or "1e" in t or "." in t for t in texts)


def test_the_tiers_chart_counts_a_full_block_in_french_thousands_not_powers_of_ten() -> None:
    bars = (
        TierBar(50_000_000, 3, Fraction(3 * 27, 12_000_000), 0),
        TierBar(500, 1_200_000, Fraction(1_200_000 * 27, 12_000_000), 1),
    )
    texts = _texts(MatplotlibCharts().tiers(TierSeries(3, "cash", bars), "svg"))
    assert "1\u202f000\u202f000" in texts and "10\u202f000" in texts
    assert "500\u202f000\u00a0€" in texts and "5\u00a0€" in texts
    assert {"table (bloc entier)", "attendus à ce stade", "payés"} <= set(texts)
    assert not any("10^" in t or "e+" in t or "$" in t for t in texts)


def test_the_payout_series_is_in_sale_order_over_the_units_sold(world: World) -> None:
    world.stock("cash")
    player = world.player(10_000)
    for _ in range(7):
        bought(world, player, game_name="cash", mode="auto")
    series = back_office.payout_series(world.platform, 1)
    assert [point.units_sold for point in series.points] == [1, 2, 3, 4, 5, 6, 7]
