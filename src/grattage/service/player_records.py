"""The back office's answers about players: frozen records of exact values, as
:mod:`grattage.service.records` (their fields are the API's, see docs/back-office.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from grattage.service.model import MovementKind
from grattage.service.records import HistoryRow, Limits

PlayerStatus = Literal["active", "suspended"]


@dataclass(frozen=True, slots=True)
class PlayerMatch:
    """One account a look-up found."""

    id: int
    email: str
    first_name: str | None
    last_name: str | None
    created_at: datetime
    status: PlayerStatus


@dataclass(frozen=True, slots=True)
class PlayerSuspension:
    suspended_at: datetime
    suspended_by: str
    """``operator:<email>``, as the audit log names them."""
    reason: str


@dataclass(frozen=True, slots=True)
class PlayerMovement:
    """One movement of the player's money: their side of it (positive: credited)."""

    id: int
    kind: MovementKind
    created_at: datetime
    amount_cents: int
    ticket_id: int | None


@dataclass(frozen=True, slots=True)
class PlayerFile:
    """What an operator sees of one player: account, money, limits, exclusion, play."""

    id: int
    email: str
    first_name: str | None
    last_name: str | None
    birth_date: date
    created_at: datetime
    status: PlayerStatus
    suspension: PlayerSuspension | None
    balance_cents: int
    limits: Limits
    """The weekly limits in force and pending, and the self-exclusion."""
    nationally_excluded: bool | None
    """Whether the national register lists the person; None when the platform has no
    register or the account has no person (opened before names were asked)."""
    tickets: tuple[HistoryRow, ...]
    """The latest tickets, newest first."""
    movements: tuple[PlayerMovement, ...]
    """The latest ledger movements, newest first."""
