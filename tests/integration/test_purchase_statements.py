"""The statements one purchase sends: on PostgreSQL each is a round trip, and from the unit's
block row to the commit every one of them lengthens the time the next buyer of that block
waits (docs/platform.md, Throughput)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event

from grattage.adapters.driver_sql import DriverSql
from grattage.blocks.sealing import unseal_tiers
from grattage.service import emissions, tickets
from support import World


@contextmanager
def statements_of(world: World) -> Iterator[list[str]]:
    """The SQL of every statement sent meanwhile, on the driver or through SQLAlchemy."""
    sent: list[str] = []
    engine = world.platform.uow.engine  # type: ignore[attr-defined]
    run_on_driver = DriverSql.__call__

    def recorded(self: DriverSql, connection: Any, parameters: Any = None) -> Any:
        sent.append(self.sql)
        return run_on_driver(self, connection, parameters)

    def through_sqlalchemy(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        sent.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", through_sqlalchemy)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DriverSql, "__call__", recorded)
        try:
            yield sent
        finally:
            event.remove(engine, "before_cursor_execute", through_sqlalchemy)


def _purchases(world: World) -> Iterator[list[str]]:
    """The statements of each purchase and of its draw (a drawn block pays at its draw)."""
    player = world.player(balance_cents=1_000_00)
    tickets.buy(world.platform, player, game_name="cash", mode="auto")  # caches warmed
    world.draw()
    while True:
        with statements_of(world) as sent:
            tickets.buy(world.platform, player, game_name="cash", mode="auto")
            world.draw()
        yield sent


def test_a_purchase_locks_its_buyers_wallet_once(world: World) -> None:
    world.stock("cash")
    sent = next(_purchases(world))
    wallet_locks = [sql for sql in sent if sql.startswith("SELECT id FROM accounts")]
    # SQLite needs no row lock: its write transaction already excludes every other writer.
    assert len(wallet_locks) == (0 if world.settings.database_url.startswith("sqlite") else 1)


def test_a_movement_and_its_two_legs_are_one_row_written_in_one_statement(world: World) -> None:
    world.stock("cash")
    purchases = _purchases(world)
    # an auto purchase writes its stake, and its prize when it wins: look until one wins
    sent = next(sent for sent in purchases if sum("INSERT INTO movements" in s for s in sent) > 1)
    movements = [sql for sql in sent if "INSERT INTO movements" in sql]
    assert len(movements) == 2  # on both databases: no entries table, no RETURNING id
    assert all("from_account_id, to_account_id" in sql for sql in movements)
    assert not any("INSERT INTO entries" in sql or "RETURNING" in sql for sql in movements)


def test_a_blocks_sealed_tiers_are_read_once_per_chunk_not_once_per_sale(world: World) -> None:
    world.stock("cash")
    purchases = _purchases(world)  # the first purchase, a warm-up, read the chunk
    reads = [sum("FROM block_chunks" in sql for sql in next(purchases)) for _ in range(5)]
    assert reads == [0, 0, 0, 0, 0]


def test_every_sale_of_a_block_of_many_chunks_pays_its_own_units_prize(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emissions, "SEALED_CHUNK_UNITS", 7)  # 40 units: 6 chunks, the last short
    world.stock("cash")
    player = world.player(balance_cents=1_000_00)
    sold = [
        tickets.buy(world.platform, player, game_name="cash", mode="auto")[0] for _ in range(40)
    ]
    world.draw()  # a drawn block's units are unsealed by its draws, anywhere in the block
    positions = []
    with world.platform.uow.read() as repos:
        loaded = world.platform.loaded_block(repos, 1)
        assert loaded.chunk_units == 7
        for view in sold:
            ticket = repos.tickets.get(view.id)
            assert ticket is not None
            positions.append(ticket.position)
            sealed = repos.blocks.sealed_tiers(loaded.block, ticket.position, 1)
            tier = unseal_tiers(loaded.key, sealed, ticket.position)[0]
            assert ticket.prize_cents == loaded.game.table.prize_of_tier(tier), ticket.position
    assert sorted(positions) == list(range(40))


def test_a_read_holds_no_transaction_open_on_postgresql(world: World) -> None:
    """Under READ COMMITTED a read's statements each see their own snapshot anyway: BEGIN
    and COMMIT around them were two more round trips of every request's session lookup.
    SQLite keeps its read transaction (one snapshot of the file for the whole read)."""
    player = world.player()
    with world.platform.uow.read() as repos:
        repos.ledger.player_account(player)
        driver = repos.connection.connection.driver_connection  # type: ignore[attr-defined]
        if world.settings.database_url.startswith("sqlite"):
            assert driver.in_transaction
        else:
            assert driver.info.transaction_status.name == "IDLE"
    with world.platform.uow.write() as repos:  # and a write is still one transaction
        repos.ledger.player_account(player)
        driver = repos.connection.connection.driver_connection  # type: ignore[attr-defined]
        if world.settings.database_url.startswith("sqlite"):
            assert driver.in_transaction
        else:
            assert driver.info.transaction_status.name == "INTRANS"
