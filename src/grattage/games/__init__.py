"""Layer 1: the pure rules of each game. No I/O, no database, no global random generator."""

from grattage.games.base import Game, TicketDocument
from grattage.games.randomness import Randomness, SeededRandomness, SystemRandomness
from grattage.games.registry import (
    Registration,
    default_table,
    find_game,
    game_names,
    load_table,
    load_table_bytes,
    register_game,
    rules_versions,
)
from grattage.games.table import PrizeTable, Tier

__all__ = [
    "Game",
    "PrizeTable",
    "Randomness",
    "Registration",
    "SeededRandomness",
    "SystemRandomness",
    "TicketDocument",
    "Tier",
    "default_table",
    "find_game",
    "game_names",
    "load_table",
    "load_table_bytes",
    "register_game",
    "rules_versions",
]
