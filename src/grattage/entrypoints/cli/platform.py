"""Platform commands: migrate, emission create, block list/open/close, serve, sweep, reconcile,
demo. Errors go through the group's one table of exit codes (:mod:`grattage.entrypoints.cli`)."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import click

from grattage.entrypoints.cli.files import BLOCK_ID, read_prize_table
from grattage.settings import Settings

if TYPE_CHECKING:
    from grattage.games import PrizeTable
    from grattage.service.context import Platform

DEMO_EMAIL = "demo@grattage.test"
DEMO_PASSWORD = "grattage-demo"  # a public demo account, printed on purpose
DEMO_DEPOSIT_CENTS = 10_000
DEMO_BLOCKS = {"cash": 1, "astro": 1}


def _platform(settings: Settings | None = None, create: bool = False) -> Platform:
    """The platform on the configured database, its schema upgraded if it is behind. Only
    ``migrate`` and ``demo`` pass ``create``: for every other command a database that does not
    exist or was never migrated is an error (exit 2), not an empty one made on the spot."""
    from grattage.entrypoints.bootstrap import build_platform

    return build_platform(settings or Settings.from_environment(), create_database=create)


def _create_with_progress(
    platform: Platform, game: str, blocks: int, table: PrizeTable | None = None
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from grattage.service.emissions import create_emission

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ) as bar:
        task = bar.add_task(f"{game}: preparing", total=None)

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=f"{game} {step}", completed=done, total=total)

        created = create_emission(
            platform, game, blocks, table=table, progress=progress, actor="cli"
        )
    opened = ", ".join(map(str, created.opened)) or "none (a block was already open)"
    click.echo(
        f"emission {created.emission_id} of {game}: blocks "
        f"{', '.join(map(str, created.block_ids))}; opened: {opened}"
    )


@click.command()
def migrate() -> None:
    """Create or upgrade the database schema (GRATTAGE_DATABASE_URL)."""
    _platform(create=True)
    click.echo("database is up to date")


@click.group()
def emission() -> None:
    """Emissions: runs of a game, split into blocks."""


@emission.command("create")
@click.argument("game")
@click.option("--blocks", "count", type=click.IntRange(1, 1000), default=1, show_default=True)
@click.option("--prize-table", "table_file", type=click.Path(path_type=Path), default=None)
def emission_create(game: str, count: int, table_file: Path | None) -> None:
    """Create COUNT blocks of GAME (its packaged prize table, or FILE)."""
    from grattage.games import find_game

    find_game(game)
    table = None if table_file is None else read_prize_table(game, table_file)
    _create_with_progress(_platform(), game, count, table)


@click.group()
def block() -> None:
    """Blocks: list them, open a pending one, close one."""


@block.command("list")
@click.option("--game", default=None)
def block_list(game: str | None) -> None:
    from grattage.service.emissions import list_blocks

    for found in list_blocks(_platform(), game):
        click.echo(
            f"{found.id:>5} {found.game:<6} {found.state:<9} {found.sold:>10} / {found.size} sold"
        )


@block.command("close")
@click.argument("block_id", type=BLOCK_ID)
def block_close(block_id: int) -> None:
    """Withdraw BLOCK_ID from sale (the next pending block opens if none is left)."""
    from grattage.service.emissions import close_block

    close_block(_platform(), block_id, actor="cli")
    click.echo(f"block {block_id} closed")


@block.command("open")
@click.argument("block_id", type=BLOCK_ID)
def block_open(block_id: int) -> None:
    """Put pending BLOCK_ID on sale alongside the open ones."""
    from grattage.service.emissions import open_block

    open_block(_platform(), block_id, actor="cli")
    click.echo(f"block {block_id} open")


@block.command("commitment")
@click.argument("block_id", type=BLOCK_ID)
def block_commitment(block_id: int) -> None:
    """Print BLOCK_ID's public commitment (JSON), as GET /api/blocks/ID/commitment serves it."""
    import json

    from grattage.service.fairness import commitment

    click.echo(json.dumps(commitment(_platform(), block_id), indent=2, ensure_ascii=False))


@block.command("disclose")
@click.argument("block_id", type=BLOCK_ID)
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path))
def block_disclose(block_id: int, out: Path) -> None:
    """Write an exhausted or closed block's disclosure (key and tiers) to --out."""
    import json

    from grattage.service.fairness import disclosure

    document = disclosure(_platform(), block_id)
    out.write_text(json.dumps(document), "utf-8")
    click.echo(f"{out}: disclosure of block {block_id}; check it with grattage verify-block {out}")


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
def serve(host: str, port: int, workers: int) -> None:
    """Serve the API and the pages (upgrades the existing database first, then finishes what
    was left; a database that does not exist is refused: run `grattage migrate`)."""
    _serve(host, port, workers)


