"""Drawn blocks (issue 15), on SQLite and PostgreSQL: a sale is covered at once, drawn from the
witness's round once its head was cosigned, each sale exactly once and in index order."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from grattage.adapters.database import make_engine
from grattage.adapters.migrations import alembic_config
from grattage.blocks.draw import Resolution, draw_index, replay
from grattage.blocks.draw_records import document_sha256
from grattage.errors import Conflict, Unavailable
from grattage.service import draw_sale, emissions, fairness, tickets, transparency
from grattage.service.draw_sale import moment_of_ms, round_for_sale
from grattage.service.drawer import Drawer
from grattage.service.drawer_seen import DrawerSeen
from grattage.service.reconcile import reconcile
from support import DATABASES, DrawerAlwaysRunning, World, make_world

STAKE = 500


@pytest.fixture(params=DATABASES)
def drawn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with make_world(request.param, tmp_path, drawn=True) as world:
        yield world


def _entries(world: World, kind: str) -> list[dict[str, Any]]:
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    found = []
    for start in range(0, size, 1000):
        found += transparency.entries(world.platform, start, min(size, start + 1000) - 1)
    return [row["entry"] for row in found if row["entry"]["kind"] == kind]


def _buy(world: World, player: int, mode: str = "auto", **extra: Any) -> Any:
    return tickets.buy(world.platform, player, game_name="cash", mode=mode, **extra)[0]


def _assert_every_round_obeys_the_rule(world: World) -> int:
    """docs/draw.md's rule, as a verifier checks it from each receipt and the one before:
    the first round at least the margin after the receipt's own `time`, or the previous
    receipt's round if that one is later. How many receipts were checked."""
    assert world.witness is not None
    chains, margin = world.witness.chains(), world.platform.policy.draw_margin_ms
    receipts = sorted(
        (entry["receipt"] for entry in _entries(world, "sale.receipt")),
        key=lambda receipt: (receipt["block_id"], receipt["sequence"]),
    )
    previous: tuple[str, int] | None = None
    for receipt in receipts:
        moment = datetime.strptime(receipt["time"], "%Y-%m-%dT%H:%M:%S.%f%z")
        time_ms = (moment - moment_of_ms(0)) // timedelta(milliseconds=1)
        not_before = previous[1] if previous and previous[0] == receipt["block_id"] else None
        chain_id, number, round_ms = round_for_sale(chains, time_ms, margin, not_before)
        assert receipt["beacon"] == {"chain_id": chain_id, "round": number}, receipt
        previous = (receipt["block_id"], round_ms)
    return len(receipts)


def test_a_drawn_sale_answers_covered_and_is_drawn_once_its_round_is_out(drawn: World) -> None:
    drawn.stock("cash")
    player = drawn.player(5000)
    bought = [_buy(drawn, player) for _ in range(3)]
    assert [view.state for view in bought] == ["covered"] * 3
    assert all(view.prize_cents is None and not view.revealed for view in bought)
    assert drawn.balance(player) == 5000 - 3 * STAKE  # stakes only: nothing is won yet
    assert drawn.draw() == 3
    finished = [tickets.get_ticket(drawn.platform, player, view.id) for view in bought]
    assert [view.state for view in finished] == ["finished"] * 3
    won = sum(view.prize_cents or 0 for view in finished)
    assert drawn.balance(player) == 5000 - 3 * STAKE + won
    assert drawn.draw() == 0  # nothing is drawn twice


def test_receipts_chain_from_the_commitment_and_name_the_round_after_the_sale(
    drawn: World,
) -> None:
    drawn.stock("cash")
    player = drawn.player(5000)
    receipts = [_buy(drawn, player, client_seed="00ff").receipt for _ in range(3)]
    commitment = fairness.commitment(drawn.platform, 1)
    assert [receipt["format"] for receipt in receipts] == ["grattage-receipt/2"] * 3
    assert [receipt["sequence"] for receipt in receipts] == [0, 1, 2]
    assert receipts[0]["previous"] == document_sha256(commitment).hex()
    assert receipts[1]["previous"] == document_sha256(receipts[0]).hex()
    assert receipts[2]["previous"] == document_sha256(receipts[1]).hex()
    assert receipts[0]["client_seed"] == "00ff" and "position" not in receipts[0]
    assert drawn.witness is not None
    (chain,) = drawn.witness.chains()
    first = receipts[0]["beacon"]
    # the first round whose time is at least the margin after the sale, never before
    assert first["chain_id"] == chain.chain_id
    assert chain.round_time_ms(first["round"]) >= drawn.witness.now_ms() + 100
    assert chain.round_time_ms(first["round"] - 1) < drawn.witness.now_ms() + 100


