"""PostgreSQL's purchases in lane batches (adapters/lane_batch.py), on a real database with
real threads: a batch keeps what it sold and rolls back only a refused purchase; a batch whose
commit fails keeps nothing; two batches of one game take turns on its block rows without a
deadlock; a batch never waits for a wallet another transaction holds (the drawer crediting a
round's winners deadlocked with it in the bench); two games' batches crossing on two players'
wallets lose one purchase (run again by the lane), not a batch."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import RootTransaction, create_engine, text
from sqlalchemy.exc import OperationalError

from grattage.adapters.lane_batch import LaneBatch
from grattage.errors import InsufficientBalance, OutcomeUnknown, Unavailable, WalletBusy
from grattage.service import accounts, tickets
from grattage.service.reconcile import reconcile
from support import World, make_world

pytestmark = pytest.mark.postgres


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with make_world("postgres", tmp_path, drawn=False) as made:
        made.stock("cash")
        made.stock("astro")
        yield made


def _buy(world: World, player: int, game: str) -> Callable[[], Any]:
    sign = {"sign": "leo"} if game == "astro" else {}
    return lambda: tickets.buy(world.platform, player, game_name=game, mode="auto", **sign)


def _open(world: World, game: str) -> LaneBatch:
    return world.platform.uow.open_lane_batch(game)  # type: ignore[attr-defined, no-any-return]


def _sold(world: World, game: str) -> int:
    with world.platform.uow.read() as repos:
        return sum(block.sold for block in repos.blocks.all(game))


def _assert_books_balance(world: World) -> None:
    assert reconcile(world.platform).clean


def test_a_batch_keeps_its_purchases_and_rolls_back_only_the_refused_one(world: World) -> None:
    rich, poor = world.player(5_000), world.player(100)
    batch = _open(world, "cash")
    first = batch.run(_buy(world, rich, "cash"))
    with pytest.raises(InsufficientBalance):
        batch.run(_buy(world, poor, "cash"))
    second = batch.run(_buy(world, rich, "cash"))
    assert _sold(world, "cash") == 0  # nothing is visible before the batch commits
    assert batch.commit() == 2
    assert _sold(world, "cash") == 2
    assert first[0].id != second[0].id
    assert world.balance(poor) == 100
    _assert_books_balance(world)


def test_a_batch_whose_commit_fails_keeps_none_of_its_purchases(world: World) -> None:
    player = world.player(5_000)
    before = world.balance(player)
    batch = _open(world, "cash")
    for _ in range(3):
        batch.run(_buy(world, player, "cash"))
    backend = batch.connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    killer = create_engine(world.settings.database_url)
    with killer.connect() as connection:
        connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": backend})
    killer.dispose()
    with pytest.raises(Unavailable):
        batch.commit()
    assert _sold(world, "cash") == 0
    assert world.balance(player) == before
    _assert_books_balance(world)


def test_a_batch_whose_commit_answer_is_lost_says_its_outcome_is_unknown(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server committed, the link died before its answer (a cut cable, issue 17's
    cluster): "nothing was kept" would be a lie, so the batch says the outcome is unknown."""
    player = world.player(5_000)
    batch = _open(world, "cash")
    batch.run(_buy(world, player, "cash"))
    transaction = batch._transaction
    kind = type(transaction)
    real_commit = kind.commit  # the class's: a transaction has slots, no attributes of its own

    def committed_then_cut_off(self: Any) -> None:
        real_commit(self)
        if self is transaction:
            lost = psycopg.OperationalError("server closed the connection unexpectedly")
            raise OperationalError("COMMIT", {}, lost, connection_invalidated=True)

    monkeypatch.setattr(kind, "commit", committed_then_cut_off)
    try:
        with pytest.raises(OutcomeUnknown):
            batch.commit()
    finally:
        monkeypatch.undo()
    assert _sold(world, "cash") == 1  # kept: a retry with the same key answers it
    _assert_books_balance(world)


@pytest.fixture
def drawn(tmp_path: Path) -> Iterator[World]:
    with make_world("postgres", tmp_path, drawn=True) as made:
        made.stock("cash", blocks=3)  # its blocks end and open while the batches wait
        yield made


