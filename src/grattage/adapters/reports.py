"""Sales reports from the ledger: by block, by day, prizes paid, a block's progress."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, case, func, select

from grattage.adapters.ledger_legs import ON_A_PLAYER, PLAYERS_AMOUNT, with_player_sides
from grattage.adapters.tables import movements, tickets
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
            func.coalesce(func.sum(case((is_stake, -PLAYERS_AMOUNT), else_=0)), 0).label("stakes"),
            func.coalesce(func.sum(case((is_prize, PLAYERS_AMOUNT), else_=0)), 0).label("prizes"),
            func.count(func.distinct(case((is_stake, movements.c.player_id)))).label("players"),
        )
        .select_from(
            with_player_sides(movements.join(tickets, tickets.c.id == movements.c.ticket_id))
        )
        .where(movements.c.kind.in_(("stake", "prize")), ON_A_PLAYER)
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
                PLAYERS_AMOUNT.label("amount"),
                func.count().label("count"),
                func.sum(PLAYERS_AMOUNT).label("total"),
            )
            .select_from(
                with_player_sides(movements.join(tickets, tickets.c.id == movements.c.ticket_id))
            )
            .where(movements.c.kind == "prize", tickets.c.block_id == block_id, ON_A_PLAYER)
            .group_by(PLAYERS_AMOUNT)
        )
        return {int(row[0]): (int(row[1]), int(row[2])) for row in rows}

    def progress(self, block_id: int, bucket: int) -> list[tuple[int, int, int]]:
        """(bucket, stakes, prizes paid) over the block's sales in sale order: by the sale's
        index (a drawn block's units are drawn, so their positions are in no order)."""
        paid = (
            select(movements.c.ticket_id, func.sum(PLAYERS_AMOUNT).label("amount"))
            .select_from(with_player_sides(movements))
            .where(movements.c.kind == "prize", ON_A_PLAYER)
            .group_by(movements.c.ticket_id)
            .subquery()
        )
        slot = (tickets.c.sequence // bucket).label("slot")
        rows = self.db.execute(
            select(
                slot,
                func.sum(tickets.c.stake_cents).label("stakes"),
                func.coalesce(func.sum(paid.c.amount), 0).label("prizes"),
            )
            .select_from(tickets.outerjoin(paid, paid.c.ticket_id == tickets.c.id))
            .where(tickets.c.block_id == block_id, tickets.c.sequence.is_not(None))
            .group_by(slot)
            .order_by(slot)
        )
        return [(int(row.slot), int(row.stakes), int(row.prizes)) for row in rows]
