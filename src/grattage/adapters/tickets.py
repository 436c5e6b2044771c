"""Sold tickets: stored, revealed, finished, and the overdue ones found."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select, update
from sqlalchemy.exc import IntegrityError

from grattage.adapters.db_time import to_db_time
from grattage.adapters.driver_sql import INSERT_TICKET, due_tickets
from grattage.adapters.rows import record_of
from grattage.adapters.tables import tickets
from grattage.errors import Inconsistent
from grattage.service.model import FinishedBy, NewTicket, Overdue, Ticket


def _ticket(row: Any) -> Ticket:
    return record_of(Ticket, row)


def names_the_sale_index(error: IntegrityError) -> bool:
    """PostgreSQL names the constraint; SQLite names its columns."""
    text = str(error.orig)
    return "one_sale_per_index" in text or "tickets.block_id, tickets.sequence" in text


def sale_index_taken(block_id: int, sequence: int | None) -> Inconsistent:
    """The block row, locked by this sale, gave an index a stored ticket already has: its
    count was set back (the outsider's ``UPDATE blocks SET sold = …``). Selling on would fork
    the receipt chain; the transaction rolls back, nothing is debited."""
    return Inconsistent(
        f"block row {block_id} says sale {sequence} is next, and a ticket already has that "
        "index: the database is inconsistent, no sale of this block until an operator "
        "repairs it"
    )


class SqlTickets:
    def __init__(self, connection: Connection) -> None:
        self.db = connection

    def add(self, ticket: NewTicket) -> int:
        dialect = self.db.dialect
        values = dict(ticket.__dict__)
        values["created_at"] = to_db_time(ticket.created_at, dialect)
        values["last_action_at"] = to_db_time(ticket.last_action_at, dialect)
        if ticket.finished_at is not None:
            values["finished_at"] = to_db_time(ticket.finished_at, dialect)
        try:
            return int(INSERT_TICKET(self.db, values).scalar_one())
        except IntegrityError as error:
            if ticket.sequence is None or not names_the_sale_index(error):
                raise  # any other broken constraint is a bug: a 500 with its traceback
            raise sale_index_taken(ticket.block_id, ticket.sequence) from error

    def get(self, ticket_id: int, for_update: bool = False) -> Ticket | None:
        query = select(tickets).where(tickets.c.id == ticket_id)
        if for_update:
            query = query.with_for_update()
        row = self.db.execute(query).first()
        return None if row is None else _ticket(row)

    def still_covered(self, ticket_id: int, player_id: int) -> bool:
        """Whether the player's ticket waits for its draw: one read by primary key, what a
        long poll asks 50 times a second (the whole ticket and its receipt are read once)."""
        row = self.db.execute(
            select(tickets.c.state).where(
                tickets.c.id == ticket_id, tickets.c.player_id == player_id
            )
        ).first()
        return row is not None and row[0] == "covered"

    def set_revealed(self, ticket_id: int, revealed: bytes, now: datetime) -> None:
        self.db.execute(
            update(tickets)
            .where(tickets.c.id == ticket_id)
            .values(revealed=revealed, last_action_at=now)
        )

    def finish(
        self, ticket_id: int, revealed: bytes, now: datetime, finished_by: FinishedBy
    ) -> bool:
        done = self.db.execute(
            update(tickets)
            .where(tickets.c.id == ticket_id, tickets.c.state == "playing")
            .values(
                state="finished",
                revealed=revealed,
                finished_at=now,
                finished_by=finished_by,
                last_action_at=now,
            )
            .returning(tickets.c.id)
        ).first()
        return done is not None

    def note_activity(
        self,
        ticket_id: int,
        player_id: int,
        now: datetime,
        overdue_cutoff: datetime,
        throttle_cutoff: datetime,
    ) -> bool:
        # One conditional update: on PostgreSQL it waits for a finishing transaction holding
        # the row and then reads the row it committed, so a finished ticket is never touched.
        moved = self.db.execute(
            update(tickets)
            .where(
                tickets.c.id == ticket_id,
                tickets.c.player_id == player_id,
                tickets.c.state == "playing",
                tickets.c.last_action_at > overdue_cutoff,
                tickets.c.last_action_at <= throttle_cutoff,
            )
            .values(last_action_at=now)
            .returning(tickets.c.id)
        ).first()
        return moved is not None

    def set_balance_after(self, ticket_id: int, balance_after_cents: int) -> None:
        self.db.execute(
            update(tickets)
            .where(tickets.c.id == ticket_id)
            .values(balance_after_cents=balance_after_cents)
        )

    def due(self, overdue: Overdue, player_id: int | None = None, limit: int = 500) -> list[int]:
        """On the driver: a purchase asks it for its buyer every time."""
        games = overdue.inactivity_games
        parameters: dict[str, Any] = {
            "abandon_cutoff": to_db_time(overdue.abandon_cutoff, self.db.dialect),
            "inactivity_cutoff": to_db_time(overdue.inactivity_cutoff, self.db.dialect),
            "limit": limit,
            **{f"game{index}": game for index, game in enumerate(games)},
        }
        if player_id is not None:
            parameters["player_id"] = player_id
        statement = due_tickets(len(games), of_one_player=player_id is not None)
        return [int(ticket_id) for ticket_id in statement(self.db, parameters).scalars()]

    def history(self, player_id: int, limit: int, before: int | None) -> list[Ticket]:
        query = (
            select(tickets)
            .where(tickets.c.player_id == player_id)
            .order_by(tickets.c.id.desc())
            .limit(limit)
        )
        if before is not None:
            query = query.where(tickets.c.id < before)
        return [_ticket(row) for row in self.db.execute(query)]

    def ticket_at(self, block_id: int, sequence: int) -> int | None:
        """The ticket of a block's sale ``sequence`` (its index n), if sold."""
        found = self.db.execute(
            select(tickets.c.id).where(
                tickets.c.block_id == block_id, tickets.c.sequence == sequence
            )
        ).scalar()
        return None if found is None else int(found)

    def last(self, player_id: int) -> Ticket | None:
        found = self.history(player_id, 1, None)
        return found[0] if found else None
