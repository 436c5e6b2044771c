"""The lane runner of PostgreSQL's purchases (entrypoints/http/batching.py, LaneBatches), on a
fake unit of work: a purchase is answered only once its batch has committed, a refusal is
answered alone, a failed commit answers the whole batch, and what was queued while a batch
waited for its turn in vain is answered with it, not made to wait its own turn; a purchase
whose wallet another transaction holds runs again in a later batch, for a while."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from grattage.entrypoints.http import batching
from grattage.entrypoints.http.batching import LaneBatches
from grattage.errors import InsufficientBalance, Unavailable, WalletBusy


class FakeBatch:
    def __init__(self, uow: FakeUow) -> None:
        self.uow = uow
        self.ran: list[Any] = []

    def run(self, work: Callable[[], Any]) -> Any:
        value = work()
        self.ran.append(value)
        return value

    def commit(self) -> int:
        self.uow.commits.append(list(self.ran))
        if self.uow.commit_fails:
            raise Unavailable("the database could not save this change; retry")
        return len(self.ran)


class FakeUow:
    holds_lane_batches = True

    def __init__(self) -> None:
        self.commits: list[list[Any]] = []
        self.commit_fails = False
        self.open_gate: threading.Event | None = None  # set: the next open waits, then fails
        self.opening = threading.Event()

    def open_lane_batch(self, lane: str) -> FakeBatch:
        gate = self.open_gate
        if gate is not None:
            self.open_gate = None
            self.opening.set()
            gate.wait(10)
            raise Unavailable("a lock could not be had in time")
        return FakeBatch(self)


def _run(uow: FakeUow, scenario: Callable[[LaneBatches], Any]) -> Any:
    async def main() -> Any:
        lanes = LaneBatches(uow, ["cash"])  # type: ignore[arg-type]
        try:
            return await scenario(lanes)
        finally:
            lanes.close()

    # On a thread of its own: an earlier test of the session may have left an event loop
    # running on this one, and asyncio.run refuses to start under it.
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, main()).result(timeout=60)


def test_purchases_are_answered_after_their_batch_commits_and_a_refusal_alone() -> None:
    uow = FakeUow()

    def refused() -> None:
        raise InsufficientBalance("not enough")

    async def scenario(lanes: LaneBatches) -> list[Any]:
        return await asyncio.gather(
            lanes.run(lambda: 1, "cash"),
            lanes.run(refused, "cash"),
            lanes.run(lambda: 3, "cash"),
            return_exceptions=True,
        )

    first, second, third = _run(uow, scenario)
    assert (first, third) == (1, 3)
    assert isinstance(second, InsufficientBalance)
    assert sum(len(batch) for batch in uow.commits) == 2  # both sales, in one or two commits


def test_a_failed_commit_answers_every_purchase_of_its_batch_unavailable() -> None:
    uow = FakeUow()
    uow.commit_fails = True

    async def scenario(lanes: LaneBatches) -> list[Any]:
        return await asyncio.gather(
            *(lanes.run(lambda: 1, "cash") for _ in range(5)), return_exceptions=True
        )

    assert all(isinstance(answer, Unavailable) for answer in _run(uow, scenario))


def test_what_queued_while_a_batch_waited_in_vain_is_answered_with_it() -> None:
    uow = FakeUow()
    gate = threading.Event()
    uow.open_gate = gate
    opened_after: list[int] = []

    async def scenario(lanes: LaneBatches) -> list[Any]:
        first = asyncio.ensure_future(lanes.run(lambda: 1, "cash"))
        await asyncio.get_running_loop().run_in_executor(None, uow.opening.wait, 10)
        queued = [asyncio.ensure_future(lanes.run(lambda: 2, "cash")) for _ in range(3)]
        await asyncio.sleep(0.05)
        gate.set()  # the first batch's wait ends in a lock timeout
        answers = await asyncio.gather(first, *queued, return_exceptions=True)
        opened_after.append(len(uow.commits))
        return answers

    answers = _run(uow, scenario)
    assert all(isinstance(answer, Unavailable) for answer in answers)
    assert opened_after == [0]  # none of them waited for a batch of its own


@pytest.mark.parametrize("lane", ["astro", "no-such-game"])
def test_a_lane_not_registered_shares_the_spare_lane(lane: str) -> None:
    async def scenario(lanes: LaneBatches) -> Any:
        return await lanes.run(lambda: "done", lane)

    assert _run(FakeUow(), scenario) == "done"


def test_a_purchase_whose_wallet_is_held_runs_again_in_a_later_batch() -> None:
    uow = FakeUow()
    tries: list[int] = []

    def held_twice() -> str:
        tries.append(1)
        if len(tries) <= 2:
            raise WalletBusy("held")
        return "sold"

    async def scenario(lanes: LaneBatches) -> Any:
        return await lanes.run(held_twice, "cash")

    assert _run(uow, scenario) == "sold"
    assert len(tries) == 3
    assert len(uow.commits) == 3  # each try in a batch of its own, after the one before


def test_a_wallet_held_longer_than_the_retry_time_is_answered_503(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batching, "WALLET_BUSY_RETRY_SECONDS", 0.05)

    def always_held() -> None:
        raise WalletBusy("held")

    async def scenario(lanes: LaneBatches) -> Any:
        return await asyncio.gather(lanes.run(always_held, "cash"), return_exceptions=True)

    (answer,) = _run(FakeUow(), scenario)
    assert isinstance(answer, WalletBusy) and isinstance(answer, Unavailable)
