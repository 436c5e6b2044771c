"""``grattage sequence``: the transparency log's sequencer as a process of its own — every
``GRATTAGE_LOG_MERGE_INTERVAL_SECONDS`` it merges what waits in the log's queue into the tree
and signs a head (docs/fairness.md, "The transparency log"), until stopped.

``grattage serve`` runs one beside its workers when no witness is set (the drawer merges the
log otherwise; cli/beside.py). In a worker's background thread, a merge held SQLite's one write
lock while it waited for the GIL behind that worker's purchases, and both workers' purchases
waited behind it; here the lock is held only for the merge itself, and often, so that each
merge is short. Several may run (serve's and an operator's, say): one merges at a time.
"""

from __future__ import annotations

import contextlib
import logging

import click

from grattage.entrypoints.cli.beside import StopRequest, die_with_serve
from grattage.settings import Settings

RETRY_AT_MOST_SECONDS = 5.0

log = logging.getLogger("grattage.sequencer")


@click.command("sequence")
def sequence() -> None:
    """Merge the transparency log's queue into its tree and sign heads, until stopped."""
    stopped = StopRequest()  # first: a SIGTERM while starting stops it cleanly
    from grattage.adapters.database import describe_database
    from grattage.entrypoints.bootstrap import build_platform
    from grattage.service import transparency

    die_with_serve()
    settings = Settings.from_environment()
    platform = build_platform(settings, run_migrations=False, create_database=False)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s grattage sequence: %(message)s")
    interval = settings.log_merge_interval_seconds
    log.info(
        "merging the transparency log of %s every %.2f s",
        describe_database(settings.database_url),
        interval,
    )
    pause = interval
    while not stopped.requested:
        try:
            transparency.integrate_round(platform)
        except Exception as error:  # the database away for a moment: one line, then again
            first_line = (str(error).strip().splitlines() or [""])[0][:300]
            log.warning(
                "a merge failed (%s: %s); trying again in %.1f s",
                type(error).__name__,
                first_line,
                pause,
            )
            stopped.wait(pause)
            pause = min(pause * 2, RETRY_AT_MOST_SECONDS)
            continue
        pause = interval
        stopped.wait(interval)
    with contextlib.suppress(Exception):  # stopped with serve: what its last sales queued
        transparency.integrate_round(platform)


def register(cli: click.Group) -> None:
    cli.add_command(sequence)
