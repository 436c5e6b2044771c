"""Responsible gaming's rows: each player's weekly limits, counters and exclusion."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from grattage.adapters.db_time import from_db_time
from grattage.adapters.driver_sql import (
    LIMITS,
    LIMITS_COLUMNS,
    LIMITS_FOR_UPDATE,
    LOCK_ACCOUNT_OF_PLAYER,
    SET_WEEK_COUNTERS,
)
from grattage.adapters.ledger_legs import amount_for, touches
from grattage.adapters.tables import accounts, movements, player_limits, sessions
from grattage.service.model import LimitsRow

_TIMES = {"deposit_pending_at", "stake_pending_at", "excluded_until", "reality_checked_at"}


def _limits(row: Any) -> LimitsRow:
    return LimitsRow(**{name: getattr(row, name) for name in LimitsRow.__dataclass_fields__})


def _driver_limits(row: Sequence[Any]) -> LimitsRow:
    """A :class:`LimitsRow` from a driver row (no SQLAlchemy type processing)."""
    values = dict(zip(LIMITS_COLUMNS, row, strict=True))
    for name in _TIMES:
        if values[name] is not None:
            values[name] = from_db_time(values[name])
    if isinstance(values["week_start"], str):
        values["week_start"] = date.fromisoformat(values["week_start"])
    values["excluded_forever"] = bool(values["excluded_forever"])
    return LimitsRow(**values)


class SqlLimits:
    def __init__(
        self,
        connection: Connection,
        account_ids: dict[int, int] | None = None,
        held_wallets: set[int] | None = None,
    ) -> None:
        self.db = connection
        self._account_ids = account_ids if account_ids is not None else {}
        self._held = held_wallets if held_wallets is not None else set()

    def create(
        self, player_id: int, deposit_limit_cents: int | None, stake_limit_cents: int | None
    ) -> None:
        self.db.execute(
            insert(player_limits).values(
                player_id=player_id,
                deposit_limit_cents=deposit_limit_cents,
                stake_limit_cents=stake_limit_cents,
                week_deposits_cents=0,
                week_stakes_cents=0,
                excluded_forever=False,
            )
        )

    def get(self, player_id: int) -> LimitsRow | None:
        row = self.db.execute(
            select(player_limits).where(player_limits.c.player_id == player_id)
        ).first()
        return None if row is None else _limits(row)

    def lock(self, player_id: int) -> LimitsRow:
        """The player's row, locked to the end of the transaction (created if missing).

        On PostgreSQL the player's account row is locked first: every path that moves a
        player's money takes the account before the limits, so two cannot deadlock — unless
        this transaction holds it already (a purchase locked the wallet before its checks:
        locking it again cost a round trip while the sale holds its block's row). Runs on
        every purchase, so on the driver."""
        sqlite = self.db.dialect.name == "sqlite"
        if not sqlite and self._account_ids.get(player_id) not in self._held:
            locked = LOCK_ACCOUNT_OF_PLAYER(self.db, {"player_id": player_id}).first()
            if locked is not None:
                self._held.add(int(locked[0]))
        statement = LIMITS if sqlite else LIMITS_FOR_UPDATE
        row = statement(self.db, {"player_id": player_id}).first()
        if row is None:
            try:
                with self.db.begin_nested():
                    self.create(player_id, None, None)
            except IntegrityError:
                pass  # created meanwhile by a concurrent transaction
            row = statement(self.db, {"player_id": player_id}).one()
        return _driver_limits(row)

    def set_counters(self, player_id: int, week: date, deposits: int, stakes: int) -> None:
        SET_WEEK_COUNTERS(
            self.db,
            {
                "player_id": player_id,
                "week": week.isoformat() if self.db.dialect.name == "sqlite" else week,
                "deposits": deposits,
                "stakes": stakes,
            },
        )

    def update(self, player_id: int, **values: Any) -> None:
        self.db.execute(
            update(player_limits).where(player_limits.c.player_id == player_id).values(**values)
        )

    def session_started(self, session_id: int) -> datetime | None:
        found: datetime | None = self.db.execute(
            select(sessions.c.created_at).where(sessions.c.id == session_id)
        ).scalar()
        return found

    def movements_since(self, player_id: int, since: datetime) -> list[tuple[str, datetime, int]]:
        """(kind, time, amount on the player's account) of each movement since ``since``."""
        rows = self.db.execute(
            select(
                movements.c.kind,
                movements.c.created_at,
                amount_for(accounts.c.id).label("amount_cents"),
            )
            .join(accounts, touches(accounts.c.id))
            .where(
                movements.c.player_id == player_id,
                movements.c.created_at >= since,
                accounts.c.player_id == player_id,
            )
            .order_by(movements.c.id)
        )
        return [(row.kind, row.created_at, int(row.amount_cents)) for row in rows]
