"""Engine commands: ``games``, ``block generate|verify``, ``ticket design|check``, ``simulate``."""

from __future__ import annotations

import json
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any, BinaryIO

import click
from rich.console import Console
from rich.table import Table

from grattage.blocks.blockfile import verify_block_file
from grattage.blocks.generation import generate_block_file, generate_tiers, sized_game
from grattage.blocks.sealing import design_unit, new_block_key, unit_salt
from grattage.entrypoints.cli.display import progress_bars
from grattage.entrypoints.cli.files import decode_utf8, lines_of, parse_json, read_prize_table
from grattage.errors import InvalidInput, InvalidTicket, UnknownGame, VerificationFailed
from grattage.games import Game, SeededRandomness, SystemRandomness, find_game, game_names
from grattage.games.money import format_euros, format_percent, format_ratio, parse_euros
from grattage.games.randomness import Randomness

console = Console()

prize_table_option = click.option(
    "--prize-table",
    "table_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="An operator's TOML prize table replacing the packaged one (docs/games.md).",
)


def game_with_table(name: str | None, table_file: Path | None) -> Game:
    """Game ``name`` with its packaged table, or with the operator's ``table_file`` (for the
    game that file names when ``name`` is ``None``)."""
    if table_file is None:
        assert name is not None
        return find_game(name)
    table = read_prize_table(name, table_file)
    return find_game(table.game, table)


def odds_text(game: Game) -> str:
    return f"1 in {format_ratio(game.table.odds())}"


@click.command("games")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per game.")
@prize_table_option
def games_command(as_json: bool, table_file: Path | None) -> None:
    """List the games (or one operator's --prize-table): title, price, block size, prize table,
    odds and payout at the table's own price."""
    games = (
        [game_with_table(None, table_file)]
        if table_file is not None
        else [find_game(name) for name in game_names()]
    )
    for game in games:
        table = game.table
        if as_json:
            click.echo(json.dumps(game_summary(game), ensure_ascii=False))
            continue
        # The figures as plain lines above the grid: a long title is never wrapped into it.
        click.echo(
            f"{table.title} ({game.name}) — {format_euros(table.price_cents)}, "
            f"blocks of {table.block_size:,}"
            + (" units or multiples" if game.allows_block_multiples else " units")
        )
        click.echo(
            f"  {table.prizes_count:,} prizes, {format_euros(table.prizes_total_cents)} — "
            f"odds {odds_text(game)}, payout {format_percent(table.payout())} %"
        )
        if table.reconstruction:
            click.echo("  ⚠ RECONSTRUCTED table: not the published one")
        grid = Table()
        grid.add_column("count", justify="right")
        grid.add_column("prize", justify="right")
        grid.add_column("total", justify="right")
        for tier in table.tiers:
            grid.add_row(
                f"{tier.count:,}",
                format_euros(tier.prize_cents),
                format_euros(tier.count * tier.prize_cents),
            )
        console.print(grid)


def game_summary(game: Game) -> dict[str, Any]:
    table = game.table
    return {
        "name": game.name,
        "title": table.title,
        "price_cents": table.price_cents,
        "block_size": table.block_size,
        "prizes": table.prizes_count,
        "prizes_total_cents": table.prizes_total_cents,
        "odds": odds_text(game),
        "payout_percent": format_percent(table.payout()),
        "reconstruction": table.reconstruction,
        "table_sha256": table.digest(),
        "prize_table": [{"prize_cents": t.prize_cents, "count": t.count} for t in table.tiers],
    }


@click.group("block")
def block_group() -> None:
    """Generate and verify block files."""


@block_group.command("generate")
@click.argument("game_name", metavar="GAME")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@prize_table_option
@click.option(
    "--blocks",
    "multiple",
    default=1,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Astro: K × 750 000.",
)
def block_generate(game_name: str, out: Path, table_file: Path | None, multiple: int) -> None:
    """Build a full-size block of GAME, shuffled by a CSPRNG, and write it to --out."""
    game = sized_game(game_with_table(game_name, table_file), multiple)
    with progress_bars(f"{game.name} block") as progress:
        header, _ = generate_block_file(game, out, progress)
    click.echo(
        f"{out}: {header.size:,} units of {game.name}, table {header.table.digest()[:16]}…, "
        f"content sha256 {header.content_sha256}"
    )


@block_group.command("verify")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def block_verify(path: Path) -> None:
    """Recount every tier of a block file against its table; exit 0 only on an exact match."""
    with progress_bars("verify") as progress:
        verified = verify_block_file(path, progress)
    table = verified.header.table
    for index, count in enumerate(verified.counts):
        label = "losing" if index == 0 else format_euros(table.prize_of_tier(index))
        click.echo(f"  tier {index:>3} {label:>12}: {count:>12,} units ✓")
    click.echo(f"{path}: {verified.header.size:,} units, every tier matches the table")


@click.group("ticket")
def ticket_group() -> None:
    """Design and check ticket documents."""


