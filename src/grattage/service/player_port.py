"""The back office's port onto players (its adapter: :mod:`grattage.adapters.player_directory`):
looking accounts up, reading one, and the suspensions an operator sets and lifts. Kept beside
:mod:`grattage.service.ports`, whose :class:`~grattage.service.ports.Repositories` holds it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from grattage.service.model import MovementKind


@dataclass(frozen=True)
class PlayerRow:
    """An account as the operator sees it (never its password hash)."""

    id: int
    email: str
    birth_date: date
    created_at: datetime
    first_name: str | None
    """As the player typed it; None for an account opened before names were asked."""
    last_name: str | None
    suspended: bool


@dataclass(frozen=True)
class SuspensionRow:
    suspended_at: datetime
    suspended_by: str
    """Who suspended the account, as the audit log names them (``operator:<email>``)."""
    reason: str


@dataclass(frozen=True)
class LedgerLine:
    """One movement of a player's money: the player's side of it (positive: credited)."""

    movement_id: int
    kind: MovementKind
    created_at: datetime
    amount_cents: int
    ticket_id: int | None


@dataclass(frozen=True)
class PlayerQuery:
    """What a look-up matches, already normalised by the service: any account whose e-mail
    contains ``email_part``, or whose names hold every word of ``names``, or whose id is
    ``player_id``. A word is (its key, as typed): its key is looked for in the person key
    (which has the first given name only), the word as typed in the names, case aside."""

    email_part: str
    names: tuple[tuple[str, str], ...]
    player_id: int | None


class PlayerDirectory(Protocol):
    def search(self, query: PlayerQuery | None, limit: int, offset: int) -> list[PlayerRow]:
        """Matching accounts, newest first (``query`` None: every account)."""
        ...

    def get(self, player_id: int) -> PlayerRow | None: ...
    def movements(self, player_id: int, limit: int) -> list[LedgerLine]:
        """The player's latest movements, newest first."""
        ...

    def is_suspended(self, player_id: int) -> bool:
        """Every purchase and deposit asks, once the wallet is locked: one primary-key read."""
        ...

    def suspension(self, player_id: int) -> SuspensionRow | None: ...
    def suspend(self, player_id: int, suspension: SuspensionRow) -> bool:
        """Suspend the account; False (nothing written) if it already is."""
        ...

    def lift_suspension(self, player_id: int) -> bool:
        """Lift the account's suspension; False if it had none."""
        ...

    def end_sessions(self, player_id: int) -> int:
        """Close every open session of the player: how many there were."""
        ...
