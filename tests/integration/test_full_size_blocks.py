"""Blocks of the real sizes are generated, written and verified tier by tier."""

from __future__ import annotations

import pytest

from grattage.blocks.blockfile import verify_block_file
from grattage.blocks.generation import generate_block_file, sized_game
from grattage.games import find_game


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "multiple", "size"),
    [("cash", 1, 12_000_000), ("astro", 1, 750_000), ("astro", 2, 1_500_000)],
)
def test_a_full_size_block_holds_exactly_its_prize_table(tmp_path, name, multiple, size):
    game = sized_game(find_game(name), multiple)
    path = tmp_path / f"{name}.block"
    header, _ = generate_block_file(game, path)
    assert header.size == size
    verified = verify_block_file(path)
    assert verified.counts == game.table.counts_by_tier()
    assert sum(verified.counts) == size
    assert path.stat().st_size < size + 8192