@click.command()
def sweep() -> None:
    """Finish every ticket left unattended past its delay, crediting its prize once; publish
    the disclosures of ended blocks; merge the log's queue into its tree."""
    from grattage.entrypoints.disclosures import publish_disclosure_files
    from grattage.service.tickets import sweep as sweep_tickets
    from grattage.service.transparency import integrate_all

    settings = Settings.from_environment()
    platform = _platform(settings)
    click.echo(f"finished {sweep_tickets(platform)} tickets")
    for path in publish_disclosure_files(platform, settings.disclosure_dir):
        click.echo(f"published {path}")
    integrate_all(platform)  # as the server's loop does: what was queued reaches the tree


@click.command()
def reconcile() -> None:
    """Prove the books; exit 0 only when every check holds, else list every discrepancy."""
    from grattage.entrypoints.cli.books import CHECK_TEXT, describe
    from grattage.service.reconcile import reconcile as run

    report = run(_platform())
    for check in report.checks:
        click.echo(f"checked: {CHECK_TEXT[check]}")
    if report.clean:
        click.echo("reconcile: clean")
        return
    for discrepancy in report.discrepancies:
        click.echo(f"DISCREPANCY: {describe(discrepancy)}")
    click.echo(f"reconcile: {len(report.discrepancies)} discrepancies", err=True)
    raise SystemExit(1)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
def demo(host: str, port: int) -> None:
    """`make run`: a ready SQLite platform with a demo player, then serve — with a witness
    process of its own unless GRATTAGE_WITNESS_URL names one (its blocks are drawn)."""
    from grattage.entrypoints.cli.demo_witness import demo_witness

    operator_key = _platform(create=True).signer().public_key
    with demo_witness(operator_key):
        platform = _platform(
            Settings.from_environment()
        )  # now with the witness: its new blocks are drawn
        prepare_demo(platform)
        click.echo(f"demo player: {DEMO_EMAIL} / password {DEMO_PASSWORD}")
        click.echo(f"serving on http://{host}:{port}")
        _serve(host, port, 1)


def register(group: click.Group) -> None:
    for command in (migrate, emission, serve, sweep, reconcile, demo):
        group.add_command(command)
    # ``block generate|verify`` (block files) and ``block list|open|close`` (stored blocks)
    # share one ``block`` group
    existing = group.commands.get("block")
    if isinstance(existing, click.Group):
        for name, command in block.commands.items():
            existing.add_command(command, name)
    else:
        group.add_command(block)


def prepare_demo(platform: Platform) -> None:
    """First start: one open block per game and a demo player with 100 €. Idempotent."""
    from grattage.errors import AlreadyExists
    from grattage.service import accounts
    from grattage.service.emissions import list_blocks

    for game, blocks in DEMO_BLOCKS.items():
        if not list_blocks(platform, game):
            _create_with_progress(platform, game, blocks)
    try:
        player_id = accounts.register(
            platform,
            DEMO_EMAIL,
            DEMO_PASSWORD,
            date(1980, 1, 1),
            first_name="Camille",
            last_name="Démo",
        )
    except AlreadyExists:
        return
    accounts.deposit(platform, player_id, DEMO_DEPOSIT_CENTS)


KEEP_ALIVE_SECONDS = 5
"""An idle keep-alive connection is closed after this (uvicorn's default, kept explicit)."""
GRACEFUL_SHUTDOWN_SECONDS = 10
"""On SIGTERM, requests under way get this long to finish before their connections close."""


def _serve(host: str, port: int, workers: int) -> None:
    from grattage.entrypoints.cli.beside import start_beside_serve
    from grattage.entrypoints.serving import MASTER_PID_VARIABLE

    settings = Settings.from_environment()
    _platform(settings)  # migrate once, before any worker starts
    os.environ["GRATTAGE_MIGRATE_ON_START"] = "0"
    if workers > 1:  # the workers are told whom not to outlive (serving.die_with_master)
        os.environ[MASTER_PID_VARIABLE] = str(os.getpid())
    beside = start_beside_serve(settings)  # the drawer or the sequencer: see cli/beside.py
    try:
        _run_uvicorn(host, port, workers, settings)
    finally:
        if beside is not None:
            beside.stop()


def _run_uvicorn(host: str, port: int, workers: int, settings: Settings) -> None:
    import uvicorn

    from grattage.entrypoints.serving import DeadlineHttpToolsProtocol

    uvicorn.run(
        "grattage.entrypoints.http:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        access_log=False,
        log_level="info",
        # uvicorn kills a worker that does not answer its ping within this many seconds
        # (default 5): a busy 2-core machine starting a worker, or hashing a crowd of
        # log-ins, took longer, and the workers were killed and restarted in a loop.
        timeout_worker_healthcheck=30,
        http=DeadlineHttpToolsProtocol,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        limit_concurrency=settings.max_concurrent_connections,
    )