def test_every_draw_recomputes_from_the_round_and_the_chain_and_replays(drawn: World) -> None:
    drawn.stock("cash")
    player = drawn.player(100_00)
    bought = [_buy(drawn, player, mode="play") for _ in range(12)]
    drawn.draw()
    commitment = fairness.commitment(drawn.platform, 1)
    rounds = {
        (entry["round"]["chain_id"], entry["round"]["round"]): bytes.fromhex(
            entry["round"]["value"]
        )
        for entry in _entries(drawn, "draw.round")
    }
    resolutions = _entries(drawn, "sale.drawn")
    receipts = [entry["receipt"] for entry in _entries(drawn, "sale.receipt")]
    assert [draw["sequence"] for draw in resolutions] == list(range(12))
    block_id, size = bytes.fromhex(commitment["block_id"]), commitment["size"]
    for draw, receipt in zip(resolutions, receipts, strict=True):
        beacon = rounds[draw["beacon"]["chain_id"], draw["beacon"]["round"]]
        assert draw["beacon"] == receipt["beacon"]  # drawn with the round its receipt names
        assert draw["receipt_sha256"] == document_sha256(receipt).hex()
        link = bytes.fromhex(draw["link"])
        n = draw["sequence"]
        assert draw["slot"] == draw_index(beacon, link, block_id, n, size, document_sha256(receipt))
    permutation = replay(
        [
            Resolution(draw["sequence"], draw["slot"], draw["unit"], bytes.fromhex(draw["link"]))
            for draw in resolutions
        ],
        size,
        chain_head=bytes.fromhex(commitment["chain_head"]),
    )
    units = [tickets.get_ticket(drawn.platform, player, view.id) for view in bought]
    with drawn.platform.uow.read() as repos:
        positions = [repos.tickets.get(view.id).position for view in units]  # type: ignore[union-attr]
    assert positions == list(permutation[:12])
    assert len(set(positions)) == 12


def test_a_ticket_waits_for_its_draw_before_it_can_be_revealed(drawn: World) -> None:
    drawn.stock("cash")
    player = drawn.player(5000)
    view = _buy(drawn, player, mode="play")
    with pytest.raises(Conflict, match="not drawn yet"):
        tickets.reveal(drawn.platform, player, view.id, reveal_all=True)
    drawn.draw()
    revealed = tickets.reveal(drawn.platform, player, view.id, reveal_all=True)
    assert revealed.state == "finished"


def test_with_the_witness_down_no_sale_is_taken_and_nothing_is_debited(drawn: World) -> None:
    drawn.stock("cash")
    player = drawn.player(5000)
    assert drawn.witness is not None
    drawn.witness.up = False
    with pytest.raises(Unavailable, match="witness"):
        _buy(drawn, player)
    assert drawn.balance(player) == 5000
    assert [block.sold for block in emissions.list_blocks(drawn.platform)] == [0]
    drawn.witness.up = True
    assert _buy(drawn, player).state == "covered"


def test_a_sale_whose_round_passed_uncosigned_is_drawn_with_a_later_round(drawn: World) -> None:
    drawn.stock("cash")
    player = drawn.player(5000)
    view = _buy(drawn, player)
    witness = drawn.witness
    assert witness is not None
    witness.up = False  # the head is never cosigned before the receipt's round
    with pytest.raises(Unavailable):
        Drawer(drawn.platform).cosign()
    named = view.receipt["beacon"]["round"]
    witness.clock.set(witness.chains()[0].round_time_ms(named + 3))  # type: ignore[attr-defined]
    witness.up = True
    assert Drawer(drawn.platform).draw() == 0  # never drawn with a round that did not cover it
    assert drawn.draw() == 1
    (resolution,) = _entries(drawn, "sale.drawn")
    assert resolution["beacon"]["round"] > named + 3
    assert tickets.get_ticket(drawn.platform, player, view.id).state == "finished"


def test_a_block_ends_in_the_log_only_once_its_last_sale_is_drawn(drawn: World) -> None:
    drawn.stock("cash")
    player = drawn.player(40 * STAKE)
    for _ in range(40):
        _buy(drawn, player)
    (block,) = emissions.list_blocks(drawn.platform)
    assert block.state == "exhausted"
    assert _entries(drawn, "block.ended") == []
    with pytest.raises(Conflict, match="not drawn yet"):
        fairness.disclosure(drawn.platform, block.id)
    drawn.draw()
    (ended,) = _entries(drawn, "block.ended")
    assert (ended["units_sold"], ended["units_never_sold"], ended["prizes_never_sold"]) == (
        40,
        0,
        [],
    )
    assert fairness.disclosure(drawn.platform, block.id)["key"]


