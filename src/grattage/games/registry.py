"""Every game by name, each bound to its packaged prize table (checked once, on first use)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from grattage.errors import InvalidPrizeTable, UnknownGame
from grattage.games.astro import Astro
from grattage.games.base import Game
from grattage.games.cash import Cash
from grattage.games.table import PrizeTable, parse_prize_table

GAME_TYPES: dict[str, type[Game]] = {Cash.name: Cash, Astro.name: Astro}


def game_names() -> tuple[str, ...]:
    return tuple(GAME_TYPES)


def game_type(name: str) -> type[Game]:
    try:
        return GAME_TYPES[name]
    except KeyError:
        raise UnknownGame(f"unknown game {name!r}; the games are {', '.join(GAME_TYPES)}") from None


@cache
def default_table(name: str) -> PrizeTable:
    game_type(name)
    text = resources.files("grattage.games").joinpath("tables", f"{name}.toml").read_text("utf-8")
    return parse_prize_table(text, f"{name}.toml")


def find_game(name: str, table: PrizeTable | None = None) -> Game:
    """The game ``name`` with its packaged table, or with ``table`` (checked) if given."""
    kind = game_type(name)
    if table is None:
        return _default_game(name)
    if table.game != name:
        raise InvalidPrizeTable(f"the table is for game {table.game!r}, not {name!r}")
    return kind(table)


@cache
def _default_game(name: str) -> Game:
    return game_type(name)(default_table(name))


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
