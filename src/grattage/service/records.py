"""The service's answers: frozen records of exact values, formatted by the entry points.

Money is integer cents, counts are ints, ratios are :class:`~fractions.Fraction` and moments
are aware datetimes: never a display string. The HTTP layer serializes these records as they
are (pydantic reads standard dataclasses; their fields are the API's, see docs/api.md), the
CLI formats them for people with :mod:`grattage.games.money`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from fractions import Fraction
from typing import Any, Literal

from grattage.service.model import BlockState, FinishedBy, JobStage, JobState, Mode, TicketState


@dataclass(frozen=True, slots=True)
class TicketView:
    """A ticket as its player sees it: revealed zones only, the whole document once finished."""

    id: int
    game: str
    title: str
    """The title of the ticket's own block (its table's), not the one on sale now."""
    mode: Mode
    state: TicketState
    sign: str | None
    stake_cents: int
    created_at: datetime
    zones: tuple[str, ...]
    revealed: dict[str, Any]
    """Zone id → its content (a number, cents, a symbol, an object: the game's)."""
    locked_zones: tuple[str, ...]
    prize_cents: int | None
    document: dict[str, Any] | None
    finished_at: datetime | None
    finished_by: FinishedBy | None
    balance_after_cents: int
    receipt: dict[str, Any] | None = None
    """The signed sale receipt (docs/fairness.md): the player's evidence of the purchase; null
    for tickets sold before the transparency log."""


@dataclass(frozen=True, slots=True)
class HistoryRow:
    id: int
    game: str
    created_at: datetime
    finished_at: datetime | None
    state: TicketState
    mode: Mode
    finished_by: FinishedBy | None
    stake_cents: int
    prize_cents: int | None
    balance_before_cents: int
    balance_after_cents: int
    sign: str | None


@dataclass(frozen=True, slots=True)
class PrizeTier:
    prize_cents: int
    count: int


OffSale = Literal["sold_out", "table_unplayable"]
"""Why a game is not on sale: no unit left in an open or pending block, or the stored table of
the block on show cannot be played (its rows cannot be dressed or give no figures)."""


@dataclass(frozen=True, slots=True)
class OpenBlockPrizes:
    """An open block and what is left to win in it: each prize of its table, largest first,
    with its count minus the tickets sold with it (exact, counted from the tickets sold)."""

    block_id: int
    size: int
    sold: int
    prizes_remaining: tuple[PrizeTier, ...]


@dataclass(frozen=True, slots=True)
class GameListing:
    """A game as the lobby shows it, with the table, price and title of the block now on sale.

    The odds are ``block_size / winning_tickets``, the payout ``prizes_total_cents /
    (block_size × price_cents)``: exact, divided where they are shown. A table that cannot be
    played is listed all the same, off sale, with no tiers and zero figures."""

    name: str
    title: str
    """The block's title (its table's), the name players see."""
    table_title: str
    table_source: str
    price_cents: int
    block_size: int
    top_prize_cents: int
    winning_tickets: int
    prizes_total_cents: int
    reconstruction: bool
    regulation_date: date
    """The day the game's regulation was made: the rules pages date the rules with it."""
    choices: tuple[str, ...]
    zones: tuple[str, ...]
    prize_table: tuple[PrizeTier, ...]
    on_sale: bool
    open_blocks: tuple[OpenBlockPrizes, ...]
    """The game's open blocks and the prizes still unsold in each."""
    top_prizes_remaining: PrizeTier | None
    """The open blocks' largest prize and how many of it are left across them; None when no
    block is open."""
    off_sale_reason: OffSale | None
    """Why ``on_sale`` is false; null when it is true."""


@dataclass(frozen=True, slots=True)
class BlockSummary:
    """A block's sales from the ledger. The payout so far is ``prizes_paid_cents /
    stakes_cents``, the table's ``table_prizes_total_cents / (size × price_cents)``."""

    id: int
    emission_id: int
    game: str
    state: BlockState
    size: int
    units_sold: int
    units_remaining: int
    stakes_cents: int
    prizes_paid_cents: int
    ggr_cents: int
    players: int
    price_cents: int
    table_prizes_total_cents: int
    table_title: str


@dataclass(frozen=True, slots=True)
class TierSales:
    """One tier of a block's table and what was paid of it. The count expected at this
    point of the sales is ``table_count × units_sold / size``."""

    tier: int
    prize_cents: int
    table_count: int
    paid_count: int
    paid_cents: int


@dataclass(frozen=True, slots=True)
class BlockDetail(BlockSummary):
    tiers: tuple[TierSales, ...]


@dataclass(frozen=True, slots=True)
class PayoutPoint:
    units_sold: int
    payout: Fraction
    """Prizes paid / stakes over the units sold so far."""


@dataclass(frozen=True, slots=True)
class PayoutSeries:
    """What the payout chart draws: the payout so far as the block's units sell."""

    block_id: int
    game: str
    size: int
    points: tuple[PayoutPoint, ...]
    table_payout: Fraction


@dataclass(frozen=True, slots=True)
class TierBar:
    prize_cents: int
    table_count: int
    expected_so_far: Fraction
    """``table_count × units_sold / size``: what the table predicts at this point."""
    paid_count: int


@dataclass(frozen=True, slots=True)
class TierSeries:
    """What the tiers chart draws: per tier, the table, the expectation and what was paid."""

    block_id: int
    game: str
    bars: tuple[TierBar, ...]


@dataclass(frozen=True, slots=True)
class SalesFigures:
    game: str
    units_sold: int
    stakes_cents: int
    prizes_cents: int
    ggr_cents: int
    """Gross gaming revenue: stakes − prizes."""
    players: int


@dataclass(frozen=True, slots=True)
class BlockReportRow(SalesFigures):
    block_id: int
    state: BlockState | None


@dataclass(frozen=True, slots=True)
class DayReportRow(SalesFigures):
    day: date
    """The UTC day."""


@dataclass(frozen=True, slots=True)
class PendingLimit:
    weekly_limit_cents: int
    effective_at: datetime


@dataclass(frozen=True, slots=True)
class LimitView:
    weekly_limit_cents: int
    spent_this_week_cents: int
    remaining_cents: int
    max_cents: int
    pending: PendingLimit | None


@dataclass(frozen=True, slots=True)
class Exclusion:
    excluded: bool
    permanent: bool
    until: datetime | None


@dataclass(frozen=True, slots=True)
class Limits:
    week_start: date
    deposit: LimitView
    stake: LimitView
    cooling_off_seconds: int
    exclusion: Exclusion


@dataclass(frozen=True, slots=True)
class ActivityTotals:
    deposits_cents: int
    stakes_cents: int
    prizes_cents: int
    tickets: int
    net_spend_cents: int
    """Stakes − prizes."""


@dataclass(frozen=True, slots=True)
class ActivityDay(ActivityTotals):
    day: date


@dataclass(frozen=True, slots=True)
class Activity:
    since: date
    until: date
    days: tuple[ActivityDay, ...]
    """Newest first; days without a movement are left out."""
    totals: ActivityTotals


@dataclass(frozen=True, slots=True)
class RealityCheck:
    """What a reality check shows: the session's time and money, in numbers."""

    minutes_played: int
    interval_minutes: int
    """How often a check comes (the platform's ``reality_check_minutes``)."""
    stakes_cents: int
    prizes_cents: int
    net_spend_cents: int


@dataclass(frozen=True, slots=True)
class PublicBlock:
    """A block as anyone may see it: never the prize of an unsold unit."""

    id: int
    game: str
    state: BlockState
    size: int
    sold: int
    root: str | None
    """The commitment's Merkle root (hex)."""
    disclosed: bool
    prizes_remaining: tuple[PrizeTier, ...] | None
    """An open block's prizes and how many of each are still unsold; None for a block not
    on sale."""


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One entry of the audit log as the operator reads it (its chain link left out)."""

    id: int
    created_at: str
    """As the hash chain stores it: ISO 8601, UTC."""
    actor: str
    action: str
    subject: str
    details: dict[str, Any]
    hash: str


@dataclass(frozen=True, slots=True)
class EmissionJobRecord:
    """An emission being made in the background, as the back office follows it.

    ``stage`` is where it is (``queued``, ``shuffling`` — generation —, ``committing``,
    ``storing``, ``opening``, ``done``) for block ``block`` of ``blocks`` (1-based; 0 before
    the first), ``done`` of ``total`` steps of that stage; a failed job keeps the stage it
    failed at. ``block_ids`` are the blocks stored so far, each whole."""

    id: int
    game: str
    actor: str
    state: JobState
    stage: JobStage
    block: int
    blocks: int
    done: int
    total: int
    error: str | None
    emission_id: int | None
    block_ids: tuple[int, ...]
    opened: tuple[int, ...]
    table_digest: str
    created_at: datetime
    finished_at: datetime | None
