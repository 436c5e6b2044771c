"""Reconciliation's queries: each answers the rows that break one of the ledger's rules."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, literal, or_, select

from grattage.adapters.draw_tables import block_draws
from grattage.adapters.ledger_legs import PLAYERS_AMOUNT, legs, with_player_sides
from grattage.adapters.tables import (
    accounts,
    block_prizes_sold,
    blocks,
    movements,
    tickets,
)


def _rows(result: Any) -> list[Any]:
    return [tuple(row) for row in result]


class SqlReconciliation:
    """The read-only queries reconciliation runs; each answers the rows that break a rule."""

    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def _counters_off(
        self, shown: Any, counter: Any, tally: Any, detail_key: Any, *where: Any
    ) -> list[Any]:
        """(``shown``, ``counter``, the tally) of each row of ``counter``'s table whose stored
        counter differs from ``tally`` over its detail rows (those whose ``detail_key`` is
        its id; none tallies 0), lowest ids first."""
        table = counter.table
        tallies = select(detail_key, tally.label("tally")).group_by(detail_key).subquery()
        tallied = func.coalesce(tallies.c.tally, 0)
        return _rows(
            self.db.execute(
                select(shown, counter, tallied)
                .select_from(table.outerjoin(tallies, tallies.c[detail_key.name] == table.c.id))
                .where(*where, counter != tallied)
                .order_by(table.c.id)
            )
        )

    def balances_off_ledger(self) -> list[tuple[str, int, int]]:
        every_leg = legs()
        return self._counters_off(
            accounts.c.name,
            accounts.c.balance_cents,
            func.sum(every_leg.c.amount_cents),
            every_leg.c.account_id,
            accounts.c.kind == "player",
        )

    def movements_not_transfers(self) -> list[tuple[int, int, int, int]]:
        m = movements.c
        return _rows(
            self.db.execute(
                select(m.id, m.from_account_id, m.to_account_id, m.amount_cents)
                .where(or_(m.amount_cents <= 0, m.from_account_id == m.to_account_id))
                .order_by(m.id)
            )
        )

    def negative_player_balances(self) -> list[tuple[str, int]]:
        return _rows(
            self.db.execute(
                select(accounts.c.name, accounts.c.balance_cents).where(
                    accounts.c.kind == "player", accounts.c.balance_cents < 0
                )
            )
        )

    def _movement_counts(self, kind: str) -> Any:
        return (
            select(
                movements.c.ticket_id,
                func.count(movements.c.id).label("count"),
                func.coalesce(func.sum(PLAYERS_AMOUNT), 0).label("amount"),
            )
            .select_from(with_player_sides(movements))
            .where(movements.c.kind == kind, movements.c.ticket_id.is_not(None))
            .group_by(movements.c.ticket_id)
            .subquery()
        )

    def tickets_without_one_stake(self) -> list[tuple[int, int]]:
        stakes = self._movement_counts("stake")
        count = func.coalesce(stakes.c.count, 0)
        return _rows(
            self.db.execute(
                select(tickets.c.id, count)
                .select_from(tickets.outerjoin(stakes, stakes.c.ticket_id == tickets.c.id))
                .where(count != 1)
                .order_by(tickets.c.id)
            )
        )

    def stakes_off_price(self) -> list[tuple[int, int, int]]:
        stakes = self._movement_counts("stake")
        return _rows(
            self.db.execute(
                select(tickets.c.id, tickets.c.stake_cents, -stakes.c.amount)
                .select_from(tickets.join(stakes, stakes.c.ticket_id == tickets.c.id))
                .where(stakes.c.count == 1, -stakes.c.amount != tickets.c.stake_cents)
                .order_by(tickets.c.id)
            )
        )

    def winning_tickets_without_one_prize(self) -> list[tuple[int, int, int, int]]:
        prizes = self._movement_counts("prize")
        count = func.coalesce(prizes.c.count, 0)
        amount = func.coalesce(prizes.c.amount, 0)
        return _rows(
            self.db.execute(
                select(tickets.c.id, tickets.c.prize_cents, count, amount)
                .select_from(tickets.outerjoin(prizes, prizes.c.ticket_id == tickets.c.id))
                .where(
                    tickets.c.state == "finished",
                    tickets.c.prize_cents > 0,
                    or_(count != 1, amount != tickets.c.prize_cents),
                )
                .order_by(tickets.c.id)
            )
        )

    def prizes_on_tickets_not_owed(self) -> list[tuple[int, int]]:
        prizes = self._movement_counts("prize")
        return _rows(
            self.db.execute(
                select(prizes.c.ticket_id, prizes.c.amount)
                .select_from(prizes.outerjoin(tickets, tickets.c.id == prizes.c.ticket_id))
                .where(
                    or_(
                        tickets.c.id.is_(None),
                        tickets.c.state != "finished",
                        tickets.c.prize_cents == 0,
                    )
                )
                .order_by(prizes.c.ticket_id)
            )
        )

    def blocks_off_counter(self) -> list[tuple[int, int, int]]:
        return self._counters_off(blocks.c.id, blocks.c.sold, func.count(), tickets.c.block_id)

    def units_sold_twice(self) -> list[tuple[int, int, int]]:
        return _rows(
            self.db.execute(
                select(tickets.c.block_id, tickets.c.position, func.count())
                .where(tickets.c.position.is_not(None))  # covered: no unit yet
                .group_by(tickets.c.block_id, tickets.c.position)
                .having(func.count() > 1)
            )
        )

    def units_beyond_counter(self) -> list[tuple[int, int, int]]:
        index = func.coalesce(tickets.c.sequence, tickets.c.position)
        return _rows(
            self.db.execute(
                select(tickets.c.id, tickets.c.block_id, index)
                .join(blocks, blocks.c.id == tickets.c.block_id)
                .where(or_(index >= blocks.c.sold, index < literal(0)))
            )
        )

    def draws_off_cursor(self) -> list[tuple[int, int, int]]:
        drawn = tickets.c.state != "covered"
        per_block = (
            select(
                tickets.c.block_id,
                func.count().filter(drawn).label("drawn"),
                func.max(tickets.c.sequence).filter(drawn).label("last_drawn"),
                func.min(tickets.c.sequence).filter(~drawn).label("first_waiting"),
            )
            .group_by(tickets.c.block_id)
            .subquery()
        )
        tally = func.coalesce(per_block.c.drawn, 0)
        return _rows(
            self.db.execute(
                select(block_draws.c.block_id, block_draws.c.drawn, tally)
                .select_from(
                    block_draws.outerjoin(per_block, per_block.c.block_id == block_draws.c.block_id)
                )
                .where(
                    or_(
                        tally != block_draws.c.drawn,
                        per_block.c.last_drawn >= block_draws.c.drawn,
                        per_block.c.first_waiting < block_draws.c.drawn,
                    )
                )
                .order_by(block_draws.c.block_id)
            )
        )

    def prizes_off_counters(self) -> list[tuple[int, int, int, int]]:
        # Compared here rather than by a FULL OUTER JOIN, which SQLite has only since 3.39.
        sold = {
            (int(block), int(prize)): int(count)
            for block, prize, count in self.db.execute(
                select(tickets.c.block_id, tickets.c.prize_cents, func.count())
                .where(tickets.c.prize_cents > 0)
                .group_by(tickets.c.block_id, tickets.c.prize_cents)
            )
        }
        counted = {
            (int(block), int(prize)): int(count)
            for block, prize, count in self.db.execute(
                select(
                    block_prizes_sold.c.block_id,
                    block_prizes_sold.c.prize_cents,
                    block_prizes_sold.c.sold,
                )
            )
        }
        return [
            (block, prize, counted.get((block, prize), 0), sold.get((block, prize), 0))
            for block, prize in sorted(sold.keys() | counted.keys())
            if counted.get((block, prize), 0) != sold.get((block, prize), 0)
        ]
