"""The ``grattage`` command line.

Errors map to exit codes here and only here, from the one tree of :mod:`grattage.errors`
(database and driver errors joined it in :mod:`grattage.adapters.errors`). Every error is one
line on stderr, ``grattage: error: <message>``, never a traceback:

    exit  what
    0     done
    1     VerificationFailed: well-formed data that fails its proof or count
    2     InvalidInput: bad input (a usage error, a file that cannot be read or is not UTF-8,
          a value out of range, a database that does not exist or was never migrated)
    3     any other refusal (Conflict, Forbidden, Unauthorized: e.g. a block not yet disclosed;
          Inconsistent: the database contradicts itself)
    4     NotFound: no such block, ticket or entry
    5     Unavailable: the database is down, locked, read-only or full, or every password
          check slot is busy; RateLimited: too many attempts; retry later
    130   interrupted (Ctrl-C)

A file named on the command line that cannot be read or written (an ``OSError``) counts as
bad input.
"""

from __future__ import annotations

import importlib
import sys

import click

from grattage import __version__
from grattage.entrypoints.cli.files import file_error
from grattage.errors import (
    GrattageError,
    InvalidInput,
    NotFound,
    RateLimited,
    Unavailable,
    VerificationFailed,
)

EXIT_OK = 0
EXIT_VERIFICATION_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3
EXIT_NOT_FOUND = 4
EXIT_UNAVAILABLE = 5
EXIT_INTERRUPTED = 130

EXIT_CODE_BY_BRANCH: tuple[tuple[type[GrattageError], int], ...] = (
    (VerificationFailed, EXIT_VERIFICATION_FAILED),
    (InvalidInput, EXIT_BAD_INPUT),
    (NotFound, EXIT_NOT_FOUND),
    (Unavailable, EXIT_UNAVAILABLE),
    (RateLimited, EXIT_UNAVAILABLE),
    (GrattageError, EXIT_REFUSED),
)


def exit_code_for(error: GrattageError) -> int:
    for branch, code in EXIT_CODE_BY_BRANCH:
        if isinstance(error, branch):
            return code
    return EXIT_REFUSED


COMMAND_MODULES: dict[str, str | tuple[str, ...]] = {
    "verify-ticket": "fairness",
    "verify-block": "fairness",
    "monitor": "monitor",
    "block": ("engine", "platform", "back_office"),
    "games": "engine",
    "simulate": "engine",
    "ticket": "engine",
    "demo": "platform",
    "emission": "platform",
    "migrate": "platform",
    "reconcile": "platform",
    "serve": "platform",
    "sweep": "platform",
    "audit": "back_office",
    "operator": "back_office",
    "report": "back_office",
    "witness": "witness",
    "log": "log_keys",
    "draw": "drawer",
    "sequence": "sequencer",
}
"""Which module of this package defines each command. A command's module is imported only
when the command runs, so that ``verify-ticket``, ``verify-block`` and ``monitor`` — what an
outsider runs against the operator — load the standard library, ``click`` and
``cryptography``, never the database, web or numerical stack."""


class GrattageGroup(click.Group):
    """A click group that turns every :class:`GrattageError` into one line and an exit code,
    and loads each command's module on first use."""

    _loaded: set[str] | None = None

    def _load(self, modules: str | tuple[str, ...]) -> None:
        """Import the modules defining a command, in order (``block``'s subcommands come from
        three of them, each adding to the group the first made), each once."""
        if self._loaded is None:
            self._loaded = set()
        wanted = (modules,) if isinstance(modules, str) else modules
        if set(wanted) & {"platform", "back_office"}:
            wanted = ("engine", *wanted)  # they add to the ``block`` group engine makes
        for module in wanted:
            if module not in self._loaded:
                self._loaded.add(module)
                importlib.import_module(f"{__name__}.{module}").register(self)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        modules = COMMAND_MODULES.get(cmd_name)
        if modules is not None:
            self._load(modules)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        for modules in COMMAND_MODULES.values():
            self._load(modules)
        return super().list_commands(ctx)

    def invoke(self, ctx: click.Context) -> object:
        try:
            try:
                return super().invoke(ctx)
            except BrokenPipeError:
                raise
            except OSError as error:
                raise file_error(error) from error
            except RecursionError:  # a hostile input's nesting deeper than a parser guards
                raise InvalidInput("the input is nested too deeply") from None
            except MemoryError:  # an input too large for this machine's memory
                raise InvalidInput("the input is too large for the memory available") from None
        except GrattageError as error:
            click.echo(f"grattage: error: {error.message}", err=True)
            ctx.exit(exit_code_for(error))


@click.group(cls=GrattageGroup)
@click.version_option(__version__, prog_name="grattage")
def cli() -> None:
    """grattage — Cash 500 000 € and Astro, from the block to the player."""


def main() -> None:
    try:
        # Not click's standalone mode, which prints a usage error on three lines: one line
        # and exit 2, as every other bad input.
        # Outside it, click returns the code a command exits with instead of raising it.
        code = cli.main(prog_name="grattage", standalone_mode=False)
        sys.exit(code if isinstance(code, int) else EXIT_OK)
    except click.ClickException as error:
        click.echo(f"grattage: error: {error.format_message()}", err=True)
        sys.exit(error.exit_code)
    except click.exceptions.Abort:
        click.echo("grattage: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        click.echo("grattage: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        # The reader went away (``grattage … | head``): stop quietly, as Unix tools do.
        sys.stderr.close()
        sys.exit(0)
