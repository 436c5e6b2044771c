"""The ``grattage`` command line.

Errors map to exit codes here and only here: bad input (an
:class:`~grattage.errors.InvalidInput`, a usage error) exits 2 with one line on stderr; data
that fails a verification exits 1; other refusals exit 3. Never a traceback for bad input.
"""

from __future__ import annotations

import sys

import click

from grattage import __version__
from grattage.errors import GrattageError, InvalidInput, VerificationFailed

EXIT_OK = 0
EXIT_VERIFICATION_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3


def exit_code_for(error: GrattageError) -> int:
    if isinstance(error, InvalidInput):
        return EXIT_BAD_INPUT
    if isinstance(error, VerificationFailed):
        return EXIT_VERIFICATION_FAILED
    return EXIT_REFUSED


class GrattageGroup(click.Group):
    """A click group that turns every :class:`GrattageError` into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except GrattageError as error:
            click.echo(f"grattage: error: {error.message}", err=True)
            ctx.exit(exit_code_for(error))
        except BrokenPipeError:
            raise
        except OSError as error:
            # A missing or unreadable file named on the command line is bad input too.
            click.echo(f"grattage: error: {error.strerror or error}: {error.filename!r}", err=True)
            ctx.exit(EXIT_BAD_INPUT)


@click.group(cls=GrattageGroup)
@click.version_option(__version__, prog_name="grattage")
def cli() -> None:
    """grattage — Cash 500 000 € and Astro, from the block to the player."""


def _register_commands() -> None:
    from grattage.entrypoints.cli import back_office, engine, fairness, platform

    engine.register(cli)
    fairness.register(cli)
    platform.register(cli)
    back_office.register(cli)


_register_commands()


def main() -> None:
    try:
        cli.main(prog_name="grattage", standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("grattage: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (``grattage … | head``): stop quietly, as Unix tools do.
        sys.stderr.close()
        sys.exit(0)
