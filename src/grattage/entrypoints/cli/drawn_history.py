"""What one drawn ticket's proof, or a drawn block's draws alone, cannot show, checked from
the operator's log (docs/fairness.md, "A drawn ticket's proof"; docs/draw.md): that no other
sale got a ticket's unit (``verify-ticket --log URL --replay``), and whether a late draw was
forced (``verify-block --log URL --witness URL``, with the monitor's own check). Standard
library, click and ``cryptography`` only, as every verifying command."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from grattage.adapters.witness_client import WitnessClient
from grattage.blocks.draw_audit import DrawAudit
from grattage.blocks.proof_draw import DrawnSale, check_block_draws
from grattage.blocks.signing import TreeHead, canonical_json
from grattage.blocks.tlog import Frontier, entry_leaf_hash
from grattage.entrypoints.cli.monitor import PAGE, LogClient
from grattage.errors import VerificationFailed

LATE_LISTED = 20
"""Late draws listed one a line by ``verify-block --log``; the rest are counted."""


def unit_not_checked_line(drawn: DrawnSale) -> str:
    """What one proof cannot show (docs/fairness.md, "A drawn ticket's proof")."""
    return (
        f"NOT CHECKED: that no other sale got unit {drawn.unit:,} — one proof cannot show it; "
        "the monitor checks it as the draws come, verify-block once the block is disclosed, "
        "and verify-ticket --log URL --replay here"
    )


def replay_to_head(
    client: LogClient, head: TreeHead, commitment: Mapping[str, Any], drawn: DrawnSale
) -> str:
    """``verify-ticket --log URL --replay``: every entry of the log up to the proof's head
    (their tree must be that head's: none left out, none added), the block's ``sale.drawn``
    among them replayed as ``verify-block`` replays the swaps — naming the first unit sold
    twice."""
    frontier, drawn_entries = Frontier(), []
    block_id, size = commitment["block_id"], int(commitment["size"])
    while frontier.size < head.tree_size:
        start = frontier.size
        page = client.entries(start, min(head.tree_size, start + PAGE) - 1)
        if not page:
            raise VerificationFailed(f"the log serves no entry {start} below the proof's head")
        for index, entry in page:
            if index != frontier.size or index >= head.tree_size:
                raise VerificationFailed(
                    f"the log served entry {index} where entry {frontier.size} was next"
                )
            try:
                encoded = canonical_json(entry)
            except (TypeError, ValueError) as exc:
                raise VerificationFailed(f"entry {index}: not canonical JSON: {exc}") from None
            frontier.append(entry_leaf_hash(encoded))
            if (
                isinstance(entry, dict)
                and entry.get("kind") == "sale.drawn"
                and entry.get("block_id") == block_id
            ):
                drawn_entries.append(entry)
    if frontier.root() != head.root_hash:
        raise VerificationFailed(
            f"the {head.tree_size:,} entries the log serves are not those of the proof's head"
        )
    count = check_block_draws(size, drawn_entries)
    return (
        f"unit {drawn.unit:,} sold once: the log's {head.tree_size:,} entries up to the proof's "
        f"head read (their root is its root), the block's {count:,} draws in it replayed — the "
        "swaps of their logged slots give no unit twice (those slots re-derived from their "
        "rounds: the monitor and verify-block)"
    )


def late_draws(audit: DrawAudit, commitment: Mapping[str, Any], witness_url: str | None) -> str:
    """``verify-block --log``: the block's late draws (the log audited as a monitor does), and,
    with ``--witness``, each checked as ``monitor --witness`` checks it (the same code): no
    head the witness cosigned for an earlier round covered its receipt. What to say."""
    block_id = commitment["block_id"]
    mine = [late for late in audit.late if late[0] == block_id]
    for _, n, index, _, number, _, late_round in mine[:LATE_LISTED]:
        click.echo(
            f"  late: sale {n:,} (receipt at entry {index:,}) names round {number}, drawn with "
            f"round {late_round}"
        )
    if len(mine) > LATE_LISTED:
        click.echo(f"  late: … and {len(mine) - LATE_LISTED:,} more")
    if not mine:
        return "no late draw; "
    if witness_url is None:
        return (
            f"{len(mine):,} late draws NOT CHECKED against the witness (give --witness URL: "
            "only it can tell that no earlier round covered them); "
        )
    client = WitnessClient(witness_url, bytes.fromhex(commitment["witness_key"]))
    audit.late = mine
    checked = audit.check_late_draws(client.cosigned, client.chain)
    return f"{checked:,} late draws checked against the witness: no earlier round covered them; "


def late_ticket(drawn: DrawnSale, commitment: Mapping[str, Any], witness_url: str) -> str:
    """``verify-ticket --witness``: a late ticket's draw checked as ``monitor --witness`` checks
    a late draw (the same code): no head the witness cosigned for a round from the receipt's to
    the one before the draw's covered its receipt — else the sale had to be drawn with that
    round, and this one was drawn a second time. What to say."""
    if not drawn.late:
        return "drawn with the round its receipt names: no witness check needed"
    client = WitnessClient(witness_url, bytes.fromhex(commitment["witness_key"]))
    audit = DrawAudit()
    audit.late = [
        (
            commitment["block_id"],
            drawn.n,
            drawn.receipt_index,
            drawn.receipt_chain_id,
            drawn.receipt_round,
            drawn.chain_id,
            drawn.round,
        )
    ]
    audit.check_late_draws(client.cosigned, client.chain)
    return (
        f"LATE draw checked against the witness at {witness_url}: no head it cosigned for round "
        f"{drawn.receipt_round} up to the round before {drawn.round} covered the receipt, so "
        "the lateness was forced"
    )
