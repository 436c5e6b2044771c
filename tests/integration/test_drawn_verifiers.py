"""The verifiers on the platform's own drawn sales (issue 15), on SQLite and PostgreSQL: every
finished ticket's proof recomputes its draw, a monitor fed the platform's log finds it clean
(the witness's rounds, chains and cosignatures, the receipts' chain, every draw recomputed and
swapped), and the closed block's draws replay to the units its tickets got."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grattage.blocks.draw_file import draw_file_from_log, read_draw_file
from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.proofs_v2 import verify_disclosure, verify_ticket_proof
from grattage.blocks.replay import replay_disclosed, unsold_prizes
from grattage.service import emissions, fairness, tickets, transparency
from support import DATABASES, World, make_world


@pytest.fixture(params=DATABASES)
def drawn(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with make_world(request.param, tmp_path, drawn=True) as world:
        yield world


def _log(world: World) -> list[dict[str, Any]]:
    transparency.integrate_all(world.platform)
    size = transparency.current_head(world.platform).tree_size
    rows: list[dict[str, Any]] = []
    for start in range(0, size, 1000):
        rows += transparency.entries(world.platform, start, min(size, start + 1000) - 1)
    return [row["entry"] for row in rows]


def _unit(world: World, ticket_id: int) -> int | None:
    with world.platform.uow.read() as repos:
        ticket = repos.tickets.get(ticket_id)
    assert ticket is not None
    return ticket.position


def _sell(world: World, count: int) -> list[int]:
    player = world.player(count * 500)
    bought = []
    for turn in range(count):
        view, _ = tickets.buy(world.platform, player, game_name="cash", mode="auto")
        bought.append(view.id)
        if turn % 7 == 6:
            world.draw()  # several rounds, several heads
    world.draw()
    return [player, *bought]


def test_every_drawn_ticket_s_proof_recomputes_its_draw(drawn: World) -> None:
    drawn.stock("cash")
    player, *bought = _sell(drawn, 24)
    setters = 0
    for ticket_id in bought:
        proof = json.loads(json.dumps(fairness.ticket_proof(drawn.platform, player, ticket_id)))
        verified = verify_ticket_proof(proof)
        assert verified.draw is not None and not verified.draw.late
        assert verified.position == _unit(drawn, ticket_id)
        setters += proof["draw"]["n_set_entry"] is not None
        setters += proof["draw"]["j_set_entry"] is not None
    assert setters  # some draws found their slot set by an earlier one


def test_a_monitor_fed_the_platform_s_log_finds_the_draws_clean(drawn: World) -> None:
    drawn.stock("cash")
    _sell(drawn, 20)
    entries = _log(drawn)
    assert {"beacon.chain", "draw.round", "sale.drawn"} <= {e["kind"] for e in entries}
    auditor = LogAuditor(drawn.platform.signer().public_key)
    auditor.draws.margin_ms = drawn.platform.policy.draw_margin_ms  # each round exactly
    for index, entry in enumerate(entries):
        auditor.feed(index, entry)
    head = transparency.current_head(drawn.platform)
    cosigned = auditor.draws.largest_cosigned
    assert cosigned is not None
    if cosigned.tree_size < head.tree_size:
        answer = transparency.consistency(drawn.platform, cosigned.tree_size, head.tree_size)
        auditor.check_cosigned(head, [bytes.fromhex(node) for node in answer["proof"]])
    auditor.accept_head(head)
    state = auditor.to_json()["draws"]
    (block,) = state["blocks"].values()
    assert block["next_drawn"] == 20 and not block["pending"]


def test_a_closed_drawn_block_replays_to_its_tickets_units(drawn: World) -> None:
    drawn.stock("cash")
    _, *bought = _sell(drawn, 15)
    (block,) = emissions.list_blocks(drawn.platform, "cash")
    emissions.close_block(drawn.platform, block.id)
    disclosure = json.loads(json.dumps(fairness.disclosure(drawn.platform, block.id)))
    verified = verify_disclosure(disclosure)
    entries = _log(drawn)
    data = draw_file_from_log(disclosure["commitment"]["block_id"], verified.block.size, entries)
    replayed = replay_disclosed(
        disclosure["commitment"], bytes.fromhex(disclosure["key"]), read_draw_file(data)
    )
    units = [_unit(drawn, t) for t in bought]
    assert list(replayed.permutation[: replayed.sales]) == units
    (ended,) = [e for e in entries if e["kind"] == "block.ended"]
    logged = sorted(
        ((r["prize_cents"], r["count"]) for r in ended["prizes_never_sold"]), reverse=True
    )
    assert unsold_prizes(verified.block.table.prize_of_tier, verified.tiers, replayed) == logged
