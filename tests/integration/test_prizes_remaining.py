"""The prizes left in each open block: the table minus the tickets sold, exact, cheap to read;
and the operator's choice to close a block once its top prize is sold out."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from alembic import command
from alembic.script import ScriptDirectory
from fastapi.testclient import TestClient
from sqlalchemy import delete

from grattage.adapters.database import make_engine
from grattage.adapters.migrations import alembic_config
from grattage.adapters.tables import block_prizes_sold
from grattage.blocks.shuffle import secure_generator
from grattage.errors import NotOnSale
from grattage.service import audit_trail, emissions, prizes_left
from grattage.service.emissions import list_blocks
from grattage.service.reconcile import reconcile
from grattage.service.records import OpenBlockPrizes, PrizeTier, TicketView
from integration.test_concurrency import race
from support import World, bought, tiny_table

TABLE = {10000: 2, 1000: 3, 500: 5}
"""tests/fixtures/tiny_cash.toml: 40 units, 2 × 100 €, 3 × 10 €, 5 × 5 €."""
TOP = 10000
LAST_TOP_POSITION = 24
"""Where the second 100 € unit lies in a block shuffled by :func:`seeded_blocks`' generator."""


@pytest.fixture
def seeded_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks shuffled by a fixed generator, so the test knows where the top prizes lie (units
    14 and 24 of each block): the real shuffle, a known key."""

    def seeded() -> np.random.Generator:
        return secure_generator(bytes(32))

    monkeypatch.setattr(emissions, "secure_generator", seeded)


def _left(sold_prizes: list[int]) -> list[dict[str, int]]:
    sold = Counter(sold_prizes)
    return [{"prize_cents": p, "count": n - sold[p]} for p, n in TABLE.items()]


def _buy(world: World, player: int, count: int) -> list[TicketView]:
    return [bought(world, player, game_name="cash", mode="auto")[0] for _ in range(count)]


def _cash(client: TestClient) -> dict[str, Any]:
    games = client.get("/api/games").json()["games"]
    return next(game for game in games if game["name"] == "cash")


def test_the_games_and_blocks_answers_give_each_open_blocks_table_minus_its_tickets_sold(
    world: World, client: TestClient
) -> None:
    world.stock("cash", blocks=2)
    first, pending = (block.id for block in list_blocks(world.platform, "cash"))
    before = _cash(client)
    assert before["open_blocks"] == [
        {"block_id": first, "size": 40, "sold": 0, "prizes_remaining": _left([])}
    ]
    assert before["top_prizes_remaining"] == {"prize_cents": TOP, "count": 2}
    sold = _buy(world, world.player(20 * 500), 17)
    prizes = [ticket.prize_cents for ticket in sold]
    listing = _cash(client)
    assert listing["open_blocks"] == [
        {"block_id": first, "size": 40, "sold": 17, "prizes_remaining": _left(prizes)}
    ]
    assert listing["top_prizes_remaining"] == {
        "prize_cents": TOP,
        "count": 2 - prizes.count(TOP),
    }
    public = {block["id"]: block for block in client.get("/api/blocks").json()["blocks"]}
    assert public[first]["prizes_remaining"] == _left(prizes)
    assert public[pending]["prizes_remaining"] is None  # not on sale: nothing to publish


def test_a_block_sold_to_its_end_leaves_the_next_one_listed_with_its_whole_table(
    world: World, client: TestClient
) -> None:
    world.stock("cash", blocks=2)
    first, second = (block.id for block in list_blocks(world.platform, "cash"))
    next_one = _buy(world, world.player(41 * 500), 41)[-1]
    listing = _cash(client)
    assert listing["open_blocks"] == [
        {
            "block_id": second,
            "size": 40,
            "sold": 1,
            "prizes_remaining": _left([next_one.prize_cents]),
        }
    ]
    public = {block["id"]: block for block in client.get("/api/blocks").json()["blocks"]}
    assert public[first]["state"] == "exhausted" and public[first]["prizes_remaining"] is None


def test_no_open_block_means_no_top_prizes_remaining_line(world: World, client: TestClient) -> None:
    listing = _cash(client)
    assert (listing["open_blocks"], listing["top_prizes_remaining"]) == ([], None)


def test_many_buyers_racing_on_one_block_leave_its_prize_counts_exact(world: World) -> None:
    world.stock("cash", blocks=2)
    block_id = list_blocks(world.platform, "cash")[0].id
    buyers = [world.player(2 * 500) for _ in range(24)]

    def two_tickets(index: int) -> list[int]:
        return [ticket.prize_cents for ticket in _buy(world, buyers[index], 2)]

    results = race(24, two_tickets)
    assert not [result for result in results if isinstance(result, Exception)]
    with world.platform.uow.read() as repos:
        sold = repos.blocks.prizes_sold([block_id])[block_id]
        block = repos.blocks.get(block_id)
    assert block is not None and block.sold == 40  # the block sold out; 8 from the next one
    assert sold == TABLE  # every prize of the table, counted once each
    assert reconcile(world.platform).clean


def test_a_counter_off_its_tickets_is_a_reconciliation_discrepancy(world: World) -> None:
    world.stock("cash")
    _buy(world, world.player(40 * 500), 40)
    with world.platform.uow.write() as repos:
        repos.blocks.count_prize_sold(1, 500)  # a sale counted twice
        connection = repos.blocks.db  # type: ignore[attr-defined]
        connection.execute(delete(block_prizes_sold).where(block_prizes_sold.c.prize_cents == TOP))
    report = reconcile(world.platform)
    assert [(d.rule, d.facts) for d in report.discrepancies] == [
        (
            "prize_counter_off_tickets",
            {"block": 1, "prize_cents": 500, "counter": 6, "tickets": 5},
        ),
        (
            "prize_counter_off_tickets",
            {"block": 1, "prize_cents": TOP, "counter": 0, "tickets": 2},
        ),
    ]
    world.check_books = False


def test_with_the_setting_off_a_block_sells_on_after_its_top_prize_is_gone(
    world: World, seeded_blocks: None
) -> None:
    world.stock("cash", blocks=2)
    player = world.player(40 * 500)
    sold = _buy(world, player, 40)
    assert [ticket.prize_cents for ticket in sold].count(TOP) == 2
    states = [block.state for block in list_blocks(world.platform, "cash")]
    assert states == ["exhausted", "open"]


CLOSING = {"close_block_when_top_prize_sold": True}
SOLD_IN_ORDER = {**CLOSING, "drawn": False}
"""The seeded blocks' units sold in order (unit n to sale n), so that the sale of the last top
prize is known; a drawn block's last top prize closes it at its draw (test_drawn_sales)."""


