"""The operator's commands: migrate, emission create, block, sweep, reconcile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grattage.entrypoints.cli import cli
from grattage.service import tickets
from grattage.service.emissions import list_blocks
from support import FIXTURES, World

from .conftest import cli_env


def run(world: World, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=cli_env(world), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_migrate_is_idempotent(world: World) -> None:
    assert run(world, "migrate")[0] == 0
    assert run(world, "migrate")[:2] == (0, "database is up to date\n")


def test_an_emission_from_an_operators_table_file_opens_its_first_block(world: World) -> None:
    code, out, _ = run(
        world, "emission", "create", "cash", "--blocks", "3", "--prize-table",
        str(FIXTURES / "tables" / "tiny_cash_on_sale.toml"),
    )  # fmt: skip
    assert code == 0, out
    assert [block.state for block in list_blocks(world.platform, "cash")] == [
        "open",
        "pending",
        "pending",
    ]
    code, out, _ = run(world, "block", "list", "--game", "cash")
    assert code == 0 and out.count("pending") == 2


@pytest.mark.parametrize(
    "args",
    [
        ("emission", "create", "poker"),
        ("emission", "create", "cash", "--blocks", "0"),
        ("emission", "create", "cash", "--prize-table", "/no/such/table.toml"),
        ("emission", "create", "astro", "--prize-table", str(FIXTURES / "tiny_cash.toml")),
        ("emission", "create", "cash", "--prize-table", str(FIXTURES)),
        ("serve", "--port", "0"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(world: World, args: tuple[str, ...]) -> None:
    code, _, err = run(world, *args)
    assert code == 2
    assert "Traceback" not in err
    # Our refusals are one line; click's own usage errors end with their one "Error:" line.
    assert err.strip().splitlines()[-1].startswith(("grattage: error: ", "Error: "))


def test_a_table_file_that_is_not_utf8_is_one_line_and_exit_2(world: World, tmp_path: Path) -> None:
    table = tmp_path / "table.toml"
    table.write_bytes(b"\xff\xfe" + (FIXTURES / "tiny_cash.toml").read_bytes())
    code, _, err = run(world, "emission", "create", "cash", "--prize-table", str(table))
    assert (code, err) == (
        2,
        f"grattage: error: {table}: UTF-16 or UTF-32 text (byte-order mark ff fe): "
        "save the file as UTF-8\n",
    )
    assert list_blocks(world.platform) == []


@pytest.mark.parametrize(
    "args",
    [("block", "close", "4242"), ("block", "open", "4242"), ("block", "commitment", "4242")],
)
def test_a_block_that_does_not_exist_is_one_line_and_exit_4(
    world: World, args: tuple[str, ...]
) -> None:
    code, out, err = run(world, *args)
    assert (code, out) == (4, "")
    assert err.startswith("grattage: error: no ") and err.endswith(" block 4242\n")


def test_sweep_finishes_abandoned_tickets_and_reconcile_is_clean(world: World) -> None:
    world.stock("astro")
    player = world.player(1000)
    tickets.buy(world.platform, player, game_name="astro", mode="play", sign="leo")
    world.clock.advance(10_000)
    # The CLI runs on the real clock, far ahead of the test's.
    code, out, _ = run(world, "sweep")
    assert (code, out) == (0, "finished 1 tickets\n")
    code, out, _ = run(world, "reconcile")
    assert code == 0 and out.endswith("reconcile: clean\n")


def test_reconcile_lists_every_discrepancy_of_a_corrupted_ledger_and_exits_1(
    world: World,
) -> None:
    world.stock("cash")
    player = world.player(40 * 500)
    sold: list[dict] = []
    while not any(ticket.prize_cents for ticket in sold):
        sold.append(tickets.buy(world.platform, player, game_name="cash", mode="auto")[0])
    winner = sold[-1]
    world.check_books = False
    with world.platform.uow.write() as repos:
        sql = repos.connection.exec_driver_sql  # type: ignore[attr-defined]
        sql(f"UPDATE accounts SET balance_cents = balance_cents + 1 WHERE player_id = {player}")
        prize_movements = (
            f"SELECT id FROM movements WHERE kind = 'prize' AND ticket_id = {winner.id}"
        )
        sql(f"DELETE FROM movements WHERE id IN ({prize_movements})")
        sql(f"UPDATE blocks SET sold = sold + 1 WHERE id = {winner.document['block']}")
        sql(
            "UPDATE movements SET from_account_id = 1, to_account_id = 1, amount_cents = -7 WHERE id = 1"
        )
    code, out, err = run(world, "reconcile")
    assert code == 1
    discrepancies = [line for line in out.splitlines() if line.startswith("DISCREPANCY")]
    text = "\n".join(discrepancies)
    assert f"account player:{player}" in text
    assert "movement 1: -7 cents from account 1 to account 1, not a positive amount" in text
    assert f"ticket {winner.id}: won" in text
    block = winner.document["block"]
    assert f"block {block}: counter says {len(sold) + 1} sold, {len(sold)} tickets exist" in text
    assert "discrepancies" in err


def test_the_demo_is_prepared_once(world: World, tmp_path: Path) -> None:
    from grattage.entrypoints.cli.platform import DEMO_EMAIL, prepare_demo
    from grattage.service import accounts

    world.stock("cash")
    world.stock("astro")
    prepare_demo(world.platform)
    prepare_demo(world.platform)
    session = accounts.log_in(world.platform, DEMO_EMAIL, "grattage-demo")
    player = accounts.authenticate(world.platform, session.token).player_id
    assert world.balance(player) == 10_000
    assert len(list_blocks(world.platform)) == 2


def test_log_key_prints_the_key_a_witness_pins_even_with_the_witness_half_configured(
    world: World,
) -> None:
    # docs/deploy.md's bootstrapping: the witness needs the operator's key before the servers
    # can be given the witness's; the outsider found `migrate` exits 2 in that state.
    from grattage.service import transparency

    env = {**cli_env(world), "GRATTAGE_WITNESS_URL": "http://127.0.0.1:9"}
    result = CliRunner().invoke(cli, ["log", "key"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == transparency.operator_key(world.platform)
