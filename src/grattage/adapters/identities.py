"""Who is behind each account, and the self-exclusions kept per mailbox and per person."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, insert, or_, select, true, update
from sqlalchemy.exc import IntegrityError

from grattage.adapters.db_time import from_db_time
from grattage.adapters.tables import identity_exclusions, player_identities, player_limits


class SqlIdentities:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(
        self,
        player_id: int,
        mailbox_key: str,
        person_key: str | None,
        first_name: str | None,
        last_name: str | None,
    ) -> None:
        self.db.execute(
            insert(player_identities).values(
                player_id=player_id,
                mailbox_key=mailbox_key,
                person_key=person_key,
                first_name=first_name,
                last_name=last_name,
            )
        )

    def keys_of(self, player_id: int) -> list[str]:
        row = self.db.execute(
            select(player_identities.c.mailbox_key, player_identities.c.person_key).where(
                player_identities.c.player_id == player_id
            )
        ).first()
        if row is None:
            return []
        mailbox, person = row
        return [f"mailbox:{mailbox}"] + ([] if person is None else [f"person:{person}"])

    def lock_exclusions(self, keys: list[str]) -> list[tuple[bool, datetime | None]]:
        found: dict[str, tuple[bool, datetime | None]] = {}
        # Sorted: two transactions locking overlapping keys take them in the same order.
        for key in sorted(set(keys)):
            found[key] = self._lock(key)
        return [found[key] for key in keys]

    def _lock(self, key: str) -> tuple[bool, datetime | None]:
        query = select(identity_exclusions.c.excluded_forever, identity_exclusions.c.excluded_until)
        query = query.where(identity_exclusions.c.key == key)
        if self.db.dialect.name != "sqlite":  # SQLite: the write transaction holds the file
            query = query.with_for_update()
        row = self.db.execute(query).first()
        if row is None:
            try:
                with self.db.begin_nested():
                    self.db.execute(
                        insert(identity_exclusions).values(key=key, excluded_forever=False)
                    )
            except IntegrityError:
                pass  # inserted meanwhile by a concurrent transaction: lock theirs
            row = self.db.execute(query).one()
        forever, until = row
        return bool(forever), None if until is None else from_db_time(until)

    def _behind(self, keys: list[str]) -> Select[Any]:
        mailboxes = [key.removeprefix("mailbox:") for key in keys if key.startswith("mailbox:")]
        persons = [key.removeprefix("person:") for key in keys if key.startswith("person:")]
        return select(player_identities.c.player_id).where(
            or_(
                player_identities.c.mailbox_key.in_(mailboxes),
                player_identities.c.person_key.in_(persons),
            )
        )

    def players_behind(self, keys: list[str]) -> list[int]:
        query = self._behind(keys).order_by(player_identities.c.player_id)
        return [int(player_id) for player_id in self.db.execute(query).scalars()]

    def exclude(self, keys: list[str], until: datetime | None) -> None:
        behind = self._behind(keys)
        for table, where in (
            (identity_exclusions, identity_exclusions.c.key.in_(keys)),
            (player_limits, player_limits.c.player_id.in_(behind)),
        ):
            if until is None:
                self.db.execute(update(table).where(where).values(excluded_forever=true()))
            else:
                self.db.execute(
                    update(table)
                    .where(
                        where,
                        table.c.excluded_forever.is_(False),
                        or_(table.c.excluded_until.is_(None), table.c.excluded_until < until),
                    )
                    .values(excluded_until=until)
                )
