"""The operator's look-up of players: by e-mail address (or part of it), by name, or by id,
and one player's file (account, balance, limits, exclusion, recent tickets and movements).

Read-only; names are matched on the person key (:mod:`grattage.service.identity`), so case,
accents, hyphens and apostrophes do not matter: « eloise dupont » finds « Éloïse Dupont ».
"""

from __future__ import annotations

import re
import unicodedata

from grattage.errors import InvalidInput, NotFound
from grattage.service import responsible
from grattage.service.context import Platform
from grattage.service.identity import MAX_EMAIL_LENGTH, name_search_key
from grattage.service.person_exclusion import person_key_of
from grattage.service.player_port import PlayerQuery
from grattage.service.player_records import (
    PlayerFile,
    PlayerMatch,
    PlayerMovement,
    PlayerSuspension,
)
from grattage.service.views import history_row

MAX_PAGE = 100
MAX_OFFSET = 100_000
MAX_NAME_WORDS = 5
RECENT_TICKETS = 20
RECENT_MOVEMENTS = 50
_PLAYER_ID = re.compile(r"#?([0-9]{1,9})")


def parse_query(text: str) -> PlayerQuery | None:
    """What ``text`` asks for; None for an empty text (every account)."""
    typed = unicodedata.normalize("NFKC", text).strip()
    if len(typed) > MAX_EMAIL_LENGTH:
        raise InvalidInput(f"a look-up has at most {MAX_EMAIL_LENGTH} characters")
    if not typed:
        return None
    words = typed.split()
    if len(words) > MAX_NAME_WORDS:
        raise InvalidInput(f"a look-up has at most {MAX_NAME_WORDS} words")
    # An address has no space and its part before « @ » is no name: only the address is
    # matched then. Otherwise each word must be in the person's names.
    names = () if "@" in typed else tuple((name_search_key(word), word) for word in words)
    number = _PLAYER_ID.fullmatch(typed)
    return PlayerQuery(
        email_part=typed.lower(),
        names=tuple((key, word) for key, word in names if key),
        player_id=int(number.group(1)) if number else None,
    )


def search(
    platform: Platform, text: str, limit: int = 20, offset: int = 0
) -> tuple[list[PlayerMatch], int | None]:
    """A page of the accounts ``text`` finds, newest first, and the offset of the next page
    (None: this was the last)."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit is 1 to {MAX_PAGE}, got {limit!r}")
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput(f"offset is 0 to {MAX_OFFSET}, got {offset!r}")
    query = parse_query(text)
    with platform.uow.read() as repos:
        found = repos.player_directory.search(query, limit + 1, offset)
    matches = [
        PlayerMatch(
            id=row.id,
            email=row.email,
            first_name=row.first_name,
            last_name=row.last_name,
            created_at=row.created_at,
            status="suspended" if row.suspended else "active",
        )
        for row in found[:limit]
    ]
    return matches, offset + limit if len(found) > limit else None


def player_file(platform: Platform, player_id: int) -> PlayerFile:
    with platform.uow.read() as repos:
        row = repos.player_directory.get(player_id)
        if row is None:
            raise NotFound(f"no player {player_id!r}")
        suspension = repos.player_directory.suspension(player_id)
        balance = repos.ledger.player_account(player_id)[1]
        tickets = repos.tickets.history(player_id, RECENT_TICKETS, None)
        movements = repos.player_directory.movements(player_id, RECENT_MOVEMENTS)
        person_key = person_key_of(repos, player_id)
    register = platform.exclusion_register
    listed = None if register is None or person_key is None else register.lists(person_key)
    return PlayerFile(
        id=row.id,
        email=row.email,
        first_name=row.first_name,
        last_name=row.last_name,
        birth_date=row.birth_date,
        created_at=row.created_at,
        status="suspended" if suspension is not None else "active",
        suspension=None
        if suspension is None
        else PlayerSuspension(suspension.suspended_at, suspension.suspended_by, suspension.reason),
        balance_cents=balance,
        limits=responsible.limits(platform, player_id),
        nationally_excluded=listed,
        tickets=tuple(history_row(ticket) for ticket in tickets),
        movements=tuple(
            PlayerMovement(
                id=line.movement_id,
                kind=line.kind,
                created_at=line.created_at,
                amount_cents=line.amount_cents,
                ticket_id=line.ticket_id,
            )
            for line in movements
        ),
    )
