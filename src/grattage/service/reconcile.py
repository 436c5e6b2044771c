"""Reconciliation: prove the books from the database alone.

Each check lists every row that breaks it; the books are clean only when every list is empty.
The answer is data — which check, which rule, the ids and the exact figures in cents — and the
entry points word it (``grattage reconcile`` prints one line per discrepancy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

from grattage.service.context import Platform
from grattage.service.ports import ReconciliationQueries

Check = Literal[
    "balances",
    "no_negative_balance",
    "movements_are_transfers",
    "one_stake_per_ticket",
    "one_prize_per_winning_ticket",
    "units_sold_once",
    "sales_drawn_in_order",
    "prizes_sold_counted",
]
Rule = Literal[
    "balance_off_ledger",
    "negative_balance",
    "movement_not_a_transfer",
    "not_one_stake",
    "stake_off_price",
    "prize_not_paid_once",
    "prize_not_owed",
    "counter_off_tickets",
    "unit_sold_twice",
    "unit_beyond_counter",
    "draws_off_cursor",
    "prize_counter_off_tickets",
]

CHECKS: tuple[Check, ...] = get_args(Check)
"""Every check, in the order they run."""


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """One row that breaks a rule: the rule and its exact facts (ids, cents, counts)."""

    rule: Rule
    facts: dict[str, int | str]


@dataclass(frozen=True)
class Reconciliation:
    checks: tuple[Check, ...] = CHECKS
    discrepancies: list[Discrepancy] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.discrepancies


def reconcile(platform: Platform) -> Reconciliation:
    report = Reconciliation()

    def found(rule: Rule, **facts: int | str) -> None:
        report.discrepancies.append(Discrepancy(rule, facts))

    with platform.uow.read() as repos:
        books = repos.reconciliation
        for name, stored, total in books.balances_off_ledger():
            found("balance_off_ledger", account=name, balance_cents=stored, entries_cents=total)
        for name, stored in books.negative_player_balances():
            found("negative_balance", account=name, balance_cents=stored)
        # A movement is one row naming both its legs (migration 0017): they balance by their
        # form, so what is left to check of a movement alone is that form.
        for movement_id, taken_from, given_to, amount in books.movements_not_transfers():
            found(
                "movement_not_a_transfer",
                movement=movement_id,
                from_account=taken_from,
                to_account=given_to,
                amount_cents=amount,
            )
        for ticket_id, count in books.tickets_without_one_stake():
            found("not_one_stake", ticket=ticket_id, stake_movements=count)
        for ticket_id, stake, paid in books.stakes_off_price():
            found("stake_off_price", ticket=ticket_id, stake_cents=stake, debited_cents=paid)
        for ticket_id, prize, count, paid in books.winning_tickets_without_one_prize():
            found(
                "prize_not_paid_once",
                ticket=ticket_id,
                prize_cents=prize,
                prize_movements=count,
                credited_cents=paid,
            )
        for ticket_id, paid in books.prizes_on_tickets_not_owed():
            found("prize_not_owed", ticket=ticket_id, credited_cents=paid)
        _units(books, found)
    return report


def _units(books: ReconciliationQueries, found: Callable[..., None]) -> None:
    """The blocks' counters, units, draws and prizes against their tickets."""
    for block_id, counter, sold in books.blocks_off_counter():
        found("counter_off_tickets", block=block_id, counter=counter, tickets=sold)
    for block_id, position, count in books.units_sold_twice():
        found("unit_sold_twice", block=block_id, position=position, times=count)
    for ticket_id, block_id, position in books.units_beyond_counter():
        found("unit_beyond_counter", ticket=ticket_id, block=block_id, position=position)
    for block_id, cursor, drawn in books.draws_off_cursor():
        found("draws_off_cursor", block=block_id, cursor=cursor, drawn=drawn)
    for block_id, prize, counter, sold in books.prizes_off_counters():
        found(
            "prize_counter_off_tickets",
            block=block_id,
            prize_cents=prize,
            counter=counter,
            tickets=sold,
        )
