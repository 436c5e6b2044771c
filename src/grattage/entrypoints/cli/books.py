"""How ``grattage reconcile`` words the checks and each discrepancy the service finds."""

from __future__ import annotations

from grattage.service.reconcile import Check, Discrepancy, Rule

CHECK_TEXT: dict[Check, str] = {
    "balances": "each player's balance equals the sum of its legs in the ledger",
    "no_negative_balance": "no player's balance is negative",
    "movements_are_transfers": (
        "every movement takes a positive amount from one account and adds it to another, "
        "so its two legs balance"
    ),
    "one_stake_per_ticket": "each ticket has exactly one stake movement, of its stake",
    "one_prize_per_winning_ticket": (
        "each finished winning ticket has one prize movement, of its prize"
    ),
    "units_sold_once": "units sold equal the block counters; no unit is sold twice",
    "sales_drawn_in_order": (
        "each drawn block's sales are drawn in index order: exactly the first ones, as its "
        "cursor says"
    ),
    "prizes_sold_counted": "each block's count of every prize sold equals its tickets",
}

RULE_TEXT: dict[Rule, str] = {
    "balance_off_ledger": (
        "account {account}: balance {balance_cents} cents but its legs sum to {entries_cents}"
    ),
    "negative_balance": "account {account}: negative balance {balance_cents} cents",
    "movement_not_a_transfer": (
        "movement {movement}: {amount_cents} cents from account {from_account} to account "
        "{to_account}, not a positive amount between two accounts"
    ),
    "not_one_stake": "ticket {ticket}: {stake_movements} stake movements, not 1",
    "stake_off_price": (
        "ticket {ticket}: stake {stake_cents} cents but {debited_cents} cents debited"
    ),
    "prize_not_paid_once": (
        "ticket {ticket}: won {prize_cents} cents but has {prize_movements} prize movements "
        "crediting {credited_cents} cents"
    ),
    "prize_not_owed": "ticket {ticket}: {credited_cents} cents of prize credited but none is owed",
    "counter_off_tickets": "block {block}: counter says {counter} sold, {tickets} tickets exist",
    "unit_sold_twice": "block {block} unit {position}: sold {times} times",
    "unit_beyond_counter": (
        "ticket {ticket}: sale {position} of block {block} is beyond its counter"
    ),
    "draws_off_cursor": (
        "block {block}: its draw cursor says {cursor} sales drawn, {drawn} tickets are drawn "
        "(or not the first ones)"
    ),
    "prize_counter_off_tickets": (
        "block {block}: counted {counter} prizes of {prize_cents} cents sold, "
        "{tickets} tickets won it"
    ),
}


def describe(discrepancy: Discrepancy) -> str:
    return RULE_TEXT[discrepancy.rule].format(**discrepancy.facts)
