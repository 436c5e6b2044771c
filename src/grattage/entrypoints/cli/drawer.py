"""``grattage draw``: the drawer as a process of its own (docs/draw.md, "The draw in the
platform") — it has the log's heads cosigned before the rounds its receipts name and draws
each published round, while it holds the lease (one drawer leads; start several for standby).

``grattage serve`` starts one beside its workers when a witness is set (cli/beside.py), starts
it again whenever it exits, and stops it with them, so that cosigning and drawing never wait
for a request thread's turn at the GIL: in a worker, the cosigner waited hundreds of
milliseconds per turn behind the purchases, and rounds passed before their heads were
cosigned (PostgreSQL, 2 workers, measured).
"""

from __future__ import annotations

import logging

import click

from grattage.entrypoints.cli.beside import StopRequest, die_with_serve
from grattage.errors import InvalidInput
from grattage.settings import Settings


@click.command("draw")
def draw() -> None:
    """Cosign and draw, as the leader, until stopped (SIGTERM, Ctrl-C)."""
    # First of all: a SIGTERM while the platform is being built stops it cleanly too.
    stopped = StopRequest()
    from grattage.adapters.database import describe_database
    from grattage.entrypoints.bootstrap import build_platform
    from grattage.entrypoints.draw_loop import DrawLoop

    die_with_serve()
    settings = Settings.from_environment()
    platform = build_platform(settings, run_migrations=False, create_database=False)
    if platform.witness is None:
        raise InvalidInput("grattage draw needs a witness: set GRATTAGE_WITNESS_URL and _KEY")
    # Its lines on stderr, one each (``serve``'s drawer writes into the server's log).
    logging.basicConfig(level=logging.INFO, format="%(asctime)s grattage draw: %(message)s")
    loop = DrawLoop(platform, lead=True)
    logging.getLogger("grattage.drawer").info(
        "drawing the sales of %s with the witness at %s (holder %s)",
        describe_database(settings.database_url),
        settings.witness_url,
        loop.drawer.holder,
    )
    loop.start()
    stopped.wait()
    loop.stop()


def register(cli: click.Group) -> None:
    cli.add_command(draw)
