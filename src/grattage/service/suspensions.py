"""Suspending a player's account (an operator's decision) and lifting the suspension.

A suspended player cannot log in, buy or deposit; their tickets already bought still finish
(the sweeper finishes an abandoned ticket and credits its prize, the drawer draws a covered
one), so no money owed is ever held back. The suspension and its lift each need a reason and
are written to the audit log in their own transaction, which also closes the player's open
sessions.

Purchases and deposits ask :func:`refuse_if_suspended` after locking the player's wallet,
and a suspension locks that wallet before writing: on PostgreSQL a purchase racing the
suspension is either sold before it commits or refused after, never sold after it (SQLite
runs one write transaction at a time). A log-in writes its session under the same lock, so
no session opens after a suspension closed them.
"""

from __future__ import annotations

import unicodedata

from grattage.errors import AccountSuspended, Conflict, InvalidInput, NotFound
from grattage.service.audit_trail import record
from grattage.service.context import Platform
from grattage.service.player_port import PlayerRow, SuspensionRow
from grattage.service.ports import Repositories

MIN_REASON_LENGTH = 3
MAX_REASON_LENGTH = 500
SUSPENDED = (
    "this account is suspended by the operator: no log-in, purchase or deposit until the "
    "operator lifts the suspension; tickets already bought still finish and their prizes are paid"
)


def refuse_if_suspended(repos: Repositories, player_id: int) -> None:
    """In a purchase's, a deposit's or a log-in's transaction, once the wallet is locked."""
    if repos.player_directory.is_suspended(player_id):
        raise AccountSuspended(SUSPENDED)


def lock_wallet(repos: Repositories, player_id: int) -> int:
    """Hold the player's wallet row until the transaction ends (what a purchase holds first);
    the wallet's account id."""
    account_id = repos.ledger.player_account_id(player_id)
    repos.ledger.lock_player_account(account_id)
    return account_id


def checked_reason(reason: str) -> str:
    """The reason as recorded: trimmed, one line, :data:`MIN_REASON_LENGTH` to
    :data:`MAX_REASON_LENGTH` characters, nothing invisible."""
    text = " ".join(unicodedata.normalize("NFC", reason).split())
    if not MIN_REASON_LENGTH <= len(text) <= MAX_REASON_LENGTH:
        raise InvalidInput(
            f"a reason has {MIN_REASON_LENGTH} to {MAX_REASON_LENGTH} characters, got {len(text)}"
        )
    for char in text:
        if unicodedata.category(char) in {"Cc", "Cf", "Co", "Cs", "Cn"}:
            raise InvalidInput(f"a reason has no invisible character (U+{ord(char):04X})")
    return text


def _player(repos: Repositories, player_id: int) -> PlayerRow:
    found = repos.player_directory.get(player_id)
    if found is None:
        raise NotFound(f"no player {player_id!r}")
    return found


def suspend(platform: Platform, player_id: int, reason: str, *, actor: str) -> None:
    """Suspend the account and close its sessions, audited (``player.suspend``); Conflict if
    it is suspended already (the first suspension and its reason stand)."""
    why = checked_reason(reason)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        player = _player(repos, player_id)
        lock_wallet(repos, player_id)
        if not repos.player_directory.suspend(player_id, SuspensionRow(now, actor, why)):
            raise Conflict(f"player {player_id} is already suspended")
        closed = repos.player_directory.end_sessions(player_id)
        details = {"email": player.email, "reason": why, "sessions_closed": closed}
        record(repos, now, actor, "player.suspend", f"player:{player_id}", details)


def reinstate(platform: Platform, player_id: int, reason: str, *, actor: str) -> None:
    """Lift the account's suspension, audited (``player.reinstate``); Conflict if it has
    none. The player logs in again themself: no session is opened for them."""
    why = checked_reason(reason)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        player = _player(repos, player_id)
        lock_wallet(repos, player_id)
        if not repos.player_directory.lift_suspension(player_id):
            raise Conflict(f"player {player_id} is not suspended")
        details = {"email": player.email, "reason": why}
        record(repos, now, actor, "player.reinstate", f"player:{player_id}", details)
