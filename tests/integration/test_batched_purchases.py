"""The buy route under concurrent requests: batched on SQLite, on threads on PostgreSQL.

Whatever the path, each purchase is answered once it is durable, a refusal is its own, and a
batch that cannot be saved is answered 503 to every purchase in it, none of them kept.
"""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event
from sqlalchemy.engine import RootTransaction
from sqlalchemy.exc import OperationalError

from grattage.entrypoints.http import create_app, routes
from grattage.entrypoints.http.batching import LoopBatcher
from grattage.service import accounts, tickets
from support import PASSWORD, World, make_world

BUYERS = 24


def token_of(world: World, balance_cents: int) -> tuple[int, str]:
    email = f"buyer{secrets.token_hex(4)}@example.org"
    player_id = world.player(balance_cents, email=email)
    return player_id, accounts.log_in(world.platform, email, PASSWORD).token


def buy(world: World, tokens: list[str]) -> list[httpx.Response]:
    """The purchases, all at once, from an event loop of their own (on a thread of its own:
    the browser tests' Playwright keeps a loop running on the main thread)."""
    with ThreadPoolExecutor(max_workers=1) as runner:
        return runner.submit(lambda: asyncio.run(buy_together(world, tokens))).result()


async def buy_together(world: World, tokens: list[str]) -> list[httpx.Response]:
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://grattage") as client:
            return await _post_all(client, tokens)
    finally:
        app.state.writes.close()


async def _post_all(client: httpx.AsyncClient, tokens: list[str]) -> list[httpx.Response]:
    purchases = [
        client.post(
            "/api/games/cash/tickets",
            json={"mode": "auto"},
            headers={"Authorization": f"Bearer {token}"},
        )
        for token in tokens
    ]
    return list(await asyncio.gather(*purchases))


def ticket_of(world: World, player: int, answer: Any) -> Any:
    return tickets.get_ticket(world.platform, player, answer.json()["id"])


def commits_of(world: World) -> list[int]:
    counted = [0]
    engine = world.platform.uow.engine  # type: ignore[attr-defined]

    @event.listens_for(engine, "commit")
    def count(_connection: Any) -> None:
        counted[0] += 1

    return counted


@pytest.mark.parametrize("world_settings", [{"run_drawer": False}])  # only the sales commit
def test_concurrent_purchases_are_all_sold_once_and_on_sqlite_share_their_commits(
    world: World,
) -> None:
    world.stock("cash")
    player, token = token_of(world, 500 * BUYERS)
    commits = commits_of(world)
    answers = buy(world, [token] * BUYERS)
    assert [answer.status_code for answer in answers] == [201] * BUYERS
    assert len({answer.json()["id"] for answer in answers}) == BUYERS
    if world.settings.database_url.startswith("sqlite"):
        assert commits[0] < BUYERS / 2, f"{commits[0]} commits for {BUYERS} purchases"
    world.draw()  # sold covered in the batch, drawn after it
    prizes = sum(ticket_of(world, player, answer).prize_cents or 0 for answer in answers)
    assert world.balance(player) == prizes


def test_a_refused_purchase_in_a_batch_gets_its_own_error_and_the_others_stand(
    world: World,
) -> None:
    world.stock("cash")
    rich, rich_token = token_of(world, 500 * 8)
    poor, poor_token = token_of(world, 0)
    answers = buy(world, [rich_token, poor_token] * 8)
    codes = [answer.status_code for answer in answers]
    assert codes == [201, 409] * 8
    assert {answer.json()["error"] for answer in answers[1::2]} == {"insufficient_balance"}
    assert world.balance(poor) == 0
    world.draw()
    won = sum(ticket_of(world, rich, answer).prize_cents or 0 for answer in answers[::2])
    assert world.balance(rich) == won


@pytest.fixture
def sqlite_world(tmp_path: Path) -> Iterator[World]:
    """Batches are SQLite's: PostgreSQL commits each purchase on its own."""
    with make_world("sqlite", tmp_path) as built:
        yield built