@ticket_group.command("design")
@click.argument("game_name", metavar="GAME")
@click.option("--prize", "prize", required=True, help="The prize in euros (0 for a losing ticket).")
@click.option("--sign", default=None, help="Astro: the zodiac sign the player picked.")
@click.option("--count", default=1, show_default=True, type=click.IntRange(1, 1_000_000))
@click.option("--seed", default=None, help="Hex seed, to reproduce designs (default: the OS).")
@prize_table_option
def ticket_design(
    game_name: str,
    prize: str,
    sign: str | None,
    count: int,
    seed: str | None,
    table_file: Path | None,
) -> None:
    """Print COUNT ticket documents showing PRIZE, one JSON document per line."""
    game = game_with_table(game_name, table_file)
    prize_cents = parse_euros(prize)
    if prize_cents:
        game.tier_for(prize_cents)
    game.check_choice(sign)
    rng: Randomness
    if seed is None:
        rng = SystemRandomness()
    else:
        try:
            rng = SeededRandomness(bytes.fromhex(seed))
        except ValueError:
            raise InvalidInput(f"--seed must be hexadecimal, got {seed!r}") from None
    out = sys.stdout
    for _ in range(count):
        out.write(json.dumps(game.design(prize_cents, rng, sign), ensure_ascii=False) + "\n")


@ticket_group.command("check")
@click.argument("source", type=click.File("rb"))
@prize_table_option
def ticket_check(source: BinaryIO, table_file: Path | None) -> None:
    """Validate and evaluate each ticket document (JSON lines) of SOURCE, or - for stdin."""
    custom = None if table_file is None else game_with_table(None, table_file)
    total = invalid = 0
    for number, raw in enumerate(lines_of(source), start=1):
        if not raw.strip():
            continue
        total += 1
        try:
            document = parse_json(decode_utf8(raw, "the line"), "the line")
            if not isinstance(document, dict):
                raise InvalidTicket(f"a ticket document is a JSON object, got {document!r}")
            name = document.get("game")
            if not isinstance(name, str):
                raise InvalidTicket(f"'game' must name a game, got {name!r}")
            game = custom if custom is not None and custom.name == name else find_game(name)
            game.validate(document)
            prize = game.evaluate(document)
            click.echo(f"line {number}: valid {name} ticket, prize {format_euros(prize)} ({prize})")
        except (InvalidTicket, UnknownGame, InvalidInput) as exc:
            invalid += 1
            click.echo(f"line {number}: invalid: {exc.message}")
    if total == 0:
        raise InvalidInput("no ticket document to check")
    if invalid:
        raise InvalidTicket(f"{invalid} of {total} ticket documents are invalid")
    click.echo(f"{total} ticket documents, all valid")


@click.command("simulate")
@click.argument("game_name", metavar="GAME")
@click.option("--tickets", "tickets", required=True, type=click.IntRange(1))
@click.option("--sign", default=None, help="Astro: one sign for every ticket (default: random).")
@prize_table_option
def simulate_command(
    game_name: str, tickets: int, sign: str | None, table_file: Path | None
) -> None:
    """Sell TICKETS units of a freshly generated block through design + evaluate."""
    game = game_with_table(game_name, table_file)
    table = game.table
    if tickets > table.block_size:
        raise InvalidInput(f"--tickets {tickets!r} exceeds the block size {table.block_size!r}")
    if sign is not None:
        game.check_choice(sign)
    with progress_bars(f"{game.name} simulation") as progress:
        tiers = generate_tiers(game, progress=progress)
        key = new_block_key()
        picker = SystemRandomness()
        observed: Counter[int] = Counter()
        paid = mismatches = 0
        step = max(1, tickets // 200)
        for position in range(tickets):
            tier = int(tiers[position])
            prize = table.prize_of_tier(tier)
            choice = sign or (
                game.choices[picker.below(len(game.choices))] if game.choices else None
            )
            document = design_unit(game, unit_salt(key, position), prize, choice)
            won = game.evaluate(document)
            mismatches += won != prize
            observed[tier] += 1
            paid += won
            if position % step == 0 or position == tickets - 1:
                progress("selling", position + 1, tickets)
    winners = tickets - observed[0]
    click.echo(
        f"{table.title}: {tickets:,} tickets sold from a fresh block of {table.block_size:,}"
    )
    hit = f"1 in {format_ratio(Fraction(tickets, winners))}" if winners else "no winner"
    click.echo(f"  hit rate  {hit}  (table: {odds_text(game)})")
    click.echo(
        f"  payout    {format_percent(Fraction(paid, tickets * table.price_cents))} % "
        f"(table: {format_percent(table.payout())} %)"
    )
    for index in range(len(table.tiers) + 1):
        expected = Fraction(tickets * table.counts_by_tier()[index], table.block_size)
        label = "losing" if index == 0 else format_euros(table.prize_of_tier(index))
        click.echo(
            f"  {label:>12}: {observed[index]:>10,}   expected {format_ratio(expected, 1):>12}"
        )
    if mismatches:
        raise VerificationFailed(
            f"{mismatches} tickets evaluated to another prize than their unit's"
        )
    click.echo(f"  every evaluated prize equals its unit's prize ({tickets:,} of {tickets:,})")


def register(group: click.Group) -> None:
    for command in (games_command, block_group, ticket_group, simulate_command):
        group.add_command(command)