def test_two_batches_of_one_game_take_turns_and_sell_each_unit_once(drawn: World) -> None:
    # A drawn sale debits its stake first and takes its block's row last.
    world = drawn
    players = [world.player(20_000) for _ in range(6)]
    failures: list[BaseException] = []

    def worker(order: list[int]) -> None:  # one worker process's lane: batch after batch
        try:
            for _ in range(5):
                batch = _open(world, "cash")
                for player in order:
                    batch.run(_buy(world, player, "cash"))
                batch.commit()
        except BaseException as failed:
            failures.append(failed)

    # In opposite orders: a batch holding a wallet while it waited for the block row, held
    # by the other batch, which then wanted that wallet, would deadlock.
    orders = [players, players[::-1]]
    threads = [threading.Thread(target=worker, args=(order,)) for order in orders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures
    assert _sold(world, "cash") == 2 * 5 * len(players)
    assert world.draw() == 2 * 5 * len(players)
    engine = create_engine(world.settings.database_url)
    with engine.connect() as connection:
        units = connection.execute(
            text("SELECT count(DISTINCT (block_id, position)) FROM tickets")
        ).scalar()
    engine.dispose()
    assert units == 2 * 5 * len(players)
    _assert_books_balance(world)


def test_two_games_batches_crossing_on_two_wallets_lose_no_batch(world: World) -> None:
    # Cash's batch debits Ann then Bob; Astro's, at the same time, Bob then Ann: each wants the
    # wallet the other holds. Neither waits for it (waiting, they deadlocked): a second
    # purchase is WalletBusy, the first ones commit, and run again it sells.
    ann, bob = world.player(5_000), world.player(5_000)
    both_hold_one = threading.Barrier(2)
    outcomes: dict[str, list[str]] = {"cash": [], "astro": []}

    def lane(game: str, first: int, second: int) -> None:
        batch = _open(world, game)
        for index, player in enumerate((first, second)):
            try:
                batch.run(_buy(world, player, game))
                outcomes[game].append("sold")
            except WalletBusy:
                outcomes[game].append("busy")
            if index == 0:
                both_hold_one.wait(timeout=30)
        batch.commit()

    threads = [
        threading.Thread(target=lane, args=("cash", ann, bob)),
        threading.Thread(target=lane, args=("astro", bob, ann)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # Both are busy, unless one batch committed before the other tried its second wallet.
    assert [answers[0] for answers in outcomes.values()] == ["sold", "sold"]
    assert "busy" in (outcomes["cash"][1], outcomes["astro"][1]), outcomes
    for game, player in (("cash", bob), ("astro", ann)):  # as the lane runs them again
        if outcomes[game][1] == "busy":
            batch = _open(world, game)
            batch.run(_buy(world, player, game))
            batch.commit()
    assert (_sold(world, "cash"), _sold(world, "astro")) == (2, 2)
    _assert_books_balance(world)


def test_a_batch_does_not_wait_for_a_wallet_another_transaction_holds(world: World) -> None:
    # As the drawer does: a transaction holds Bob's wallet (crediting his prize) and wants
    # Ann's, which the batch holds. Waiting for Bob's, the batch would deadlock with it.
    ann, bob = world.player(5_000), world.player(5_000)
    with world.platform.uow.read() as repos:
        ann_wallet, bob_wallet = (repos.ledger.player_account_id(p) for p in (ann, bob))
    batch = _open(world, "cash")
    batch.run(_buy(world, ann, "cash"))
    engine = create_engine(world.settings.database_url)
    holder = engine.connect()
    holder_transaction = holder.begin()
    lock = text("SELECT id FROM accounts WHERE id = :id FOR UPDATE")
    holder.execute(lock, {"id": bob_wallet})
    wants_ann = threading.Thread(target=lambda: holder.execute(lock, {"id": ann_wallet}))
    wants_ann.start()
    started = time.monotonic()
    with pytest.raises(WalletBusy):
        batch.run(_buy(world, bob, "cash"))
    answered_in = time.monotonic() - started
    assert batch.commit() == 1
    wants_ann.join(timeout=10)
    assert not wants_ann.is_alive()  # it had Ann's wallet once the batch committed
    holder_transaction.rollback()
    holder.close()
    engine.dispose()
    assert answered_in < 0.5
    assert world.balance(bob) == 5_000
    assert _sold(world, "cash") == 1
    _assert_books_balance(world)


def test_a_plain_write_whose_commit_answer_is_lost_says_its_outcome_is_unknown(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same outside a lane batch (a deposit, a reveal, a finish): the server committed,
    the link died before its answer — the write may have been kept, so never a plain 503."""
    player = world.player(1_000)
    kind = RootTransaction
    real_commit = kind.commit

    def committed_then_cut_off(self: Any) -> None:
        real_commit(self)
        lost = psycopg.OperationalError("server closed the connection unexpectedly")
        raise OperationalError("COMMIT", {}, lost, connection_invalidated=True)

    monkeypatch.setattr(kind, "commit", committed_then_cut_off)
    try:
        with pytest.raises(OutcomeUnknown):
            accounts.deposit(world.platform, player, 500)
    finally:
        monkeypatch.undo()
    assert world.balance(player) == 1_500  # kept
    _assert_books_balance(world)
