"""Every game by name, each bound to its default prize table (checked once, on first use).

Cash and Astro are registered below with their packaged tables (``games/tables/<name>.toml``).
Another game joins with :func:`register_game`, giving its class and its default table; the
blocks, the service, the API and the CLI then find it by name like the two others. The answer
is a :class:`Registration` whose :meth:`~Registration.unregister` (or leaving its ``with``
block) takes the game out again, so a test can add a game without any other test seeing it.

A game has one class per rules version: the registered class is the current one (new blocks are
designed with it), and the earlier ones stay registered beside it, because a block keeps the
rules version it was committed with — ``find_game(name, table, rules_version=...)`` gives the
class that re-derives that block's tickets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property, partial
from importlib import resources
from types import TracebackType

from grattage.errors import InvalidPrizeTable, UnknownGame
from grattage.games.astro import Astro, AstroDesignV1
from grattage.games.base import Game
from grattage.games.cash import Cash, CashDesignV1
from grattage.games.table import PrizeTable, parse_prize_table, parse_prize_table_bytes
from grattage.games.table_limits import one_line


class Registration:
    """One game's place in the registry: its class and how to get its default table."""

    def __init__(
        self,
        kind: type[Game],
        load_default_table: Callable[[], PrizeTable],
        earlier: tuple[type[Game], ...] = (),
    ) -> None:
        self.kind = kind
        self._load_default_table = load_default_table
        self.versions: dict[str, type[Game]] = {k.rules_version: k for k in (*earlier, kind)}
        """Every rules version of the game, oldest first, the current one (``kind``) last."""

    def kind_for(self, rules_version: str | None) -> type[Game]:
        """The class of ``rules_version`` (None: the current one)."""
        if rules_version is None:
            return self.kind
        kind = self.versions.get(rules_version)
        if kind is None:
            known = ", ".join(self.versions)
            raise InvalidPrizeTable(
                f"{self.kind.name} has no rules version {rules_version!r}; it has {known}"
            )
        return kind

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


def register_game(
    kind: type[Game], default_table: PrizeTable, earlier: tuple[type[Game], ...] = ()
) -> Registration:
    """Make ``kind`` a game of the platform, sold with ``default_table`` unless told otherwise;
    ``earlier`` are the classes of its earlier rules versions, still used to re-derive blocks.

    The table is checked at once (its game's name, and that the game can dress every prize),
    so a game that cannot be played is refused here rather than at its first sale."""
    kind(default_table)
    return _add(Registration(kind, lambda: default_table, earlier))


def _packaged_table(name: str) -> PrizeTable:
    data = resources.files("grattage.games").joinpath("tables", f"{name}.toml").read_bytes()
    return parse_prize_table_bytes(data, f"{name}.toml")


for _packaged, _earlier in ((Cash, (CashDesignV1,)), (Astro, (AstroDesignV1,))):
    _add(Registration(_packaged, partial(_packaged_table, _packaged.name), _earlier))


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


def rules_versions(name: str) -> tuple[str, ...]:
    """Every rules version of game ``name``, oldest first, the current one last."""
    return tuple(_registration(name).versions)


def find_game(
    name: str, table: PrizeTable | None = None, *, rules_version: str | None = None
) -> Game:
    """The game ``name`` with its default table, or with ``table`` (checked) if given, under
    ``rules_version`` (a stored block's) or the current rules when None."""
    registration = _registration(name)
    kind = registration.kind_for(rules_version)
    if table is None:
        if kind is registration.kind:
            return registration.default_game
        return kind(registration.default_table)
    if table.game != name:
        raise InvalidPrizeTable(f"the table is for game {table.game!r}, not {name!r}")
    return kind(table)


def load_table_bytes(
    name: str | None,
    data: bytes,
    source_name: str,
    *,
    rules_version: str | None = None,
    reveal_designs: int | None = None,
) -> PrizeTable:
    """An operator's table file for game ``name`` (or, if ``None``, for the game the file names),
    as raw bytes, every rule checked (the format's, a table sold to players', and the game's
    under ``rules_version``, None: today's): whatever the bytes, a table or one line
    (:class:`InvalidPrizeTable`). Under today's rules, partial reveals are measured on a sample
    of the table's designs too (``reveal_designs`` of them, by default ``LOADER_DESIGNS``, see
    :func:`~grattage.games.reveal_audit.check_partial_reveals`)."""
    table = parse_prize_table_bytes(data, source_name)
    if name is None:
        if table.game not in _REGISTERED:
            raise InvalidPrizeTable(
                f"{one_line(source_name)}: the table is for {table.game!r}, which is not a game "
                f"here ({', '.join(game_names())})"
            )
        name = table.game
    table = _dressable(name, table, source_name, rules_version)
    registration = _registration(name)
    if registration.kind_for(rules_version) is registration.kind:  # today's rules' claim
        # Imported here: the measure needs NumPy, which an outsider's checker never loads.
        from grattage.games.reveal_audit import LOADER_DESIGNS, check_partial_reveals

        designs = LOADER_DESIGNS if reveal_designs is None else reveal_designs
        try:
            check_partial_reveals(registration.kind(table), designs)
        except InvalidPrizeTable as exc:
            raise InvalidPrizeTable(f"{one_line(source_name)}: {exc.message}") from None
    return table


def load_table(
    name: str, text: str, source_name: str, *, rules_version: str | None = None
) -> PrizeTable:
    """Parse a table written in code for game ``name`` (see ``parse_prize_table``) and check the
    game can dress it under ``rules_version`` (None: today's rules, which every new block is
    designed with)."""
    return _dressable(name, parse_prize_table(text, source_name), source_name, rules_version)


def _dressable(
    name: str, table: PrizeTable, source_name: str, rules_version: str | None
) -> PrizeTable:
    source_name = one_line(source_name)
    if table.game != name:
        raise InvalidPrizeTable(f"{source_name}: the table is for {table.game!r}, not {name!r}")
    try:
        _registration(name).kind_for(rules_version)(table)
    except InvalidPrizeTable as exc:
        raise InvalidPrizeTable(f"{source_name}: {exc.message}") from None
    except RecursionError:  # a prize made of very many small amounts (found by the fuzz)
        raise InvalidPrizeTable(
            f"{source_name}: a prize needs too many of the table's smaller amounts to be shown"
        ) from None
    return table
