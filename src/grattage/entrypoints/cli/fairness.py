"""Fairness commands: ``verify-ticket PROOF.json`` and ``verify-block DISCLOSURE``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from grattage.blocks.proofs import verify_disclosure, verify_ticket_proof
from grattage.entrypoints.cli.files import parse_json, read_text
from grattage.games.money import format_euros


def _read_json(path: Path) -> Any:
    return parse_json(read_text(path), repr(str(path)))


@click.command("verify-ticket")
@click.argument("proof_file", metavar="PROOF.json", type=click.Path(dir_okay=False, path_type=Path))
def verify_ticket_command(proof_file: Path) -> None:
    """Check a ticket's proof offline: its unit is in the committed block, its design re-derives."""
    verified = verify_ticket_proof(_read_json(proof_file))
    block = verified.block
    click.echo(
        f"{proof_file}: valid — unit {verified.position:,} of {block.size:,} in block "
        f"{block.block_id.hex()} (root {block.root.hex()[:16]}…), prize "
        f"{format_euros(verified.prize_cents)}; the ticket shown is the committed design"
    )


@click.command("verify-block")
@click.argument(
    "disclosure_file", metavar="DISCLOSURE", type=click.Path(dir_okay=False, path_type=Path)
)
def verify_block_command(disclosure_file: Path) -> None:
    """Rebuild a disclosed block's tree from its key, check the root and recount every tier."""
    verified = verify_disclosure(_read_json(disclosure_file))
    table = verified.block.table
    for index, count in enumerate(verified.counts):
        label = "losing" if index == 0 else format_euros(table.prize_of_tier(index))
        click.echo(f"  tier {index:>3} {label:>12}: {count:>12,} units ✓")
    click.echo(
        f"{disclosure_file}: valid — {verified.block.size:,} units rebuild the committed root "
        f"{verified.block.root.hex()} and recount exactly to the prize table"
    )


def register(group: click.Group) -> None:
    group.add_command(verify_ticket_command)
    group.add_command(verify_block_command)
