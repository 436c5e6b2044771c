"""Sales reports from the ledger: by block, by day, prizes paid, a block's progress."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, case, func, select

from grattage.adapters.tables import accounts, entries, movements, tickets
from grattage.service.model import ReportRow


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
