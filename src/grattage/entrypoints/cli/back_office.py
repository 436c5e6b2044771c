"""Back-office commands: operator create, block suspend/resume, report, audit verify.

Errors go through the group's one table of exit codes (:mod:`grattage.entrypoints.cli`)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import click

from grattage.entrypoints.cli.files import BLOCK_ID, decode_utf8, lines_of
from grattage.entrypoints.cli.platform import _platform


@click.group()
def operator() -> None:
    """Operators: the staff who use the back-office (/admin)."""


@operator.command("create")
@click.argument("email")
@click.option(
    "--password-stdin", is_flag=True, help="Read the password from standard input (one line)."
)
def operator_create(email: str, password_stdin: bool) -> None:
    """Create the operator EMAIL (the password is prompted for, or read from stdin)."""
    from grattage.service import operators

    if password_stdin:
        first = next(lines_of(sys.stdin.buffer), b"")
        password = decode_utf8(first, "the password").rstrip("\r\n")
    else:
        password = click.prompt("password", hide_input=True, confirmation_prompt=True)
    operator_id = operators.create(_platform(), email, password, actor="cli")
    click.echo(f"operator {operator_id} created: {email.strip().lower()}")


def _block_change(name: str, block_id: int) -> None:
    from grattage.service import emissions

    change = {"suspend": emissions.suspend_block, "resume": emissions.resume_block}[name]
    change(_platform(), block_id, actor="cli")


@click.command("suspend")
@click.argument("block_id", type=BLOCK_ID)
def block_suspend(block_id: int) -> None:
    """Stop selling BLOCK_ID until it is resumed."""
    _block_change("suspend", block_id)
    click.echo(f"block {block_id} suspended")


@click.command("resume")
@click.argument("block_id", type=BLOCK_ID)
def block_resume(block_id: int) -> None:
    """Put suspended BLOCK_ID back on sale."""
    _block_change("resume", block_id)
    click.echo(f"block {block_id} open")


@click.command()
@click.argument("kind", type=click.Choice(["blocks", "days"]))
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True
)
@click.option("--from", "since", default=None, help="First day (YYYY-MM-DD, UTC).")
@click.option("--to", "until", default=None, help="Last day (YYYY-MM-DD, UTC), included.")
def report(kind: str, fmt: str, since: str | None, until: str | None) -> None:
    """Sales per block or per day: units sold, stakes, prizes, GGR, players (cents)."""
    from grattage.service import back_office

    first = back_office.parse_day(since, "--from")
    last = back_office.parse_day(until, "--to")
    rows = back_office.report(_platform(), kind, first, last)  # type: ignore[arg-type]
    if fmt == "csv":
        click.echo(back_office.to_csv(kind, rows), nl=False)  # type: ignore[arg-type]
    else:
        shown = [asdict(row) for row in rows]  # a day is a date: default=str writes its ISO form
        click.echo(json.dumps({"report": kind, "rows": shown}, indent=2, default=str))


@click.group()
def audit() -> None:
    """The audit log of operator actions and block state changes."""


@audit.command("verify")
def audit_verify() -> None:
    """Check the log's hash chain: exit 0 if intact, 1 naming the first bad entry."""
    from grattage.service import audit_trail

    result = audit_trail.verify(_platform())
    if result.clean:
        click.echo(f"audit log: {result.entries} entries, chain intact")
        return
    click.echo(f"audit log: entry {result.first_bad} is bad: {result.problem}", err=True)
    raise SystemExit(1)


@audit.command("show")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
def audit_show(limit: int) -> None:
    """The latest entries, newest first (JSON lines)."""
    from grattage.service import audit_trail

    for entry in audit_trail.latest(_platform(), limit):
        click.echo(json.dumps(asdict(entry), ensure_ascii=False))


def register(group: click.Group) -> None:
    group.add_command(operator)
    group.add_command(report)
    group.add_command(audit)
    existing = group.commands.get("block")
    if isinstance(existing, click.Group):
        existing.add_command(block_suspend)
        existing.add_command(block_resume)
