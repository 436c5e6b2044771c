"""Charts of a block: the service prepares exact series, a :class:`ChartRenderer` draws them.

The series are numbers (units, cents, fractions); turning them into a picture, with its labels
and its floats, is the renderer's business (matplotlib in :mod:`grattage.adapters.pictures`).
"""

from __future__ import annotations

from typing import Literal

from grattage.errors import InvalidInput
from grattage.service import back_office
from grattage.service.context import Platform
from grattage.service.tool_ports import ChartRenderer

ChartFormat = Literal["png", "svg"]
CHART_FORMATS: tuple[ChartFormat, ...] = ("png", "svg")


def _format(fmt: str) -> ChartFormat:
    if fmt not in CHART_FORMATS:
        raise InvalidInput(f"a chart is png or svg, got {fmt!r}")
    return fmt


def payout_chart(
    platform: Platform, renderer: ChartRenderer, block_id: int, fmt: str = "svg"
) -> bytes:
    """Payout so far (prizes paid / stakes) against the table's payout, as sales progress."""
    chosen = _format(fmt)
    return renderer.payout(back_office.payout_series(platform, block_id), chosen)


def tiers_chart(
    platform: Platform, renderer: ChartRenderer, block_id: int, fmt: str = "svg"
) -> bytes:
    """Prizes paid per tier against the table (whole block, and expected at this point)."""
    chosen = _format(fmt)
    return renderer.tiers(back_office.tier_series(platform, block_id), chosen)
