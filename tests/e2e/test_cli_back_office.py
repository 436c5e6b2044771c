"""Back-office commands: operator create, block suspend/resume, report, audit verify."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from grattage.entrypoints.cli import cli
from grattage.service import operators, tickets
from grattage.service.emissions import list_blocks
from support import PASSWORD, World

from .conftest import cli_env


def run(world: World, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli, list(args), env=cli_env(world), input=stdin, catch_exceptions=False
    )
    return result.exit_code, result.stdout, result.stderr


def test_an_operator_is_created_with_a_password_from_stdin(world: World) -> None:
    code, out, _ = run(world, "operator", "create", "Op@Example.org", "--password-stdin",
                       stdin=PASSWORD + "\n")  # fmt: skip
    assert (code, out) == (0, "operator 1 created: op@example.org\n")
    assert operators.log_in(world.platform, "op@example.org", PASSWORD).token


def test_block_suspend_and_resume_from_the_cli_are_audited(world: World) -> None:
    world.stock("cash")
    assert run(world, "block", "suspend", "1")[:2] == (0, "block 1 suspended\n")
    assert list_blocks(world.platform, "cash")[0].state == "suspended"
    assert run(world, "block", "resume", "1")[0] == 0
    _, out, _ = run(world, "audit", "show", "--limit", "2")
    assert [json.loads(line)["actor"] for line in out.splitlines()] == ["cli", "cli"]


def test_reports_come_as_csv_and_json(world: World) -> None:
    world.stock("cash")
    player = world.player(5_000)
    for _ in range(4):
        tickets.buy(world.platform, player, game_name="cash", mode="auto")
    code, out, _ = run(world, "report", "blocks")
    assert code == 0
    assert out.splitlines()[0] == (
        "block_id,game,state,units_sold,stakes_cents,prizes_cents,ggr_cents,players"
    )
    assert out.splitlines()[1].startswith("1,cash,open,4,2000,")
    code, out, _ = run(world, "report", "days", "--format", "json", "--from", "2026-11-30",
                       "--to", "2026-11-30")  # fmt: skip
    rows = json.loads(out)["rows"]
    assert code == 0 and rows[0]["day"] == "2026-11-30" and rows[0]["units_sold"] == 4


def test_audit_verify_exits_0_on_a_clean_log_and_1_naming_the_bad_entry(world: World) -> None:
    world.stock("cash", blocks=2)
    code, out, _ = run(world, "audit", "verify")
    assert (code, out) == (0, "audit log: 4 entries, chain intact\n")
    with world.platform.uow.write() as repos:
        repos.blocks.db.execute(text("UPDATE audit_log SET details = '{}' WHERE id = 2"))  # type: ignore[attr-defined]
    code, _, err = run(world, "audit", "verify")
    assert code == 1
    assert err == "audit log: entry 2 is bad: its content was changed\n"


@pytest.mark.parametrize(
    "bounds", [["--to", "9999-12-31"], ["--from", "0001-01-01"], ["--from", "0001-01-01", "--to",
                                                                  "9999-12-31"]],
)  # fmt: skip
def test_a_report_beyond_the_days_it_can_hold_is_refused_in_one_line_and_exit_2(
    world: World, bounds: list[str]
) -> None:
    """Issue 13: report days are 2000-01-01 to 2100-12-31 (at most 366 days a period); the
    calendar's ends once gave an OverflowError and a traceback with exit 0."""
    code, out, err = run(world, "report", "days", "--format", "json", *bounds)
    assert (code, out) == (2, "")
    assert err.startswith("grattage: error: ") and err.count("\n") == 1


def test_a_report_reaches_the_days_it_is_given(world: World) -> None:
    world.stock("cash")
    tickets.buy(world.platform, world.player(500), game_name="cash", mode="auto")
    today = world.clock.now().date().isoformat()
    code, out, err = run(
        world, "report", "days", "--format", "json", "--from", today, "--to", today
    )
    assert (code, err) == (0, "")
    assert [row["units_sold"] for row in json.loads(out)["rows"]] == [1]


@pytest.mark.parametrize("args", [["block", "suspend", "999"], ["block", "resume", "999"]])
def test_a_block_that_does_not_exist_is_one_line_and_exit_4(world: World, args: list[str]) -> None:
    code, out, err = run(world, *args)
    assert (code, out, err) == (4, "", "grattage: error: no block 999\n")


@pytest.mark.parametrize(
    "args",
    [
        ["report", "days", "--from", "yesterday"],
        ["report", "days", "--from", "2026-12-02", "--to", "2026-12-01"],
        ["report", "weeks"],
        ["block", "resume", "abc"],
        ["operator", "create", "not-an-address", "--password-stdin"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(world: World, args: list[str]) -> None:
    code, out, err = run(world, *args, stdin=PASSWORD + "\n")
    assert code == 2, (out, err)
    assert out == "" and "Traceback" not in err
    # Our refusals are one line; click's own usage errors end with their one "Error:" line.
    assert err.strip().splitlines()[-1].startswith(("grattage: error: ", "Error: "))
