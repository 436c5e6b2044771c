"""The try mode's records and the one port it stores them through (docs/games.md,
« Essayer gratuitement »). Nothing here names a player, a wallet, the ledger or a real block:
the try mode's use cases (:mod:`grattage.service.try_mode`) cannot reach real money."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from grattage.service.model import FinishedBy, Mode

TryState = Literal["playing", "finished"]
TryMovementKind = Literal["start", "refill", "stake", "prize"]


@dataclass(frozen=True)
class TrySession:
    id: int
    balance_cents: int
    """Play money (« argent fictif »), in cents: never real, never convertible."""
    tickets_bought: int
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class NewTryTicket:
    session_id: int
    game: str
    block_id: int
    """The try block it was dealt from (never a real block)."""
    position: int
    mode: Mode
    sign: str | None
    stake_cents: int
    prize_cents: int
    document: str
    revealed: str
    state: TryState
    created_at: datetime
    finished_at: datetime | None
    finished_by: FinishedBy | None
    balance_before_cents: int
    balance_after_cents: int


@dataclass(frozen=True, kw_only=True)
class TryTicket(NewTryTicket):
    id: int


@dataclass(frozen=True)
class TryMovement:
    kind: TryMovementKind
    amount_cents: int
    """Signed: what the play balance gained (a start, a refill, a prize) or lost (a stake)."""
    balance_after_cents: int
    ticket_id: int | None


@dataclass(frozen=True)
class TryBlock:
    id: int
    size: int
    sold: int


class TryRepository(Protocol):
    """The try mode's tables, in the caller's transaction."""

    def add_session(
        self, token_sha256: str, balance_cents: int, now: datetime, expires_at: datetime
    ) -> int: ...

    def session(self, token_sha256: str, now: datetime, lock: bool = False) -> TrySession | None:
        """The unexpired session of that token; ``lock`` holds its row to the commit."""
        ...

    def debit(self, session_id: int, stake_cents: int, most_tickets: int) -> int | None:
        """Take a stake and count a ticket in one statement: the balance after, or None if
        the balance cannot pay it or the session bought its most tickets (nothing changed)."""
        ...

    def credit(self, session_id: int, amount_cents: int) -> int:
        """Add play money; the balance after."""
        ...

    def open_block(self, game: str, table_digest: str, size: int, now: datetime) -> TryBlock:
        """The game's try block with an unsold unit, held to the commit; a new one (nothing
        sold) when there is none — the last one sold out, or the table changed."""
        ...

    def take_position(self, block_id: int) -> None:
        """Count one more sale of the held block."""
        ...

    def moved_tier(self, block_id: int, slot: int) -> int | None: ...

    def move(self, block_id: int, slot: int, tier: int) -> None: ...

    def forget_slot(self, block_id: int, slot: int) -> None:
        """A dealt slot is never read again: its row, if any, goes."""
        ...

    def add_ticket(self, ticket: NewTryTicket) -> int: ...

    def ticket(self, session_id: int, ticket_id: int, lock: bool = False) -> TryTicket | None: ...

    def last_ticket(self, session_id: int) -> TryTicket | None: ...

    def history(self, session_id: int, limit: int) -> list[TryTicket]: ...

    def set_revealed(self, ticket_id: int, revealed: str) -> None: ...

    def finish(self, ticket_id: int, revealed: str, finished_by: FinishedBy, now: datetime) -> bool:
        """``playing → finished``; False when it was finished already (nothing changed)."""
        ...

    def set_balance_after(self, ticket_id: int, balance_after_cents: int) -> None: ...

    def record(
        self,
        session_id: int,
        ticket_id: int | None,
        kind: TryMovementKind,
        amount_cents: int,
        balance_after_cents: int,
        now: datetime,
    ) -> None: ...

    def movements(self, session_id: int) -> list[TryMovement]: ...

    def purge(self, now: datetime) -> int:
        """Delete the sessions expired by ``now``, with their tickets and movements; how many
        sessions went."""
        ...
