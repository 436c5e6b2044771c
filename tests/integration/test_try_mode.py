"""The try mode, « Essayer gratuitement »: play money in tables of its own, the real odds."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from grattage.adapters.tables import movements, tickets
from grattage.adapters.try_tables import try_movements, try_sessions, try_tickets
from grattage.errors import GrattageError, NoTrySession, TryBalanceSpent
from grattage.games import register_game
from grattage.service import try_mode
from grattage.service.reconcile import reconcile
from support import PASSWORD, World, tiny_table
from toy_game import PileOuFace, toy_table

CSRF = {"X-Grattage-CSRF": "1"}


def started(client: TestClient) -> dict[str, Any]:
    answer = client.post("/api/try/sessions", headers=CSRF)
    assert answer.status_code == 201, answer.text
    return answer.json()


def try_buy(client: TestClient, game: str, mode: str = "play") -> dict[str, Any]:
    body = {"mode": mode, **({"sign": "leo"} if game == "astro" else {})}
    answer = client.post(f"/api/try/games/{game}/tickets", json=body, headers=CSRF)
    assert answer.status_code == 201, answer.text
    return answer.json()


def real_books(world: World) -> tuple[int, int]:
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        return tuple(  # type: ignore[return-value]
            db.execute(select(func.count()).select_from(table)).scalar_one()
            for table in (tickets, movements)
        )


@pytest.fixture
def toy_game() -> Iterator[None]:
    with register_game(PileOuFace, toy_table()):
        yield


def test_a_try_purchase_debits_only_the_play_balance_and_never_real_money(
    client: TestClient, world: World
) -> None:
    player = world.player(10_000, email="player@example.org")
    logged_in = client.post(
        "/api/sessions", json={"email": "player@example.org", "password": PASSWORD}
    )
    assert logged_in.status_code == 200
    books_before = real_books(world)
    account = started(client)
    assert account["balance_cents"] == 5_000
    played = try_buy(client, "cash")
    assert played["state"] == "playing" and played["balance_after_cents"] == 4_500
    finished = client.post(
        f"/api/try/tickets/{played['id']}/reveal", json={"all": True}, headers=CSRF
    ).json()
    automatic = try_buy(client, "astro", "auto")
    won = finished["prize_cents"] + automatic["prize_cents"]
    balance = client.get("/api/try/session").json()["balance_cents"]
    assert balance == 5_000 - 500 - 200 + won
    assert world.balance(player) == 10_000
    assert client.get("/api/me").json()["balance_cents"] == 10_000
    assert real_books(world) == books_before
    assert reconcile(world.platform).clean
    # The real ticket routes know nothing of try tickets, and the try history is its own.
    assert client.get(f"/api/tickets/{played['id']}").status_code == 404
    assert client.get("/api/me/tickets").json()["tickets"] == []
    shown = client.get("/api/try/tickets").json()["tickets"]
    assert [row["id"] for row in shown] == [automatic["id"], played["id"]]


def test_a_try_ticket_hides_what_is_not_revealed_and_pays_its_prize_once(
    client: TestClient, world: World
) -> None:
    started(client)
    played = try_buy(client, "cash")
    assert played["revealed"] == {} and played["prize_cents"] is None
    assert played["document"] is None
    first = client.post(
        f"/api/try/tickets/{played['id']}/reveal",
        json={"zones": ["winning_numbers/0"]},
        headers=CSRF,
    ).json()
    assert list(first["revealed"]) == ["winning_numbers/0"]
    done = client.post(f"/api/try/tickets/{played['id']}/reveal", json={"all": True}, headers=CSRF)
    again = client.post(f"/api/try/tickets/{played['id']}/reveal", json={"all": True}, headers=CSRF)
    assert done.json()["state"] == again.json()["state"] == "finished"
    balance = client.get("/api/try/session").json()["balance_cents"]
    assert balance == 4_500 + done.json()["prize_cents"]


@pytest.mark.parametrize("world_settings", [{"try_balance_cents": 500}])
def test_two_purchases_racing_on_one_try_session_never_overdraw_it(world: World) -> None:
    token, _ = try_mode.start(world.platform)
    outcomes: list[object] = []
    barrier = threading.Barrier(6)

    def buy() -> None:
        barrier.wait()
        try:
            outcomes.append(try_mode.buy(world.platform, token, game_name="cash", mode="play"))
        except GrattageError as error:
            outcomes.append(error)

    threads = [threading.Thread(target=buy) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    refused = [outcome for outcome in outcomes if isinstance(outcome, TryBalanceSpent)]
    assert len(refused) == 5, outcomes
    assert try_mode.account(world.platform, token).balance_cents == 0
    stakes = [m for m in _movements(world) if m["kind"] == "stake"]
    assert len(stakes) == 1


def _movements(world: World) -> list[dict[str, Any]]:
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        return [dict(row._mapping) for row in db.execute(select(try_movements))]


def test_a_sold_out_try_block_is_followed_by_a_new_one_each_dealt_exactly(
    world: World, toy_game: None
) -> None:
    token, _ = try_mode.start(world.platform)
    table = toy_table()
    sold = [
        try_mode.buy(world.platform, token, game_name="pile_ou_face", mode="auto", sign="pile")
        for _ in range(table.block_size + 1)
    ]
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        rows = db.execute(
            select(
                try_tickets.c.block_id, try_tickets.c.position, try_tickets.c.prize_cents
            ).order_by(try_tickets.c.id)
        ).all()
    first_block = rows[0].block_id
    assert [row.position for row in rows[: table.block_size]] == list(range(table.block_size))
    dealt = Counter(row.prize_cents for row in rows if row.block_id == first_block)
    assert dealt == Counter(
        {0: table.losing_count, **{tier.prize_cents: tier.count for tier in table.tiers}}
    )
    assert rows[-1].block_id != first_block and rows[-1].position == 0
    assert [ticket.prize_cents for ticket in sold] == [row.prize_cents for row in rows]


def test_a_spent_play_balance_is_refilled_and_only_then(
    client: TestClient, world: World, toy_game: None
) -> None:
    started(client)
    refused = client.post("/api/try/session/refill", headers=CSRF)
    assert refused.status_code == 409
    token = client.cookies.get("grattage_try")
    assert token
    with world.platform.uow.write() as repos:
        repos.try_play.debit(
            repos.try_play.session(try_mode.token_digest(token), world.clock.now()).id,  # type: ignore[union-attr]
            4_950,
            10,
        )
    spent = client.post("/api/try/games/cash/tickets", json={"mode": "play"}, headers=CSRF)
    assert spent.status_code == 409 and spent.json()["error"] == "try_balance_spent"
    refilled = client.post("/api/try/session/refill", headers=CSRF)
    assert refilled.status_code == 200 and refilled.json()["balance_cents"] == 5_000


def test_expired_try_sessions_are_purged_with_their_tickets(world: World) -> None:
    token, _ = try_mode.start(world.platform)
    try_mode.buy(world.platform, token, game_name="astro", mode="play", sign="leo")
    world.clock.advance(23 * 3600)
    assert try_mode.purge(world.platform) == 0
    world.clock.advance(3600)
    with pytest.raises(NoTrySession):
        try_mode.account(world.platform, token)
    assert try_mode.purge(world.platform) == 1
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        for table in (try_sessions, try_tickets, try_movements):
            assert db.execute(select(func.count()).select_from(table)).scalar_one() == 0


@pytest.mark.parametrize("world_settings", [{"try_balance_cents": 100_000}])
def test_try_blocks_are_dealt_from_the_table_on_sale_at_its_size_and_counts(
    world: World,
) -> None:
    world.stock("astro")
    table = tiny_table("astro")
    shown = {game.name: game for game in try_mode.try_games(world.platform)}["astro"]
    assert (shown.block_size, shown.winning_tickets) == (table.block_size, table.prizes_count)
    token, _ = try_mode.start(world.platform)
    for _ in range(table.block_size):
        try_mode.buy(world.platform, token, game_name="astro", mode="auto", sign="leo")
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        prizes = db.execute(select(try_tickets.c.prize_cents)).scalars().all()
        sold = db.execute(select(func.count()).select_from(tickets)).scalar_one()
    assert Counter(prizes) == Counter(
        {0: table.losing_count, **{tier.prize_cents: tier.count for tier in table.tiers}}
    )
    assert sold == 0  # not one real unit was taken


def test_the_server_s_sweeper_purges_expired_try_sessions(world: World) -> None:
    from grattage.entrypoints.http import create_app

    try_mode.start(world.platform)
    world.clock.advance(25 * 3600)
    sweeping = world.settings.model_copy(
        update={"run_sweeper": True, "sweep_interval_seconds": 0.05}
    )
    app = create_app(sweeping, platform=world.platform, mount_web=False)
    with TestClient(app):
        for _ in range(100):
            with world.platform.uow.read() as repos:
                db = repos.connection  # type: ignore[attr-defined]
                left = db.execute(select(func.count()).select_from(try_sessions)).scalar_one()
            if left == 0:
                break
            time.sleep(0.05)
    assert left == 0
