"""A sale's stake, the same for every sale (drawn or not): the player's stake checks, then
the debit to the house's stakes account."""

from __future__ import annotations

from datetime import datetime

from grattage.errors import InsufficientBalance
from grattage.games.money import format_euros
from grattage.service.context import Platform
from grattage.service.model import HOUSE_STAKES, Leg
from grattage.service.ports import Repositories
from grattage.service.suspensions import refuse_if_suspended


def debit_stake(
    platform: Platform,
    repos: Repositories,
    player_id: int,
    account_id: int,
    game_name: str,
    stake: int,
    now: datetime,
) -> tuple[list[Leg], int]:
    """Check the player's limits and debit ``stake`` cents: the stake's legs and the balance
    after. Refused (AccountSuspended, LimitReached, InsufficientBalance, …) with nothing
    written by it."""
    # Hold the wallet first: a check reads what the player already staked, or concurrent
    # purchases would all read the same total and together exceed a limit (PostgreSQL); and a
    # suspension locks it too, so a purchase racing one is sold before it or refused after.
    repos.ledger.lock_player_account(account_id)
    refuse_if_suspended(repos, player_id)
    for check in platform.stake_checks:
        check(repos, player_id, game_name, stake, now)
    legs = [Leg(account_id, -stake), Leg(repos.ledger.house_account(HOUSE_STAKES), stake)]
    try:
        balance_after = repos.ledger.apply(legs)[account_id]
    except InsufficientBalance:
        raise InsufficientBalance(
            f"a {game_name} ticket costs {format_euros(stake)}; the balance cannot pay it"
        ) from None
    return legs, balance_after
