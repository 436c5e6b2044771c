"""Generating a block: the table's exact multiset, shuffled by a CSPRNG (see ``shuffle``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grattage.blocks.blockfile import BlockHeader, write_block_file
from grattage.blocks.progress import Progress, silent
from grattage.blocks.shuffle import TierArray, secure_generator, shuffled_tiers
from grattage.errors import InvalidInput
from grattage.games.base import Game


def sized_game(game: Game, multiple: int) -> Game:
    """``game`` bound to a block ``multiple`` times its table's (only where the rules allow)."""
    if multiple < 1:
        raise InvalidInput(f"--blocks must be at least 1, got {multiple!r}")
    if multiple == 1:
        return game
    if not game.allows_block_multiples:
        raise InvalidInput(
            f"{game.name} blocks are exactly {game.table.block_size} units: its regulation "
            f"allows no multiples (got --blocks {multiple!r})"
        )
    return game.with_table(game.table.scaled(multiple))


def generate_tiers(
    game: Game, generator: np.random.Generator | None = None, progress: Progress = silent
) -> TierArray:
    size = game.table.block_size
    progress("shuffling", 0, size)
    tiers = shuffled_tiers(game.table, generator or secure_generator())
    progress("shuffling", size, size)
    return tiers


def generate_block_file(
    game: Game, path: Path, progress: Progress = silent
) -> tuple[BlockHeader, TierArray]:
    tiers = generate_tiers(game, progress=progress)
    return write_block_file(path, game, tiers, progress), tiers
