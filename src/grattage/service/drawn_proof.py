"""The ``draw`` member of a drawn ticket's proof (docs/fairness.md, "A drawn ticket's proof"):
the log entries its checker needs — the sale's ``sale.drawn``, the block's previous receipt,
the draws that last set slots n and j — with their inclusion paths in the proof's head, and the
witness's signed chain, round and a cosigned head covering the receipt, with the consistency
proof from that head to the proof's. :mod:`grattage.blocks.proof_draw` checks it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from grattage.blocks.signing import TreeHead
from grattage.errors import Conflict, Unavailable
from grattage.service import transparency
from grattage.service.context import Platform
from grattage.service.model import LogEntryRow, Ticket
from grattage.service.ports import Repositories

ROUND_SEARCH_PAGE = 500
ROUND_SEARCH_PAGES = 200
"""How far back the round's entry is looked for before the draw (it comes right before the
round's first draws): 100 000 entries, then the witness is asked."""

Logged = Callable[[int, str], dict[str, Any]]


def _entry_of_sale(repos: Repositories, block_id: int, sequence: int, kind: str) -> LogEntryRow:
    ticket_id = repos.tickets.ticket_at(block_id, sequence)
    rows = [] if ticket_id is None else repos.log.entries_of_ticket(ticket_id)
    found = [row for row in rows if row.kind == kind]
    if not found:
        raise Conflict(f"sale {sequence} of block {block_id} has no {kind} entry in the log")
    return found[0]


def _round_entry(
    repos: Repositories, before: int, chain_id: str, number: int
) -> dict[str, Any] | None:
    end = before - 1
    for _ in range(ROUND_SEARCH_PAGES):
        if end < 0:
            return None
        start = max(0, end - ROUND_SEARCH_PAGE + 1)
        for row in reversed(repos.log.entries(start, end)):
            if row.kind == "draw.round":
                entry = json.loads(row.body)
                if (entry["round"]["chain_id"], entry["round"]["round"]) == (chain_id, number):
                    return dict(entry)
        end = start - 1
    return None


def draw_part(
    platform: Platform,
    ticket: Ticket,
    receipt_entry: LogEntryRow,
    head: TreeHead,
    logged: Logged,
) -> dict[str, Any] | None:
    """The proof's ``draw`` for a drawn block's ticket; None for a ticket of a block that is
    not drawn (its receipt is of version 1)."""
    receipt = json.loads(receipt_entry.body)["receipt"]
    if receipt.get("format") != "grattage-receipt/2":
        return None
    n = receipt["sequence"]
    with platform.uow.read() as repos:
        rows = [r for r in repos.log.entries_of_ticket(ticket.id) if r.kind == "sale.drawn"]
        if not rows or rows[0].index >= head.tree_size:
            raise Conflict(
                f"the head of size {head.tree_size} does not hold ticket {ticket.id}'s draw"
            )
        drawn_row = rows[0]
        drawn = json.loads(drawn_row.body)
        previous = None if n == 0 else _entry_of_sale(repos, ticket.block_id, n - 1, "sale.receipt")
        setters: dict[str, LogEntryRow | None] = {}
        for member, sequence in (
            ("n_set_entry", drawn["n_set_by"]),
            ("j_set_entry", drawn["j_set_by"]),
        ):
            if sequence is None or (member == "j_set_entry" and drawn["slot"] == n):
                setters[member] = None
            else:
                setters[member] = _entry_of_sale(repos, ticket.block_id, sequence, "sale.drawn")
        chain_id, number = drawn["beacon"]["chain_id"], drawn["beacon"]["round"]
        logged_round = _round_entry(repos, drawn_row.index, chain_id, number)
    witness = platform.witness
    if witness is None:
        raise Unavailable("the witness is not configured: a drawn ticket's proof needs its chain")
    if logged_round is None:
        round_document, _ = witness.round_document(number, chain_id)
        cosigned = witness.cosigned(number, chain_id)
    else:
        round_document, cosigned = logged_round["round"], logged_round["cosigned"]
    covering = [p for p in cosigned if int(p["sth"]["tree_size"]) > receipt_entry.index]
    if not covering:
        raise Conflict(f"no head cosigned for round {number} covers ticket {ticket.id}'s receipt")
    pair = covering[0]
    size = int(pair["sth"]["tree_size"])
    consistency = (
        []
        if size == head.tree_size
        else transparency.consistency(platform, size, head.tree_size)["proof"]
    )
    return {
        "drawn_entry": logged(drawn_row.index, drawn_row.body),
        "previous_entry": None if previous is None else logged(previous.index, previous.body),
        **{
            member: None if row is None else logged(row.index, row.body)
            for member, row in setters.items()
        },
        "chain": witness.chain_document(chain_id),
        "round": round_document,
        "cosigned": pair,
        "consistency": consistency,
    }
