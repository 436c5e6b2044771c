"""Migration 0017 on both databases: each movement's two entries become the movement's own
row and back, and the books, the reports, the history and the back office read the same
before, between and after; a movement that is not one transfer stops the migration."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Engine, text

from grattage.adapters.database import make_engine
from grattage.adapters.migrations import alembic_config
from grattage.service import back_office, player_lookup, tickets
from grattage.service.model import Leg, Movement
from grattage.service.reconcile import reconcile
from support import World, bought


def _ledger(world: World) -> tuple[int, int]:
    """A player with deposits, auto sales (a winning one among them) and a revealed ticket."""
    world.stock("cash")
    player = world.player(20_000)
    sold = []
    while not any(ticket.prize_cents for ticket in sold) or len(sold) < 4:
        sold.append(bought(world, player, game_name="cash", mode="auto")[0])
    played = bought(world, player, game_name="cash", mode="play")[0]
    tickets.reveal(world.platform, player, played.id, reveal_all=True)
    return player, sold[0].document["block"]


def _reads(world: World, player: int, block: int) -> list[Any]:
    with world.platform.uow.read() as repos:
        since = repos.limits.movements_since(player, datetime(2000, 1, 1, tzinfo=UTC))
    books = reconcile(world.platform)
    return [
        books.discrepancies,
        back_office.report(world.platform, "blocks"),
        back_office.report(world.platform, "days"),
        back_office.block(world.platform, block),
        back_office.payout_series(world.platform, block),
        player_lookup.player_file(world.platform, player).movements,
        tickets.history(world.platform, player, limit=100),
        since,
    ]


def _rows(engine: Engine, sql: str) -> list[tuple[Any, ...]]:
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(sql))]


MOVEMENTS = (
    "SELECT id, kind, from_account_id, to_account_id, amount_cents FROM movements ORDER BY id"
)
ENTRIES = "SELECT movement_id, account_id, amount_cents FROM entries ORDER BY movement_id, id"


def test_the_migration_makes_each_movements_two_entries_its_own_row_and_back(
    world: World,
) -> None:
    player, block = _ledger(world)
    before = _reads(world, player, block)
    assert before[0] == []  # the books are clean
    engine = make_engine(world.settings.database_url)
    try:
        transfers = _rows(engine, MOVEMENTS)
        config = alembic_config(engine)
        command.downgrade(config, "0016")
        entries = _rows(engine, ENTRIES)
        command.upgrade(config, "head")
        again = _rows(engine, MOVEMENTS)
    finally:
        engine.dispose()
    # each movement was its two legs: taken from one account, added to the other
    assert entries == [
        leg
        for movement, _kind, taken_from, given_to, amount in transfers
        for leg in ((movement, taken_from, -amount), (movement, given_to, amount))
    ]
    assert {kind for _, kind, *_ in transfers} == {"deposit", "stake", "prize"}
    assert again == transfers
    assert _reads(world, player, block) == before


def test_a_movement_that_is_not_one_transfer_stops_the_migration_which_names_it(
    world: World,
) -> None:
    _ledger(world)
    engine = make_engine(world.settings.database_url)
    config = alembic_config(engine)
    try:
        command.downgrade(config, "0016")
        with engine.begin() as connection:
            # a third and a fourth leg: still balanced, but no longer one transfer
            connection.execute(
                text(
                    "INSERT INTO entries (movement_id, account_id, amount_cents) "
                    "VALUES (1, 1, 5), (1, 2, -5)"
                )
            )
        with pytest.raises(RuntimeError, match=r"movement 1 \(4 legs summing to 0 cents\)"):
            command.upgrade(config, "head")
        assert _rows(engine, "SELECT COUNT(*) FROM entries WHERE movement_id = 1") == [(4,)]
        with engine.begin() as connection:
            connection.execute(text("DELETE FROM entries WHERE amount_cents IN (5, -5)"))
        command.upgrade(config, "head")
    finally:
        engine.dispose()


@pytest.mark.parametrize(
    "legs",
    [
        [Leg(1, -5), Leg(2, 3), Leg(3, 2)],  # three legs
        [Leg(1, 0), Leg(2, 0)],  # nothing moved
        [Leg(1, -5), Leg(1, 5)],  # one account to itself
        [Leg(1, -5), Leg(2, 4)],  # unbalanced
    ],
)
def test_the_ledger_stores_only_a_positive_amount_between_two_accounts(
    world: World, legs: list[Leg]
) -> None:
    with pytest.raises(ValueError), world.platform.uow.write() as repos:
        repos.ledger.record(Movement("deposit", legs, world.clock.now()))
