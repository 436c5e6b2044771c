"""Repositories of the back-office and of responsible gaming (SQLAlchemy Core).

Kept apart from :mod:`grattage.adapters.repositories`, whose sale statements are tuned on their
own; these run off the hot path, except :meth:`SqlLimits.lock`, one row per purchase.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Connection, and_, case, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from grattage.adapters.driver_sql import DriverSql
from grattage.adapters.tables import (
    accounts,
    audit_head,
    audit_log,
    entries,
    movements,
    operator_sessions,
    operators,
    player_limits,
    sessions,
    tickets,
)
from grattage.errors import AlreadyExists
from grattage.service.model import (
    AuditEntry,
    LimitsRow,
    Operator,
    OperatorSessionRow,
    ReportRow,
)


class SqlOperators:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(self, email: str, password_hash: str, now: datetime) -> int:
        try:
            with self.db.begin_nested():
                return int(
                    self.db.execute(
                        insert(operators)
                        .values(
                            email=email,
                            password_hash=password_hash,
                            created_at=now,
                            failed_logins=0,
                        )
                        .returning(operators.c.id)
                    ).scalar_one()
                )
        except IntegrityError:
            raise AlreadyExists(f"the operator {email!r} already exists") from None

    def by_email(self, email: str) -> Operator | None:
        row = self.db.execute(select(operators).where(operators.c.email == email)).first()
        if row is None:
            return None
        return Operator(row.id, row.email, row.password_hash, row.failed_logins, row.locked_until)

    def failed_log_in(self, operator_id: int, threshold: int, lock_until: datetime) -> int:
        """Count a failed log-in; lock the operator at ``threshold`` in a row."""
        failed = int(
            self.db.execute(
                update(operators)
                .where(operators.c.id == operator_id)
                .values(failed_logins=operators.c.failed_logins + 1)
                .returning(operators.c.failed_logins)
            ).scalar_one()
        )
        if failed >= threshold:
            self.db.execute(
                update(operators)
                .where(operators.c.id == operator_id)
                .values(failed_logins=0, locked_until=lock_until)
            )
        return failed

    def clear_failed_log_ins(self, operator_id: int) -> None:
        self.db.execute(
            update(operators)
            .where(operators.c.id == operator_id)
            .values(failed_logins=0, locked_until=None)
        )

    def add_session(self, token_hash: str, operator_id: int, now: datetime) -> None:
        self.db.execute(
            insert(operator_sessions).values(
                token_hash=token_hash, operator_id=operator_id, created_at=now, last_seen_at=now
            )
        )

    def find_session(self, token_hash: str) -> OperatorSessionRow | None:
        row = self.db.execute(
            select(
                operator_sessions.c.id,
                operator_sessions.c.operator_id,
                operator_sessions.c.last_seen_at,
                operators.c.email,
            )
            .join(operators, operators.c.id == operator_sessions.c.operator_id)
            .where(operator_sessions.c.token_hash == token_hash)
        ).first()
        if row is None:
            return None
        return OperatorSessionRow(row.id, row.operator_id, row.email, row.last_seen_at)

    def touch_session(self, session_id: int, now: datetime) -> None:
        self.db.execute(
            update(operator_sessions)
            .where(operator_sessions.c.id == session_id)
            .values(last_seen_at=now)
        )

    def delete_session(self, token_hash: str) -> None:
        self.db.execute(
            operator_sessions.delete().where(operator_sessions.c.token_hash == token_hash)
        )


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        created_at=row.created_at,
        actor=row.actor,
        action=row.action,
        subject=row.subject,
        details=row.details,
        prev_hash=row.prev_hash,
        hash=row.hash,
    )


class SqlAuditLog:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def lock_head(self) -> tuple[int, str]:
        """The last entry's (id, hash), locked until the transaction ends: appends queue here."""
        row = self.db.execute(
            select(audit_head.c.last_id, audit_head.c.last_hash)
            .where(audit_head.c.id == 1)
            .with_for_update()
        ).one()
        return int(row.last_id), str(row.last_hash)

    def head(self) -> tuple[int, str]:
        row = self.db.execute(
            select(audit_head.c.last_id, audit_head.c.last_hash).where(audit_head.c.id == 1)
        ).one()
        return int(row.last_id), str(row.last_hash)

    def append(self, entry: AuditEntry) -> None:
        self.db.execute(
            insert(audit_log).values(
                id=entry.id,
                created_at=entry.created_at,
                actor=entry.actor,
                action=entry.action,
                subject=entry.subject,
                details=entry.details,
                prev_hash=entry.prev_hash,
                hash=entry.hash,
            )
        )
        self.db.execute(
            update(audit_head)
            .where(audit_head.c.id == 1)
            .values(last_id=entry.id, last_hash=entry.hash)
        )

    def entries(self, after: int = 0, limit: int = 10_000) -> list[AuditEntry]:
        rows = self.db.execute(
            select(audit_log).where(audit_log.c.id > after).order_by(audit_log.c.id).limit(limit)
        )
        return [_entry(row) for row in rows]

    def latest(self, limit: int) -> list[AuditEntry]:
        rows = self.db.execute(select(audit_log).order_by(audit_log.c.id.desc()).limit(limit))
        return [_entry(row) for row in rows]


