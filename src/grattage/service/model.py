"""Plain records the repositories return and the service works on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

Mode = Literal["play", "auto"]
FinishedBy = Literal["player", "auto", "inactivity", "abandon"]
BlockState = Literal["pending", "open", "suspended", "exhausted", "closed"]
TicketState = Literal["covered", "playing", "finished"]
"""``covered``: sold and logged, its unit not drawn yet (a drawn block's sale waits for its
beacon round); ``playing``: drawn, being scratched; ``finished``: its prize credited."""
MovementKind = Literal["deposit", "stake", "prize"]

HOUSE_DEPOSITS = "house:deposits"
HOUSE_STAKES = "house:stakes"
HOUSE_PRIZES = "house:prizes"


@dataclass(frozen=True)
class Player:
    id: int
    email: str
    password_hash: str
    birth_date: date


@dataclass(frozen=True)
class SessionRow:
    id: int
    player_id: int
    email: str
    last_seen_at: datetime
    created_at: datetime
    reality_checked_at: datetime | None
    """The player's last reality check, read with the session so that finding none due
    costs no query of its own."""


@dataclass(frozen=True)
class Caller:
    """An authenticated player, and what their session showed when it was authenticated."""

    player_id: int
    email: str
    session_id: int
    session_started_at: datetime
    reality_checked_at: datetime | None


@dataclass(frozen=True)
class Block:
    id: int
    emission_id: int
    game: str
    key_id: str
    size: int
    sold: int
    state: BlockState
    chunk_units: int
    table_json: str
    price_cents: int
    """What one ticket of the block costs: its emission's table's price, fixed for good."""
    title: str
    """The table's title, the name players see."""
    commitment_index: int | None = None
    """Where the block's commitment is in the transparency log; None until the sequencer has
    placed it there — and a block whose commitment is not in the log never opens."""


@dataclass(frozen=True)
class TicketFacts:
    """What a ticket is, but for its id: the fields of :class:`NewTicket` and :class:`Ticket`."""

    player_id: int
    game: str
    block_id: int
    position: int | None
    """The unit sold; None while a drawn sale is ``covered`` (not drawn yet)."""
    sequence: int | None
    """The sale's index n in its block (the block's sold count before it); None only for
    tickets stored before indexes were (migration 0012 gives them their position)."""
    mode: Mode
    sign: str | None
    stake_cents: int
    prize_cents: int
    """The prize won; 0 while covered."""
    document: bytes
    """What the ticket shows, in its compact stored form (:mod:`grattage.games.ticket_codec`;
    :func:`grattage.service.views.ticket_document` reads it)."""
    revealed: bytes
    """The zones revealed so far, stored as a bit set over the game's zones (the codec's)."""
    state: TicketState
    created_at: datetime
    last_action_at: datetime
    finished_at: datetime | None
    finished_by: FinishedBy | None
    balance_before_cents: int
    balance_after_cents: int


@dataclass(frozen=True)
class NewTicket(TicketFacts):
    """A ticket being sold, before storage numbers it: playing, or already finished (an
    automatic play). Not a :class:`Ticket`, so a stored ticket cannot be stored again."""

    def stored_as(self, ticket_id: int) -> Ticket:
        """The ticket as storage numbered it."""
        return Ticket(id=ticket_id, **self.__dict__)


@dataclass(frozen=True, kw_only=True)
class Ticket(TicketFacts):
    id: int


@dataclass(frozen=True)
class Overdue:
    """Which playing tickets are overdue: idle since ``abandon_cutoff``, or since
    ``inactivity_cutoff`` in a game whose rules reveal an idle ticket (``inactivity_games``)."""

    inactivity_cutoff: datetime
    abandon_cutoff: datetime
    inactivity_games: tuple[str, ...]

    def cutoff_for(self, game: str) -> datetime:
        """A playing ticket of ``game`` whose last action is at or before this is overdue."""
        if game in self.inactivity_games:  # whichever delay runs out first (due_tickets' OR)
            return max(self.inactivity_cutoff, self.abandon_cutoff)
        return self.abandon_cutoff

    def holds_for(self, ticket: Ticket) -> bool:
        """Whether ``ticket`` is overdue, as :meth:`Tickets.due` would find it."""
        return ticket.state == "playing" and ticket.last_action_at <= self.cutoff_for(ticket.game)


