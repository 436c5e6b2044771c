"""The engine's command line: every command works, and bad input is one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grattage.entrypoints.cli import cli
from grattage.games import find_game


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args: str, stdin: str | bytes | None = None):
        return runner.invoke(cli, list(args), input=stdin, catch_exceptions=False)

    return invoke


def assert_one_line_error(result, fragment: str, code: int = 2) -> None:
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("grattage: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in result.output


def test_games_lists_both_games_with_odds_and_payout(run):
    result = run("games", "--json")
    games = [json.loads(line) for line in result.stdout.splitlines()]
    assert [g["name"] for g in games] == ["cash", "astro"]
    assert games[0]["odds"] == "1 in 3.83"
    assert games[0]["payout_percent"] == "75.000"
    assert games[1]["reconstruction"] is True
    assert run("games").exit_code == 0


def test_designed_tickets_check_back_valid_with_their_prize(run):
    designed = run("ticket", "design", "astro", "--prize", "40", "--sign", "virgo", "--count", "5")
    assert designed.exit_code == 0
    lines = designed.stdout.splitlines()
    assert len(lines) == 5
    assert all(json.loads(line)["prize_cents"] == 4000 for line in lines)
    checked = run("ticket", "check", "-", stdin=designed.stdout)
    assert checked.exit_code == 0
    assert checked.stdout.count("prize 40 €") == 5


def test_prize_zero_designs_losing_tickets(run):
    out = run("ticket", "design", "cash", "--prize", "0", "--count", "3", "--seed", "ab").stdout
    for line in out.splitlines():
        assert find_game("cash").evaluate(json.loads(line)) == 0


def test_a_seed_reproduces_designs(run):
    first = run("ticket", "design", "cash", "--prize", "100", "--seed", "01ff").stdout
    assert first == run("ticket", "design", "cash", "--prize", "100", "--seed", "01ff").stdout


def test_checking_a_tampered_ticket_fails_and_names_the_line(run):
    ticket = json.loads(run("ticket", "design", "cash", "--prize", "5").stdout)
    ticket["prize_cents"] = 50_000_000
    result = run("ticket", "check", "-", stdin=json.dumps(ticket) + "\nnot json\n")
    assert result.exit_code == 2
    assert "line 1: invalid: prize_cents is 50000000" in result.stdout
    assert "line 2: invalid: the line is not a JSON document" in result.stdout
    assert "2 of 2 ticket documents are invalid" in result.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("ticket", "design", "poker", "--prize", "5"), "unknown game 'poker'"),
        (("ticket", "design", "cash", "--prize", "150"), "no prize of 150 €"),
        (
            ("ticket", "design", "cash", "--prize", "abc"),
            "not an amount in euros (digits, at most 2 decimals): 'abc'",
        ),
        (("ticket", "design", "cash", "--prize", "0.001"), "at most 2 decimals"),
        (("ticket", "design", "astro", "--prize", "2", "--sign", "dragon"), "'dragon'"),
        (("ticket", "design", "astro", "--prize", "2"), "got None"),
        (("ticket", "design", "cash", "--prize", "5", "--seed", "xyz"), "hexadecimal"),
        (("block", "verify", "/nonexistent.block"), "/nonexistent.block"),
        (("block", "generate", "cash", "--out", "/tmp/x.block", "--blocks", "2"), "no multiples"),
        (("simulate", "poker", "--tickets", "5"), "unknown game 'poker'"),
        (("simulate", "astro", "--tickets", "800000"), "exceeds the block size"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, args, fragment):
    assert_one_line_error(run(*args), fragment)


def test_a_broken_table_file_is_one_line_naming_the_row(run, tmp_path: Path):
    table = tmp_path / "t.toml"
    table.write_text(
        'game = "cash"\ntitle = "t"\nprice_cents = 500\nblock_size = 10\n'
        "[[tiers]]\nprize_cents = 500\ncount = -3\n"
    )
    result = run(
        "block", "generate", "cash", "--out", str(tmp_path / "b"), "--prize-table", str(table)
    )
    assert_one_line_error(
        result, "row 1: count must be an integer from 1 to the block size 10, got -3"
    )


NOT_UTF8 = b"\xff\xfd\x00 not text"  # not FF FE: that is UTF-16's byte-order mark, named so


@pytest.mark.parametrize(
    "args",
    [
        ("block", "generate", "cash", "--out", "{out}", "--prize-table", "{table}"),
        ("ticket", "design", "cash", "--prize", "5", "--prize-table", "{table}"),
        ("ticket", "check", "-", "--prize-table", "{table}"),
        ("simulate", "cash", "--tickets", "5", "--prize-table", "{table}"),
        ("verify-ticket", "{table}"),
        ("verify-block", "{table}"),
    ],
    ids=lambda args: " ".join(arg for arg in args[:2] if "{" not in arg),
)
def test_a_file_that_is_not_utf8_text_is_one_line_and_exit_2(run, tmp_path: Path, args):
    table = tmp_path / "binary.toml"
    table.write_bytes(NOT_UTF8)
    filled = [arg.format(table=table, out=tmp_path / "b.block") for arg in args]
    assert_one_line_error(run(*filled, stdin=""), "not UTF-8 text (byte 0: b'\\xff')")
    assert not (tmp_path / "b.block").exists()


def test_checking_a_ticket_line_that_is_not_utf8_names_the_line(run):
    ticket = run("ticket", "design", "cash", "--prize", "5").stdout.encode()
    result = run("ticket", "check", "-", stdin=ticket + NOT_UTF8 + b"\n")
    assert result.exit_code == 2, result.output
    assert "line 1: valid cash ticket" in result.stdout
    assert "line 2: invalid: the line is not UTF-8 text" in result.stdout
    assert result.stderr == "grattage: error: 1 of 2 ticket documents are invalid\n"


def test_a_tampered_block_file_is_one_line_and_exit_2(run, tmp_path: Path):
    table = tmp_path / "t.toml"
    table.write_text(
        'game = "cash"\ntitle = "t"\nprice_cents = 500\nblock_size = 500\n'
        "[[tiers]]\nprize_cents = 500\ncount = 40\n"
    )
    block = tmp_path / "b.block"
    assert (
        run("block", "generate", "cash", "--out", str(block), "--prize-table", str(table)).exit_code
        == 0
    )
    assert run("block", "verify", str(block)).exit_code == 0
    block.write_bytes(block.read_bytes()[:-1])
    assert_one_line_error(run("block", "verify", str(block)), "truncated")


def test_simulate_reports_hit_rate_payout_and_tiers(run):
    result = run("simulate", "astro", "--tickets", "20000", "--sign", "leo")
    assert result.exit_code == 0, result.output
    assert "hit rate  1 in" in result.stdout
    assert "payout" in result.stdout
    assert "every evaluated prize equals its unit's prize (20,000 of 20,000)" in result.stdout
