"""The back office's view of players: look-up, one account, its movements, its suspension."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, delete, false, insert, or_, select

from grattage.adapters.db_time import from_db_time
from grattage.adapters.driver_sql import PLAYER_SUSPENDED
from grattage.adapters.ledger_legs import amount_for, touches
from grattage.adapters.player_tables import player_suspensions
from grattage.adapters.tables import (
    accounts,
    movements,
    player_identities,
    players,
    sessions,
)
from grattage.service.player_port import LedgerLine, PlayerQuery, PlayerRow, SuspensionRow

_ACCOUNT = (
    select(
        players.c.id,
        players.c.email,
        players.c.birth_date,
        players.c.created_at,
        player_identities.c.first_name,
        player_identities.c.last_name,
        player_suspensions.c.player_id.is_not(None).label("suspended"),
    )
    .select_from(players)
    .outerjoin(player_identities, player_identities.c.player_id == players.c.id)
    .outerjoin(player_suspensions, player_suspensions.c.player_id == players.c.id)
)


def _row(row: Any) -> PlayerRow:
    return PlayerRow(
        id=int(row.id),
        email=str(row.email),
        birth_date=row.birth_date,
        created_at=from_db_time(row.created_at),
        first_name=row.first_name,
        last_name=row.last_name,
        suspended=bool(row.suspended),
    )


def _matches(query: PlayerQuery) -> Any:
    """Any account whose address contains the text, whose names hold every word typed, or
    whose id it is. ``autoescape``: a ``%`` or ``_`` typed is a character, not a wildcard."""
    found = []
    if query.email_part:
        found.append(players.c.email.contains(query.email_part, autoescape=True))
    if query.names:
        found.append(and_(*(_holds(key, typed) for key, typed in query.names)))
    if query.player_id is not None:
        found.append(players.c.id == query.player_id)
    return or_(*found) if found else false()


def _holds(key: str, typed: str) -> Any:
    """The person key has the word's key (case and accents aside, the first given name
    only), or a name has the word as typed (a second given name; ``ILIKE`` ignores the case,
    of ASCII letters only on SQLite)."""
    pattern = "%" + typed.replace("/", "//").replace("%", "/%").replace("_", "/_") + "%"
    return or_(
        player_identities.c.person_key.contains(key, autoescape=True),
        player_identities.c.first_name.ilike(pattern, escape="/"),
        player_identities.c.last_name.ilike(pattern, escape="/"),
    )


class SqlPlayerDirectory:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def search(self, query: PlayerQuery | None, limit: int, offset: int) -> list[PlayerRow]:
        statement = _ACCOUNT.order_by(players.c.id.desc()).limit(limit).offset(offset)
        if query is not None:
            statement = statement.where(_matches(query))
        return [_row(row) for row in self.db.execute(statement)]

    def get(self, player_id: int) -> PlayerRow | None:
        row = self.db.execute(_ACCOUNT.where(players.c.id == player_id)).first()
        return None if row is None else _row(row)

    def movements(self, player_id: int, limit: int) -> list[LedgerLine]:
        rows = self.db.execute(
            select(
                movements.c.id,
                movements.c.kind,
                movements.c.created_at,
                movements.c.ticket_id,
                amount_for(accounts.c.id).label("amount_cents"),
            )
            .join(accounts, touches(accounts.c.id))
            .where(movements.c.player_id == player_id, accounts.c.player_id == player_id)
            .order_by(movements.c.id.desc())
            .limit(limit)
        )
        return [
            LedgerLine(
                movement_id=int(row.id),
                kind=row.kind,
                created_at=from_db_time(row.created_at),
                amount_cents=int(row.amount_cents),
                ticket_id=None if row.ticket_id is None else int(row.ticket_id),
            )
            for row in rows
        ]

    def is_suspended(self, player_id: int) -> bool:
        return PLAYER_SUSPENDED(self.db, {"player_id": player_id}).first() is not None

    def suspension(self, player_id: int) -> SuspensionRow | None:
        row = self.db.execute(
            select(
                player_suspensions.c.suspended_at,
                player_suspensions.c.suspended_by,
                player_suspensions.c.reason,
            ).where(player_suspensions.c.player_id == player_id)
        ).first()
        if row is None:
            return None
        return SuspensionRow(from_db_time(row.suspended_at), row.suspended_by, row.reason)

    def suspend(self, player_id: int, suspension: SuspensionRow) -> bool:
        if self.is_suspended(player_id):
            return False
        self.db.execute(
            insert(player_suspensions).values(
                player_id=player_id,
                suspended_at=suspension.suspended_at,
                suspended_by=suspension.suspended_by,
                reason=suspension.reason,
            )
        )
        return True

    def lift_suspension(self, player_id: int) -> bool:
        gone = self.db.execute(
            delete(player_suspensions).where(player_suspensions.c.player_id == player_id)
        )
        return bool(gone.rowcount)

    def end_sessions(self, player_id: int) -> int:
        gone = self.db.execute(delete(sessions).where(sessions.c.player_id == player_id))
        return int(gone.rowcount)