@dataclass(frozen=True)
class ChainTip:
    """Where a drawn block's receipt chain stands: the hash of its last receipt (None for a
    block made before the tip was kept, whose chain starts from its commitment) and the time
    of that receipt's round (None before the first sale)."""

    receipt_sha256: str | None
    round_ms: int | None


NO_CHAIN_TIP = ChainTip(None, None)


@dataclass(frozen=True)
class Unit:
    block_id: int
    position: int
    price_cents: int
    """The price of the unit's block: what the sale debits."""
    chain_tip: ChainTip = NO_CHAIN_TIP
    """A drawn block's receipt chain as the block's previous sale left it, read by the very
    statement that took the unit (one round trip fewer while the block's row is held)."""


@dataclass(frozen=True)
class Leg:
    """One side of a movement: ``amount_cents`` added to ``account_id`` (negative: taken)."""

    account_id: int
    amount_cents: int


@dataclass(frozen=True)
class Movement:
    """A balanced movement of money: its kind, its legs, when, and whom and what it is for."""

    kind: MovementKind
    legs: list[Leg]
    at: datetime
    player_id: int | None = None
    ticket_id: int | None = None


@dataclass(frozen=True)
class NewBlock:
    """A block being created (pending, nothing sold), before storage numbers it."""

    emission_id: int
    game: str
    key_id: str
    size: int
    chunk_units: int
    created_at: datetime
    price_cents: int
    title: str


@dataclass(frozen=True)
class Operator:
    id: int
    email: str
    password_hash: str


@dataclass(frozen=True)
class OperatorSessionRow:
    id: int
    operator_id: int
    email: str
    last_seen_at: datetime


@dataclass(frozen=True)
class AuditEntry:
    """One link of the audit log's hash chain; ``details`` is canonical JSON text."""

    id: int
    created_at: str
    actor: str
    action: str
    subject: str
    details: str
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class LimitsRow:
    player_id: int
    deposit_limit_cents: int | None
    deposit_pending_cents: int | None
    deposit_pending_at: datetime | None
    stake_limit_cents: int | None
    stake_pending_cents: int | None
    stake_pending_at: datetime | None
    week_start: date | None
    week_deposits_cents: int
    week_stakes_cents: int
    excluded_until: datetime | None
    excluded_forever: bool
    reality_checked_at: datetime | None


@dataclass(frozen=True)
class ReportRow:
    """Sales of one block or one day of one game, from the ledger."""

    key: str
    game: str
    units: int
    stakes_cents: int
    prizes_cents: int
    players: int


JobState = Literal["running", "succeeded", "failed"]
JobStage = Literal["queued", "shuffling", "committing", "storing", "opening", "done"]


@dataclass(frozen=True)
class EmissionJob:
    """An emission made in the background: at ``stage`` of block ``block`` (1-based, 0 before
    the first), ``done`` of ``total`` steps of that stage, run by the process ``runner``."""

    id: int
    actor: str
    game: str
    blocks: int
    table_digest: str
    state: JobState
    stage: JobStage
    block: int
    done: int
    total: int
    error: str | None
    emission_id: int | None
    opened: str
    runner: str
    heartbeat_at: datetime
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class QueuedLogEntry:
    """A transparency-log entry written with its change, not yet placed in the tree."""

    id: int | None
    """None for an entry appended without queueing: a rotation's ``key.change``."""
    kind: str
    body: str
    block_id: int | None
    ticket_id: int | None


@dataclass(frozen=True)
class LogEntryRow:
    """Entry ``index`` of the transparency log: its canonical JSON ``body``."""

    index: int
    kind: str
    body: str
    block_id: int | None
    ticket_id: int | None


@dataclass(frozen=True)
class LoggedKey:
    """An operator key of the log's history: it signs from ``from_index``, brought in by the
    ``key.change`` entry at ``change_index`` (None for the first key)."""

    key_id: str
    public_key: bytes
    from_index: int
    change_index: int | None


@dataclass(frozen=True)
class StoredTreeHead:
    tree_size: int
    timestamp_ms: int
    root: bytes
    key_id: str
    signature: bytes
