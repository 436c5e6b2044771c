"""Every game by name, each bound to its default prize table (checked once, on first use).

Cash and Astro are registered below with their packaged tables (``games/tables/<name>.toml``).
Another game joins with :func:`register_game`, giving its class and its default table; the
blocks, the service, the API and the CLI then find it by name like the two others. The answer
is a :class:`Registration` whose :meth:`~Registration.unregister` (or leaving its ``with``
block) takes the game out again, so a test can add a game without any other test seeing it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property, partial
from importlib import resources
from types import TracebackType

from grattage.errors import InvalidPrizeTable, UnknownGame
from grattage.games.astro import Astro
from grattage.games.base import Game
from grattage.games.cash import Cash
from grattage.games.table import PrizeTable, parse_prize_table


class Registration:
    """One game's place in the registry: its class and how to get its default table."""

    def __init__(self, kind: type[Game], load_default_table: Callable[[], PrizeTable]) -> None:
        self.kind = kind
        self._load_default_table = load_default_table

    @cached_property
    def default_table(self) -> PrizeTable:
        return self._load_default_table()

    @cached_property
    def default_game(self) -> Game:
        """The game bound to its default table (preparing a game is not free: done once)."""
        return self.kind(self.default_table)

    def unregister(self) -> None:
        """Take the game out of the registry (a no-op if it is already out)."""
        with _LOCK:
            if _REGISTERED.get(self.kind.name) is self:
                del _REGISTERED[self.kind.name]

    def __enter__(self) -> Registration:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.unregister()


_LOCK = threading.Lock()
"""Held by whoever changes the registry (registrations happen at start-up and in tests)."""
_REGISTERED: dict[str, Registration] = {}


def _add(registration: Registration) -> Registration:
    name = registration.kind.name
    with _LOCK:
        if name in _REGISTERED:
            raise ValueError(f"a game named {name!r} is already registered")
        _REGISTERED[name] = registration
    return registration


def register_game(kind: type[Game], default_table: PrizeTable) -> Registration:
    """Make ``kind`` a game of the platform, sold with ``default_table`` unless told otherwise.

    The table is checked at once (its game's name, and that the game can dress every prize),
    so a game that cannot be played is refused here rather than at its first sale."""
    kind(default_table)
    return _add(Registration(kind, lambda: default_table))


def _packaged_table(name: str) -> PrizeTable:
    text = resources.files("grattage.games").joinpath("tables", f"{name}.toml").read_text("utf-8")
    return parse_prize_table(text, f"{name}.toml")


for _packaged in (Cash, Astro):
    _add(Registration(_packaged, partial(_packaged_table, _packaged.name)))


# Reads take no lock: every purchase looks its game up, and a dict read is atomic.
def game_names() -> tuple[str, ...]:
    return tuple(_REGISTERED)


def _registration(name: str) -> Registration:
    registration = _REGISTERED.get(name)
    if registration is None:
        names = ", ".join(game_names())
        raise UnknownGame(f"unknown game {name!r}; the games are {names}")
    return registration


def game_type(name: str) -> type[Game]:
    return _registration(name).kind


def default_table(name: str) -> PrizeTable:
    return _registration(name).default_table


def find_game(name: str, table: PrizeTable | None = None) -> Game:
    """The game ``name`` with its default table, or with ``table`` (checked) if given."""
    registration = _registration(name)
    if table is None:
        return registration.default_game
    if table.game != name:
        raise InvalidPrizeTable(f"the table is for game {table.game!r}, not {name!r}")
    return registration.kind(table)


def load_table(name: str, text: str, source_name: str) -> PrizeTable:
    """Parse an operator's table file for game ``name`` and check the game can dress it."""
    table = parse_prize_table(text, source_name)
    if table.game != name:
        raise InvalidPrizeTable(f"{source_name}: the table is for {table.game!r}, not {name!r}")
    try:
        game_type(name)(table)
    except InvalidPrizeTable as exc:
        raise InvalidPrizeTable(f"{source_name}: {exc.message}") from None
    return table