def test_a_drawn_game_opens_one_block_at_a_time(drawn: World) -> None:
    drawn.stock("cash", blocks=2)
    first, second = emissions.list_blocks(drawn.platform)
    assert (first.state, second.state) == ("open", "pending")
    with pytest.raises(Conflict, match="one block at a time"):
        emissions.open_block(drawn.platform, second.id)


def test_two_drawers_and_many_buyers_draw_every_sale_once_in_order(drawn: World) -> None:
    drawn.stock("cash")
    players = [drawn.player(10 * STAKE) for _ in range(4)]
    errors: list[BaseException] = []

    def buyer(player: int) -> None:
        try:
            for _ in range(9):
                _buy(drawn, player)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=buyer, args=(player,)) for player in players]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    drawers = [Drawer(drawn.platform), Drawer(drawn.platform)]
    for drawer in drawers:
        drawer.cosign()
    assert drawn.witness is not None
    with drawn.platform.uow.read() as repos:
        last = max(ms for _, _, ms in repos.draws.pending_rounds(2**62))
    drawn.witness.clock.set(last)  # type: ignore[attr-defined]
    results: list[int] = []

    def draw(drawer: Drawer) -> None:
        try:
            results.append(drawer.draw())
        except Conflict:
            results.append(-1)  # lost a batch to the other drawer: rolled back whole

    threads = [threading.Thread(target=draw, args=(drawer,)) for drawer in drawers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    drawn.draw()  # whatever a lost batch left
    resolutions = _entries(drawn, "sale.drawn")
    assert [draw["sequence"] for draw in resolutions] == list(range(36))
    assert len({draw["unit"] for draw in resolutions}) == 36
    assert reconcile(drawn.platform).clean
    with drawn.platform.uow.read() as repos:
        states = {repos.tickets.get(number).state for number in range(1, 37)}  # type: ignore[union-attr]
    assert states == {"finished"}
    assert json.loads(json.dumps(results))  # both drawers ran


@pytest.fixture(params=DATABASES)
def closing(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with make_world(request.param, tmp_path, close_block_when_top_prize_sold=True) as world:
        yield world


def test_the_draw_of_a_blocks_last_top_prize_closes_it_and_its_sales_already_made_are_drawn(
    closing: World,
) -> None:
    closing.stock("cash", blocks=2)
    player = closing.player(80 * STAKE)
    sold: list[Any] = []
    while emissions.list_blocks(closing.platform)[0].state == "open":
        sold += [_buy(closing, player) for _ in range(3)]  # three sales wait for each draw
        closing.draw()
    block, following = emissions.list_blocks(closing.platform)
    finished = [tickets.get_ticket(closing.platform, player, view.id) for view in sold]
    assert {view.state for view in finished} == {"finished"}  # none left covered
    # the block's own sales: when a sale exhausted it, the two after it went to the next one
    finished = [
        view for view in finished if view.receipt["block_id"] == sold[0].receipt["block_id"]
    ]
    top = max(view.prize_cents or 0 for view in finished)
    assert [view.prize_cents for view in finished].count(top) == 2  # the table's two
    (ended,) = _entries(closing, "block.ended")
    assert ended["units_sold"] == block.sold == len(finished)
    assert following.state == "open"
    # closed by the draw of its last top prize — unless that prize was among its last three
    # units, whose sale exhausted the block first (a sale never waits for a draw)
    assert (block.state, ended["reason"]) in {("closed", "closed"), ("exhausted", "exhausted")}
    assert block.state == "exhausted" or block.sold < 40


def test_migration_0012_refuses_to_downgrade_a_database_with_drawn_blocks(drawn: World) -> None:
    """Before 0012 a ticket's unit is its sale's index: a drawn block's draws would be lost."""
    drawn.stock("cash")
    player = drawn.player(5000)
    sold = _buy(drawn, player)
    drawn.draw()
    engine = make_engine(drawn.settings.database_url)
    try:
        config = alembic_config(engine)
        with pytest.raises(RuntimeError, match="1 drawn blocks"):
            command.downgrade(config, "0011")
        with engine.connect() as connection:  # still at 0012 or later, its draws kept
            revision = MigrationContext.configure(connection).get_current_revision()
            # SQLite keeps the downgrades done before the refusal; PostgreSQL rolls back all
            head = ScriptDirectory.from_config(config).get_current_head()
            assert revision == ("0012" if engine.dialect.name == "sqlite" else head)
        command.upgrade(config, "head")  # the later migrations SQLite undid, made again
    finally:
        engine.dispose()
    assert tickets.get_ticket(drawn.platform, player, sold.id).state == "finished"
    assert _buy(drawn, player).state == "covered"


def test_a_drawer_whose_draws_keep_failing_gives_up_the_lease_and_sales_stop(
    drawn: World,
) -> None:
    """The block's draw rows corrupted (outsider finding 2): the drawer fails at every turn.
    After a whole lease of failures it renews its lease no more, so sales stop (503, nothing
    debited) instead of piling up undrawn; once a draw succeeds again it leads again."""
    drawn.stock("cash")
    player = drawn.player(5000)
    platform, witness = drawn.platform, drawn.witness
    assert witness is not None
    platform.drawer_seen = DrawerSeen()  # the real one: read from the lease
    drawer = Drawer(platform)
    assert drawer.lead()
    assert _buy(drawn, player).state == "covered"

    def failing() -> int:
        raise RuntimeError("IntegrityError: duplicate key value violates unique constraint")

    drawer.draw = failing  # type: ignore[method-assign]
    start = witness.clock()
    for second in range(8):
        witness.clock.set(start + 1000 * second)
        with pytest.raises(RuntimeError):
            drawer.draw_turn()
    assert drawer.stuck(witness.clock()) and not drawer.lead()
    witness.clock.set(start + 10_000)  # its last renewal has run out
    witness.poll()
    platform.drawer_seen.forget()
    with pytest.raises(Unavailable, match="no drawer is drawing"):
        _buy(drawn, player)
    assert drawn.balance(player) == 5000 - STAKE
    del drawer.draw  # the rows repaired
    drawer.draw_turn()
    assert drawer.lead()
    assert _buy(drawn, player).state == "covered"
    assert drawn.draw() == 2


def test_a_drawer_whose_heads_the_witness_keeps_refusing_gives_up_the_lease_and_sales_stop(
    drawn: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An outsider's finding: after `grattage log rotate-key` the witness, still pinned to the
    old key, refused every head; sales went on (201 covered, stakes taken) and none was ever
    drawn, while /api/health said the draw was running. After a whole lease of refusals the
    drawer renews its lease no more, so sales stop (503); once a head is cosigned again it
    leads again and draws what waited."""
    from grattage.errors import VerificationFailed

    drawn.stock("cash")
    player = drawn.player(5000)
    platform, witness = drawn.platform, drawn.witness
    assert witness is not None
    platform.drawer_seen = DrawerSeen()  # the real one: read from the lease
    drawer = Drawer(platform)
    assert drawer.lead()
    assert _buy(drawn, player).state == "covered"
    cosign = witness.cosign

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise VerificationFailed("the head is not signed by the operator's key")

    monkeypatch.setattr(witness, "cosign", refused)
    start = witness.clock()
    for tenth in range(80):
        witness.clock.set(start + 100 * tenth)
        witness.poll()
        drawer.cosign_turn()
    assert drawer.stuck(witness.clock()) and not drawer.lead()
    witness.clock.set(start + 10_000)  # its last renewal has run out
    witness.poll()
    platform.drawer_seen.forget()
    with pytest.raises(Unavailable, match="no drawer is drawing"):
        _buy(drawn, player)
    assert drawn.balance(player) == 5000 - STAKE
    monkeypatch.setattr(witness, "cosign", cosign)  # the witness restarted with the new key
    drawer.cosign_turn()
    assert drawer.lead()
    assert _buy(drawn, player).state == "covered"


def test_a_sale_that_waited_for_its_blocks_row_names_the_round_after_its_own_time(
    drawn: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The outsider's finding 8: the purchase's clock was read before the wait for the block's
    # row (1.1-1.3 s on PostgreSQL under load), the round after it. Here each wait is 1.2 s.
    drawn.stock("cash")
    player = drawn.player(10 * STAKE)
    take_unit = draw_sale.block_lifecycle.take_unit
    assert drawn.witness is not None
    clock = drawn.witness.clock

    def slow_take_unit(*args: Any, **kwargs: Any) -> Any:
        clock.advance(1200)  # type: ignore[attr-defined]
        return take_unit(*args, **kwargs)

    monkeypatch.setattr(draw_sale.block_lifecycle, "take_unit", slow_take_unit)
    for _ in range(5):
        _buy(drawn, player)
    monkeypatch.undo()
    assert _assert_every_round_obeys_the_rule(drawn) == 5
    drawn.draw()


@pytest.fixture(params=DATABASES)
def on_the_wall_clock(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with make_world(request.param, tmp_path, drawn=True, beacon_ms=50) as world:
        yield world


def test_every_receipt_of_concurrent_buyers_names_the_round_its_time_and_the_previous_give(
    on_the_wall_clock: World,
) -> None:
    world = on_the_wall_clock
    world.platform.drawer_seen = DrawerAlwaysRunning()  # no drawer runs: the test only sells
    world.stock("cash")
    players = [world.player(6 * STAKE) for _ in range(6)]
    errors: list[BaseException] = []

    def buyer(player: int) -> None:
        try:
            for _ in range(6):  # 36 sales: the tiny block's size
                _buy(world, player)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=buyer, args=(player,)) for player in players]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _assert_every_round_obeys_the_rule(world) == 36
    world.check_books = False  # no drawer runs here: the sales stay covered


def _sell_during_every_integration(
    drawn: World, player: int, monkeypatch: pytest.MonkeyPatch
) -> list[int]:
    """Patch the log's integration so that a sale arrives during each of its passes (the first
    29) over this world's platform; the count of those passes, kept up to date in the list."""
    passes = [0]
    real = transparency._integrate

    def integrate_while_selling(platform: Any, limit: int) -> Any:
        placed = real(platform, limit)
        if platform is drawn.platform:  # not a drawer thread an earlier test left running
            passes[0] += 1
            if passes[0] < 30:
                _buy(drawn, player)
        return placed

    monkeypatch.setattr(transparency, "_integrate", integrate_while_selling)
    return passes


def test_a_cosign_turn_integrates_one_round_while_sales_keep_arriving(
    drawn: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sale arrives during every integration: a turn that integrated until the queue was
    # empty chased them for as long as they came, and no head was cosigned meanwhile.
    drawn.stock("cash")
    player = drawn.player(100_000)
    _buy(drawn, player)
    passes = _sell_during_every_integration(drawn, player, monkeypatch)
    Drawer(drawn.platform).cosign()
    assert passes == [1]
    monkeypatch.undo()
    assert drawn.draw() == passes[0] + 1  # every sale, the one sold during the turn too


def test_a_proof_asked_while_sales_keep_arriving_integrates_one_round(
    drawn: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ticket's draw is still queued when its proof is asked, and a sale arrives during
    # every integration: the proof is built after one round, not once the sales stop.
    drawn.stock("cash")
    player = drawn.player(100_000)
    view = _buy(drawn, player)
    drawer = Drawer(drawn.platform)
    drawer.cosign()
    with drawn.platform.uow.read() as repos:
        [(_, _, round_ms)] = repos.draws.pending_rounds(2**62)
    assert drawn.witness is not None
    drawn.witness.clock.set(round_ms)  # type: ignore[attr-defined]
    assert drawer.draw() == 1  # its resolution waits in the queue
    passes = _sell_during_every_integration(drawn, player, monkeypatch)
    proof = fairness.ticket_proof(drawn.platform, player, view.id)
    assert passes == [1] and proof["receipt"]["ticket_id"] == view.id
    monkeypatch.undo()
    drawn.draw()


def test_a_drawer_holding_its_cosignature_draws_on_time_when_the_witness_lists_none(
    drawn: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The outsider's proxy: the witness's answer to "which heads did you cosign for round R"
    # came back empty, and the drawer drew the covered sales late, with round R+1, after w_R
    # was public — a second draw. It holds the cosignature itself: it draws with round R.
    drawn.stock("cash")
    player = drawn.player(5000)
    bought = [_buy(drawn, player) for _ in range(3)]
    assert drawn.witness is not None
    monkeypatch.setattr(drawn.witness, "cosigned", lambda number, chain_id: [])
    assert drawn.draw() == 3
    receipts = {e["receipt"]["ticket_id"]: e["receipt"] for e in _entries(drawn, "sale.receipt")}
    drawn_entries = _entries(drawn, "sale.drawn")
    assert len(drawn_entries) == 3
    for entry in drawn_entries:
        receipt = next(r for r in receipts.values() if r["sequence"] == entry["sequence"])
        assert entry["beacon"] == receipt["beacon"], "drawn late with a later round"
    assert {view.id for view in bought} == set(receipts)
