"""Exclusion per person and per mailbox, not per account.

A self-exclusion is stored on the excluding account's mailbox key and person key
(:mod:`grattage.service.identity`) and copied, in the same transaction, to every account
behind either key, so purchases and deposits keep their one check on the account's own
limits row. A sign-up locks the rows of its two keys and is refused while either is
excluded; an exclusion locks the same rows first, so the two serialize: an account opened
at the instant of an exclusion is refused, or excluded with the others. The national
exclusion register (a port) is asked at sign-up and at log-in.
"""

from __future__ import annotations

from datetime import datetime

from grattage.errors import NationallyExcluded, SelfExcluded
from grattage.service.context import Platform
from grattage.service.ports import Repositories
from grattage.service.views import iso

LISTED = (
    "you are on the national register of people barred from gambling (ANJ): "
    "no account can be opened or used"
)


def refuse_if_listed(platform: Platform, person_key: str | None) -> None:
    """NationallyExcluded if the national register lists this person."""
    register = platform.exclusion_register
    if register is not None and person_key is not None and register.lists(person_key):
        raise NationallyExcluded(LISTED)


def refuse_excluded_identity(
    repos: Repositories, mailbox_key: str, person_keys: list[str], now: datetime
) -> None:
    """In the sign-up's transaction: lock the mailbox's and the person's exclusion rows (the
    person's key in both orders of the names), and refuse while any is excluded."""
    keys = [f"mailbox:{mailbox_key}"] + [f"person:{key}" for key in person_keys]
    for forever, until in repos.identities.lock_exclusions(keys):
        if forever:
            raise SelfExcluded("this person or this mailbox is excluded from play permanently")
        if until is not None and until > now:
            raise SelfExcluded(
                f"this person or this mailbox is excluded from play until {iso(until)}",
                until=iso(until),
            )


def person_key_of(repos: Repositories, player_id: int) -> str | None:
    for key in repos.identities.keys_of(player_id):
        if key.startswith("person:"):
            return key.removeprefix("person:")
    return None


def exclude_identity(repos: Repositories, player_id: int, until: datetime | None) -> None:
    """In the exclusion's transaction, before any other row: exclude the player's mailbox
    and person and every account behind them (``until`` None: for good).

    Locks the keys' rows first (two exclusions of one person wait for each other there),
    then each account behind them as a purchase does, its wallet then its limits, in id
    order: a purchase of one of them holds at most those two rows, so neither waits for
    the other in a cycle."""
    keys = repos.identities.keys_of(player_id)
    repos.identities.lock_exclusions(keys)
    for behind in repos.identities.players_behind(keys):
        repos.limits.lock(behind)
    repos.identities.exclude(keys, until)
