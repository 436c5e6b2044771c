"""Players and their sessions."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Connection, insert, update

from grattage.adapters.db_time import from_db_time
from grattage.adapters.driver_sql import FIND_SESSION
from grattage.adapters.rows import SqlAccountTable, record_of
from grattage.adapters.tables import players, sessions
from grattage.service.model import Player, SessionRow


class SqlPlayers(SqlAccountTable):
    table = players

    def add(self, email: str, password_hash: str, birth_date: date, now: datetime) -> int:
        return self._insert(
            f"the e-mail address {email!r} is already registered",
            email=email,
            password_hash=password_hash,
            birth_date=birth_date,
            created_at=now,
        )

    def by_email(self, email: str) -> Player | None:
        row = self._by_email(email)
        return None if row is None else record_of(Player, row)


class SqlSessions:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(self, token_hash: str, player_id: int, now: datetime) -> None:
        self.db.execute(
            insert(sessions).values(
                token_hash=token_hash, player_id=player_id, created_at=now, last_seen_at=now
            )
        )

    def find(self, token_hash: str) -> SessionRow | None:
        row = FIND_SESSION(self.db, {"token_hash": token_hash}).first()
        if row is None:
            return None
        session_id, player_id, email, last_seen_at, created_at, reality_checked_at = row
        return SessionRow(
            id=session_id,
            player_id=player_id,
            email=email,
            last_seen_at=from_db_time(last_seen_at),
            created_at=from_db_time(created_at),
            reality_checked_at=(
                None if reality_checked_at is None else from_db_time(reality_checked_at)
            ),
        )

    def touch(self, session_id: int, now: datetime) -> None:
        self.db.execute(
            update(sessions).where(sessions.c.id == session_id).values(last_seen_at=now)
        )

    def delete(self, token_hash: str) -> None:
        self.db.execute(sessions.delete().where(sessions.c.token_hash == token_hash))