@pytest.mark.parametrize("world_settings", [SOLD_IN_ORDER])
def test_the_sale_of_a_blocks_last_top_prize_closes_it_and_the_next_block_opens_audited(
    world: World, client: TestClient, seeded_blocks: None
) -> None:
    world.stock("cash", blocks=2)
    first, second = (block.id for block in list_blocks(world.platform, "cash"))
    player = world.player(40 * 500)
    sold = _buy(world, player, LAST_TOP_POSITION + 1)
    assert [ticket.prize_cents for ticket in sold].count(TOP) == 2
    assert [block.state for block in list_blocks(world.platform, "cash")] == ["closed", "open"]
    assert list_blocks(world.platform, "cash")[0].sold == LAST_TOP_POSITION + 1
    assert _buy(world, player, 1)[0].document["block"] == second  # type: ignore[index]
    entries = [
        (entry.actor, entry.action, entry.subject, entry.details)
        for entry in audit_trail.latest(world.platform, 2)
    ]
    assert entries == [
        (
            "system:sale",
            "block.open",
            f"block:{second}",
            {"from": "pending", "to": "open", "reason": "top prize sold out"},
        ),
        (
            "system:sale",
            "block.closed",
            f"block:{first}",
            {"from": "open", "to": "closed", "reason": "top prize sold out"},
        ),
    ]
    assert _cash(client)["top_prizes_remaining"] == {"prize_cents": TOP, "count": 2}


