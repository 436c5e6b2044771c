"""Reconciliation: prove the books from the database alone.

Each check lists every row that breaks it; the books are clean only when every list is empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grattage.service.context import Platform


@dataclass(frozen=True)
class Reconciliation:
    """The checks run (in words) and one line per row that breaks one (figures in cents)."""

    checks: list[str] = field(default_factory=list)
    discrepancies: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.discrepancies


def reconcile(platform: Platform) -> Reconciliation:
    report = Reconciliation()
    found = report.discrepancies
    with platform.uow.read() as repos:
        audit = repos.reconciliation
        report.checks.append("each player's balance equals the sum of its ledger entries")
        for name, stored, total in audit.balances_off_ledger():
            found.append(f"account {name}: balance {stored} cents but its entries sum to {total}")
        report.checks.append("no player's balance is negative")
        for name, stored in audit.negative_player_balances():
            found.append(f"account {name}: negative balance {stored} cents")
        report.checks.append("all entries sum to zero")
        total = audit.entries_total()
        if total != 0:
            found.append(f"the ledger's entries sum to {total} cents, not 0")
        report.checks.append("every movement is balanced")
        for movement_id, amount in audit.unbalanced_movements():
            found.append(f"movement {movement_id}: its entries sum to {amount} cents, not 0")
        report.checks.append("each ticket has exactly one stake entry, of its stake")
        for ticket_id, count in audit.tickets_without_one_stake():
            found.append(f"ticket {ticket_id}: {count} stake movements, not 1")
        for ticket_id, stake, paid in audit.stakes_off_price():
            found.append(f"ticket {ticket_id}: stake {stake} cents but {paid} cents debited")
        report.checks.append("each finished winning ticket has one prize entry, of its prize")
        for ticket_id, prize, count, paid in audit.winning_tickets_without_one_prize():
            found.append(
                f"ticket {ticket_id}: won {prize} cents but has {count} prize movements "
                f"crediting {paid} cents"
            )
        for ticket_id, paid in audit.prizes_on_tickets_not_owed():
            found.append(f"ticket {ticket_id}: {paid} cents of prize credited but none is owed")
        report.checks.append("units sold equal the block counters; no unit is sold twice")
        for block_id, counter, sold in audit.blocks_off_counter():
            found.append(f"block {block_id}: counter says {counter} sold, {sold} tickets exist")
        for block_id, position, count in audit.units_sold_twice():
            found.append(f"block {block_id} unit {position}: sold {count} times")
        for ticket_id, block_id, position in audit.units_beyond_counter():
            found.append(
                f"ticket {ticket_id}: unit {position} of block {block_id} is beyond its counter"
            )
    return report