def _limits(row: Any) -> LimitsRow:
    return LimitsRow(**{name: getattr(row, name) for name in LimitsRow.__dataclass_fields__})


_LIMIT_FIELDS = tuple(LimitsRow.__dataclass_fields__)
_LIMITS_SELECT = (
    f"SELECT {', '.join(_LIMIT_FIELDS)} FROM player_limits WHERE player_id = :player_id"
)
_LIMITS_SQL = DriverSql(_LIMITS_SELECT)
_LIMITS_FOR_UPDATE_SQL = DriverSql(_LIMITS_SELECT + " FOR UPDATE")
_LOCK_ACCOUNT_SQL = DriverSql("SELECT id FROM accounts WHERE player_id = :player_id FOR UPDATE")
_SET_COUNTERS_SQL = DriverSql(
    """UPDATE player_limits
       SET week_start = :week, week_deposits_cents = :deposits, week_stakes_cents = :stakes
       WHERE player_id = :player_id"""
)
_TIMES = {"deposit_pending_at", "stake_pending_at", "excluded_until", "reality_checked_at"}


def _utc(value: Any) -> datetime | None:
    """A time as the driver returns it (SQLite: text; psycopg: naive) → aware UTC."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.replace(tzinfo=UTC)


def _raw_limits(row: Any) -> LimitsRow:
    """A :class:`LimitsRow` from a driver row (no SQLAlchemy type processing)."""
    values = dict(zip(_LIMIT_FIELDS, row, strict=True))
    for name in _TIMES:
        values[name] = _utc(values[name])
    if isinstance(values["week_start"], str):
        values["week_start"] = date.fromisoformat(values["week_start"])
    values["excluded_forever"] = bool(values["excluded_forever"])
    return LimitsRow(**values)


class SqlLimits:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

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
        player's money takes the account before the limits, so two cannot deadlock. Runs on
        every purchase, so in plain SQL through the driver (see ``driver_sql``)."""
        sqlite = self.db.dialect.name == "sqlite"
        if not sqlite:
            _LOCK_ACCOUNT_SQL(self.db, {"player_id": player_id}).first()
        statement = _LIMITS_SQL if sqlite else _LIMITS_FOR_UPDATE_SQL
        row = statement(self.db, {"player_id": player_id}).first()
        if row is None:
            try:
                with self.db.begin_nested():
                    self.create(player_id, None, None)
            except IntegrityError:
                pass  # created meanwhile by a concurrent transaction
            row = statement(self.db, {"player_id": player_id}).one()
        return _raw_limits(row)

    def set_counters(self, player_id: int, week: date, deposits: int, stakes: int) -> None:
        _SET_COUNTERS_SQL(
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

    def delete_sessions(self, player_id: int) -> None:
        self.db.execute(sessions.delete().where(sessions.c.player_id == player_id))

    def movements_since(self, player_id: int, since: datetime) -> list[tuple[str, datetime, int]]:
        """(kind, time, amount on the player's account) of each movement since ``since``."""
        rows = self.db.execute(
            select(movements.c.kind, movements.c.created_at, entries.c.amount_cents)
            .join(entries, entries.c.movement_id == movements.c.id)
            .join(accounts, accounts.c.id == entries.c.account_id)
            .where(
                movements.c.player_id == player_id,
                movements.c.created_at >= since,
                accounts.c.player_id == player_id,
            )
            .order_by(movements.c.id)
        )
        return [(row.kind, row.created_at, int(row.amount_cents)) for row in rows]


def _money_by(group: Any, since: datetime | None, until: datetime | None) -> Any:
    """Sales and prizes from the ledger (the players' side of each movement), grouped."""
    is_stake = movements.c.kind == "stake"
    is_prize = movements.c.kind == "prize"
    query = (
        select(
            group.label("key"),
            tickets.c.game,
            func.sum(case((is_stake, 1), else_=0)).label("units"),
            func.coalesce(func.sum(case((is_stake, -entries.c.amount_cents), else_=0)), 0).label(
                "stakes"
            ),
            func.coalesce(func.sum(case((is_prize, entries.c.amount_cents), else_=0)), 0).label(
                "prizes"
            ),
            func.count(func.distinct(case((is_stake, movements.c.player_id)))).label("players"),
        )
        .select_from(
            movements.join(entries, entries.c.movement_id == movements.c.id)
            .join(
                accounts, and_(accounts.c.id == entries.c.account_id, accounts.c.kind == "player")
            )
            .join(tickets, tickets.c.id == movements.c.ticket_id)
        )
        .where(movements.c.kind.in_(("stake", "prize")))
        .group_by(group, tickets.c.game)
        .order_by(group, tickets.c.game)
    )
    if since is not None:
        query = query.where(movements.c.created_at >= since)
    if until is not None:
        query = query.where(movements.c.created_at < until)
    return query


class SqlReports:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def _rows(self, query: Any) -> list[ReportRow]:
        return [
            ReportRow(
                key=str(row.key),
                game=row.game,
                units=int(row.units),
                stakes_cents=int(row.stakes),
                prizes_cents=int(row.prizes),
                players=int(row.players),
            )
            for row in self.db.execute(query)
        ]

    def by_block(self, since: datetime | None, until: datetime | None) -> list[ReportRow]:
        return self._rows(_money_by(tickets.c.block_id, since, until))

    def by_day(self, since: datetime | None, until: datetime | None) -> list[ReportRow]:
        return self._rows(_money_by(func.date(movements.c.created_at), since, until))

    def prizes_paid(self, block_id: int) -> dict[int, tuple[int, int]]:
        """Prize amount → (tickets paid, cents paid) of a block, from the ledger's prizes."""
        rows = self.db.execute(
            select(
                entries.c.amount_cents,
                func.count().label("count"),
                func.sum(entries.c.amount_cents).label("total"),
            )
            .select_from(
                movements.join(entries, entries.c.movement_id == movements.c.id)
                .join(
                    accounts,
                    and_(accounts.c.id == entries.c.account_id, accounts.c.kind == "player"),
                )
                .join(tickets, tickets.c.id == movements.c.ticket_id)
            )
            .where(movements.c.kind == "prize", tickets.c.block_id == block_id)
            .group_by(entries.c.amount_cents)
        )
        return {int(row[0]): (int(row[1]), int(row[2])) for row in rows}

    def progress(self, block_id: int, bucket: int) -> list[tuple[int, int, int]]:
        """(bucket, stakes, prizes paid) over the block's sold units in sale order."""
        paid = (
            select(movements.c.ticket_id, func.sum(entries.c.amount_cents).label("amount"))
            .join(entries, entries.c.movement_id == movements.c.id)
            .join(
                accounts, and_(accounts.c.id == entries.c.account_id, accounts.c.kind == "player")
            )
            .where(movements.c.kind == "prize")
            .group_by(movements.c.ticket_id)
            .subquery()
        )
        slot = (tickets.c.position // bucket).label("slot")
        rows = self.db.execute(
            select(
                slot,
                func.sum(tickets.c.stake_cents).label("stakes"),
                func.coalesce(func.sum(paid.c.amount), 0).label("prizes"),
            )
            .select_from(tickets.outerjoin(paid, paid.c.ticket_id == tickets.c.id))
            .where(tickets.c.block_id == block_id)
            .group_by(slot)
            .order_by(slot)
        )
        return [(int(row.slot), int(row.stakes), int(row.prizes)) for row in rows]