@pytest.mark.parametrize("world_settings", [SOLD_IN_ORDER])
def test_buyers_racing_for_a_blocks_last_top_prizes_close_it_once_and_buy_nothing_after(
    world: World, seeded_blocks: None
) -> None:
    world.stock("cash", blocks=1)
    buyers = [world.player(2 * 500) for _ in range(30)]

    def two_tickets(index: int) -> list[int | Exception]:
        positions: list[int | Exception] = []
        for _ in range(2):
            try:
                positions.append(_buy(world, buyers[index], 1)[0].document["position"])  # type: ignore[index]
            except NotOnSale as refused:
                positions.append(refused)
        return positions

    outcomes = [outcome for result in race(30, two_tickets) for outcome in result]
    positions = sorted(outcome for outcome in outcomes if isinstance(outcome, int))
    assert positions == list(range(LAST_TOP_POSITION + 1))  # nothing sold after the last top
    assert len(outcomes) == 60
    [block] = list_blocks(world.platform, "cash")
    assert (block.state, block.sold) == ("closed", LAST_TOP_POSITION + 1)
    actions = [entry.action for entry in audit_trail.latest(world.platform, 100)]
    assert actions.count("block.closed") == 1


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # the seeded order, as sold
def test_a_server_started_with_the_setting_closes_the_blocks_whose_top_prize_is_gone(
    world: World, seeded_blocks: None
) -> None:
    world.stock("cash", blocks=2)
    first, second = (block.id for block in list_blocks(world.platform, "cash"))
    _buy(world, world.player(40 * 500), LAST_TOP_POSITION + 1)
    assert prizes_left.close_blocks_top_prize_sold_out(world.platform) == []  # setting off
    assert [block.state for block in list_blocks(world.platform, "cash")] == ["open", "pending"]
    world.platform.policy = world.settings.model_copy(update=CLOSING)
    assert prizes_left.close_blocks_top_prize_sold_out(world.platform) == [first]
    assert [block.state for block in list_blocks(world.platform, "cash")] == ["closed", "open"]
    assert prizes_left.close_blocks_top_prize_sold_out(world.platform) == []
    assert [
        (entry.actor, entry.action, entry.subject, entry.details["reason"])
        for entry in audit_trail.latest(world.platform, 2)
    ] == [
        ("system:start", "block.open", f"block:{second}", "top prize sold out"),
        ("system:start", "block.closed", f"block:{first}", "top prize sold out"),
    ]


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # sold before 0008: undrawn
def test_the_migration_counts_the_prizes_of_the_tickets_sold_before_it(world: World) -> None:
    world.stock("cash")
    sold = [ticket.prize_cents for ticket in _buy(world, world.player(30 * 500), 30)]
    engine = make_engine(world.settings.database_url)
    try:
        config = alembic_config(engine)
        before = ScriptDirectory.from_config(config).get_revision("0008").down_revision
        assert isinstance(before, str)
        command.downgrade(config, before)
        command.upgrade(config, "head")
    finally:
        engine.dispose()
    with world.platform.uow.read() as repos:
        counted = repos.blocks.prizes_sold([1])[1]
    assert counted == {prize: n for prize, n in Counter(sold).items() if prize}


def test_remaining_merges_tiers_of_one_amount_and_the_top_sums_over_blocks() -> None:
    table = tiny_table("cash")
    assert prizes_left.remaining(table, {500: 5, 10000: 1}) == (
        PrizeTier(10000, 1),
        PrizeTier(1000, 3),
        PrizeTier(500, 0),
    )


def test_the_top_prizes_remaining_sum_the_largest_amount_over_the_open_blocks() -> None:
    def block(block_id: int, *left: tuple[int, int]) -> OpenBlockPrizes:
        return OpenBlockPrizes(block_id, 40, 0, tuple(PrizeTier(p, n) for p, n in left))

    assert prizes_left.top_prizes_remaining([]) is None
    assert prizes_left.top_prizes_remaining(
        [block(1, (10000, 0), (500, 3)), block(2, (10000, 2)), block(3, (5000, 1))]
    ) == PrizeTier(10000, 2)
