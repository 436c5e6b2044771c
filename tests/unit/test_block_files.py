"""Block files: compact, verified tier by tier, and never crashed on when damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grattage.blocks.blockfile import MAGIC, verify_block_file, write_block_file
from grattage.blocks.generation import generate_block_file, sized_game
from grattage.errors import InvalidBlockFile, InvalidInput, VerificationFailed
from grattage.games import find_game, load_table

SMALL = """
game = "cash"
block_size = 1000
[[tiers]]
prize_cents = 1000
count = 10
[[tiers]]
prize_cents = 500
count = 200
"""


@pytest.fixture
def small_cash():
    return find_game("cash", load_table("cash", SMALL, "small.toml"))


@pytest.fixture
def block(tmp_path: Path, small_cash) -> Path:
    path = tmp_path / "small.block"
    generate_block_file(small_cash, path)
    return path


def test_a_generated_block_verifies_tier_by_tier(block):
    verified = verify_block_file(block)
    assert verified.counts == [790, 10, 200]
    assert verified.header.table.digest() == load_table("cash", SMALL, "x").digest()


def test_a_block_file_takes_one_byte_per_unit_plus_a_header(block):
    assert block.stat().st_size - 1000 < 4096


def test_the_file_ends_with_the_units_in_sale_order(tmp_path: Path, small_cash):
    path = tmp_path / "ordered.block"
    header, tiers = generate_block_file(small_cash, path)
    body = path.read_bytes()[-header.size :]
    assert body == tiers.tobytes()
    assert np.bincount(np.frombuffer(body, dtype=np.uint8)).tolist() == [790, 10, 200]


def test_a_changed_unit_is_reported_as_tampering(block):
    data = bytearray(block.read_bytes())
    data[-1] ^= 1
    block.write_bytes(bytes(data))
    with pytest.raises(InvalidBlockFile, match="content_sha256"):
        verify_block_file(block)


def test_a_truncated_block_is_reported(block):
    block.write_bytes(block.read_bytes()[:-10])
    with pytest.raises(
        InvalidBlockFile, match="truncated: 990 units found, the header announces 1000"
    ):
        verify_block_file(block)


def test_a_block_truncated_inside_its_header_is_reported(block):
    block.write_bytes(block.read_bytes()[:40])
    with pytest.raises(InvalidBlockFile, match="truncated inside the header"):
        verify_block_file(block)


def test_extra_bytes_after_the_units_are_reported(block):
    block.write_bytes(block.read_bytes() + b"\0")
    with pytest.raises(InvalidBlockFile, match="1 bytes more"):
        verify_block_file(block)


def test_a_file_that_is_not_a_block_is_reported(tmp_path):
    path = tmp_path / "x.block"
    path.write_bytes(b"hello world")
    with pytest.raises(InvalidBlockFile, match="not a grattage block file"):
        verify_block_file(path)


def test_a_damaged_header_is_reported(block):
    data = block.read_bytes()
    block.write_bytes(data[:13] + b"}" + data[14:])
    with pytest.raises(InvalidBlockFile, match=r"damaged header \(JSONDecodeError: Extra data"):
        verify_block_file(block)


def test_an_edited_table_in_the_header_is_reported(block):
    data = block.read_bytes()
    block.write_bytes(data.replace(b'"count": 10,', b'"count": 11,', 1))
    with pytest.raises(InvalidBlockFile, match="does not match its table_sha256"):
        verify_block_file(block)


def test_a_block_whose_counts_differ_from_its_table_fails_verification(tmp_path, small_cash):
    tiers = np.zeros(1000, dtype=np.uint8)
    tiers[:11] = 1  # one 10 € prize too many…
    tiers[11:210] = 2  # …and one 5 € prize too few
    path = tmp_path / "wrong.block"
    write_block_file(path, small_cash, tiers)
    with pytest.raises(VerificationFailed, match="tier 1 .*11 units, the table says 10"):
        verify_block_file(path)


def test_a_unit_with_a_tier_that_does_not_exist_fails_verification(tmp_path, small_cash):
    tiers = np.zeros(1000, dtype=np.uint8)
    tiers[0] = 9
    path = tmp_path / "bad.block"
    write_block_file(path, small_cash, tiers)
    with pytest.raises(VerificationFailed, match=r"tiers that do not exist: \[9\]"):
        verify_block_file(path)


def test_cash_blocks_have_no_multiples():
    with pytest.raises(InvalidInput, match="allows no multiples"):
        sized_game(find_game("cash"), 2)


def test_astro_blocks_may_be_multiples():
    assert sized_game(find_game("astro"), 2).table.block_size == 1_500_000


def test_the_file_starts_with_its_magic(block):
    assert block.read_bytes().startswith(MAGIC)
