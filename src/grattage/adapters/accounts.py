"""Players and their sessions."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from grattage.adapters.db_time import from_db_time
from grattage.adapters.driver_sql import FIND_SESSION
from grattage.adapters.tables import players, sessions
from grattage.errors import AlreadyExists
from grattage.service.model import Player, SessionRow


class SqlPlayers:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(self, email: str, password_hash: str, birth_date: date, now: datetime) -> int:
        try:
            with self.db.begin_nested():
                row = self.db.execute(
                    insert(players)
                    .values(
                        email=email,
                        password_hash=password_hash,
                        birth_date=birth_date,
                        created_at=now,
                        failed_logins=0,
                    )
                    .returning(players.c.id)
                ).one()
        except IntegrityError:
            raise AlreadyExists(f"the e-mail address {email!r} is already registered") from None
        return int(row.id)

    def by_email(self, email: str) -> Player | None:
        row = self.db.execute(select(players).where(players.c.email == email)).first()
        if row is None:
            return None
        return Player(
            id=row.id,
            email=row.email,
            password_hash=row.password_hash,
            birth_date=row.birth_date,
            failed_logins=row.failed_logins,
            locked_until=row.locked_until,
        )

    def count_failed_log_in(self, account_id: int) -> int:
        return int(
            self.db.execute(
                update(players)
                .where(players.c.id == account_id)
                .values(failed_logins=players.c.failed_logins + 1)
                .returning(players.c.failed_logins)
            ).scalar_one()
        )

    def lock(self, account_id: int, until: datetime) -> None:
        self.db.execute(
            update(players)
            .where(players.c.id == account_id)
            .values(locked_until=until, failed_logins=0)
        )

    def clear_failed_log_ins(self, account_id: int) -> None:
        self.db.execute(
            update(players)
            .where(players.c.id == account_id)
            .values(failed_logins=0, locked_until=None)
        )


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