def test_a_batch_that_cannot_be_saved_is_answered_503_to_every_purchase_and_keeps_none(
    sqlite_world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = sqlite_world
    world.stock("cash")
    player, token = token_of(world, 500 * BUYERS)
    commit = RootTransaction.commit
    failed = []

    def disk_fails_on_the_batch_commit(transaction: RootTransaction) -> None:
        if threading.current_thread().name.startswith("grattage-commit"):
            failed.append(1)
            raise OperationalError("COMMIT", {}, sqlite3.OperationalError("disk I/O error"))
        commit(transaction)

    monkeypatch.setattr(RootTransaction, "commit", disk_fails_on_the_batch_commit)
    answers = buy(world, [token] * BUYERS)
    monkeypatch.undo()
    assert [answer.status_code for answer in answers] == [503] * BUYERS
    assert 0 < len(failed) < BUYERS / 2
    assert world.balance(player) == 500 * BUYERS
    assert tickets.history(world.platform, player, limit=100)[0] == []
    # The platform carries on: the next purchase is sold and kept.
    assert buy(world, [token])[0].status_code == 201


def test_the_buy_route_batches_on_sqlite_only(world: World) -> None:
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    batched = isinstance(app.state.writes, LoopBatcher)
    assert batched == world.settings.database_url.startswith("sqlite")


def test_using_the_platform_on_a_held_batchs_thread_outside_the_batch_fails_loudly(
    sqlite_world: World,
) -> None:
    from grattage.adapters.group_commit import OutsideTheHeldBatchError

    world = sqlite_world
    player = world.player(1000)
    uow: Any = world.platform.uow
    batch = uow.new_batch()  # its work runs on this thread
    with ThreadPoolExecutor(max_workers=1) as helper:
        helper.submit(uow.hold, batch).result()
        try:
            assert batch.run(lambda: accounts.deposit(world.platform, player, 100)) == 1100
            with pytest.raises(OutsideTheHeldBatchError):
                accounts.balance(world.platform, player)
            with pytest.raises(OutsideTheHeldBatchError):
                accounts.deposit(world.platform, player, 100)
        finally:
            assert helper.submit(uow.release).result() == 1
    assert world.balance(player) == 1100


def test_the_buy_route_shapes_its_answer_once_the_purchase_is_done(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On SQLite a held batch keeps the database's one write lock until all its purchases
    are done: the JSON of an answer, which needs no lock, is made after the batch is let go
    (on PostgreSQL, off the purchase threads)."""
    world.stock("cash")
    _, token = token_of(world, 500)
    shaped_while: list[tuple[bool, str]] = []
    shape = routes.ticket_response

    def watched(*args: Any, **kwargs: Any) -> Any:
        group = getattr(world.platform.uow, "_group", None)
        held = group is not None and group._held is not None
        shaped_while.append((held, threading.current_thread().name))
        return shape(*args, **kwargs)

    monkeypatch.setattr(routes, "ticket_response", watched)
    assert buy(world, [token])[0].status_code == 201
    [(held, thread)] = shaped_while
    assert not held and not thread.startswith("grattage-buy")


def test_a_batch_whose_log_merge_fails_is_answered_503_to_every_purchase_and_keeps_none(
    sqlite_world: World,
) -> None:
    """An outsider's finding: with the log's tree size lowered in the database (log_state has
    no trigger), the merge run inside each purchase batch failed; the batch was committed and
    its purchases never answered — stakes taken, requests hung."""
    from sqlalchemy import text

    from grattage.errors import Unavailable
    from grattage.service import transparency

    world = sqlite_world
    world.stock("cash")
    player = world.player(500 * 4)
    engine = world.platform.uow.engine  # type: ignore[attr-defined]
    transparency.integrate_all(world.platform)
    with engine.begin() as connection:  # the owner drops the trigger, lowers the tree's size
        connection.execute(text("DROP TRIGGER log_state_size_only_grows"))
        connection.execute(text("UPDATE log_state SET tree_size = tree_size - 1"))
    batcher = LoopBatcher(
        world.platform.uow,  # type: ignore[arg-type]
        after_batch=lambda: transparency.integrate(world.platform),
    )

    def sale() -> Any:
        return tickets.buy(world.platform, player, game_name="cash", mode="auto")

    async def four_purchases() -> list[Any]:
        return await asyncio.wait_for(
            asyncio.gather(*(batcher.run(sale) for _ in range(4)), return_exceptions=True), 10
        )

    try:
        with ThreadPoolExecutor(max_workers=1) as runner:
            answers = runner.submit(lambda: asyncio.run(four_purchases())).result()
    finally:
        batcher.close()
    assert [type(answer) for answer in answers] == [Unavailable] * 4, answers
    assert world.balance(player) == 500 * 4
    assert tickets.history(world.platform, player, limit=10)[0] == []
