"""An emission is its table: the price and title it was made with are what its blocks sell at
and show, and no stored table, however broken, makes the lobby or a page answer 500."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from grattage.entrypoints.http import create_app
from grattage.games import PrizeTable
from grattage.games.registry import load_table
from grattage.service import responsible, tickets
from support import PASSWORD, World, bought, drawn_answer

CSRF = {"X-Grattage-CSRF": "1"}


def operator_table(price_cents: int, title: str, block_size: int = 100) -> PrizeTable:
    """An operator's Cash table: 20 × 1 € and 30 × 0,50 € in ``block_size`` units (35 € of
    prizes), priced ``price_cents``."""
    return load_table(
        "cash",
        f"""
        game = "cash"
        title = "{title}"
        source = "tests: an operator's table"
        reconstruction = false
        price_cents = {price_cents}
        block_size = {block_size}
        amounts_cents = [100, 50]

        [[tiers]]
        prize_cents = 100
        count = 20

        [[tiers]]
        prize_cents = 50
        count = 30
        """,
        "operator.toml",
    )


def signed_in(client: TestClient, world: World, balance_cents: int) -> int:
    player = world.player(balance_cents, email="player@example.org")
    response = client.post(
        "/api/sessions", json={"email": "player@example.org", "password": PASSWORD}
    )
    assert response.status_code == 200
    return player


def listed(client: TestClient, name: str) -> dict[str, Any]:
    response = client.get("/api/games")
    assert response.status_code == 200, response.text
    games: list[dict[str, Any]] = response.json()["games"]
    return next(game for game in games if game["name"] == name)


def buy(client: TestClient, game: str = "cash") -> Any:
    return client.post(f"/api/games/{game}/tickets", json={"mode": "auto"}, headers=CSRF)


@pytest.mark.parametrize("price_cents", [50, 200, 500])
def test_a_table_sells_at_its_own_price_and_the_lobby_shows_its_own_payout_and_title(
    client: TestClient, world: World, price_cents: int
) -> None:
    title = f"Cash à {price_cents} centimes"
    world.stock("cash", table=operator_table(price_cents, title))
    signed_in(client, world, 10_000)
    cash = listed(client, "cash")
    assert (cash["title"], cash["table_title"]) == (title, title)
    assert (cash["price_cents"], cash["on_sale"], cash["off_sale_reason"]) == (
        price_cents,
        True,
        None,
    )
    # 35 € of prizes in a block of 100 tickets: 70 % at 0,50 €, 17,5 % at 2 €, 7 % at 5 €.
    payout = Fraction(cash["prizes_total_cents"], cash["block_size"] * cash["price_cents"])
    assert payout == Fraction(3500, 100 * price_cents)
    ticket = drawn_answer(client, buy(client).json())
    assert ticket["stake_cents"] == price_cents
    balance = client.get("/api/me").json()["balance_cents"]
    assert balance == 10_000 - price_cents + ticket["prize_cents"]
    history = client.get("/api/me/tickets").json()["tickets"]
    assert [row["stake_cents"] for row in history] == [price_cents]


def test_a_purchase_debits_the_price_of_the_block_its_unit_comes_from(world: World) -> None:
    world.stock("cash", table=operator_table(500, "Cash à 5 €", block_size=50))
    world.stock("cash", table=operator_table(50, "Cash à 0,50 €", block_size=50))
    player = world.player(100_000)
    sold = [bought(world, player, game_name="cash", mode="auto")[0] for _ in range(60)]
    # The first block (5 €) sells out, then the next one opens (0,50 €).
    assert [ticket.stake_cents for ticket in sold] == [500] * 50 + [50] * 10
    with world.platform.uow.read() as repos:
        blocks = {block.id: block for block in repos.blocks.all("cash")}
        stored = [repos.tickets.get(ticket.id) for ticket in sold]
    assert all(t and t.stake_cents == blocks[t.block_id].price_cents for t in stored)
    assert [block.title for block in blocks.values()] == ["Cash à 5 €", "Cash à 0,50 €"]


def test_a_weekly_stake_limit_counts_the_blocks_price(client: TestClient, world: World) -> None:
    world.stock("cash", table=operator_table(50, "Cash à 0,50 €"))
    player = signed_in(client, world, 10_000)
    responsible.set_limits(world.platform, player, stake_cents=100)
    assert [buy(client).status_code for _ in range(2)] == [201, 201]
    refused = buy(client)
    assert (refused.status_code, refused.json()["error"]) == (409, "limit_reached")
    assert responsible.limits(world.platform, player).stake.spent_this_week_cents == 100


def test_a_balance_short_of_the_blocks_price_sells_nothing(
    client: TestClient, world: World
) -> None:
    world.stock("cash", table=operator_table(200, "Cash à 2 €", block_size=50))
    signed_in(client, world, 150)
    refused = buy(client)
    assert (refused.status_code, refused.json()["error"]) == (409, "insufficient_balance")
    assert "costs 2 €" in refused.json()["message"]
    with world.platform.uow.read() as repos:
        assert [block.sold for block in repos.blocks.all("cash")] == [0]  # the take rolled back


BROKEN_TABLES: dict[str, Any] = {
    "every count zero": lambda table: {
        **table,
        "tiers": [{**tier, "count": 0} for tier in table["tiers"]],
    },
    "no rows": lambda table: {**table, "tiers": []},
    "a prize the game cannot show": lambda table: {
        **table,
        "amounts_cents": [100],
        "tiers": [{**table["tiers"][0], "prize_cents": 7}],
    },
    "more winners than units": lambda table: {
        **table,
        "tiers": [{**tier, "count": 10**6} for tier in table["tiers"]],
    },
    "a missing field": lambda table: {key: v for key, v in table.items() if key != "tiers"},
    "a list": lambda table: [table],
    "not JSON at all": lambda table: "{not json",
}


@pytest.mark.parametrize("breakage", list(BROKEN_TABLES))
def test_a_stored_table_that_cannot_be_played_lists_its_game_off_sale_and_never_answers_500(
    world: World, breakage: str
) -> None:
    world.stock("cash", table=operator_table(50, "Cash cassé"))
    with world.platform.uow.write() as repos:
        (stored,) = repos.connection.execute(text("SELECT table_json FROM emissions")).one()  # type: ignore[attr-defined]
        broken = BROKEN_TABLES[breakage](json.loads(stored))
        written = broken if isinstance(broken, str) else json.dumps(broken)
        repos.connection.execute(text("UPDATE emissions SET table_json = :t"), {"t": written})  # type: ignore[attr-defined]
    app = create_app(world.settings, platform=world.platform)  # with the pages
    with TestClient(app, raise_server_exceptions=False) as client:
        signed_in(client, world, 1_000)
        cash = listed(client, "cash")
        assert (cash["on_sale"], cash["off_sale_reason"]) == (False, "table_unplayable")
        assert (cash["title"], cash["price_cents"], cash["prize_table"]) == ("Cash cassé", 50, [])
        assert listed(client, "astro")["off_sale_reason"] == "sold_out"  # the others unharmed
        for page in ("/", "/cash.html", "/astro.html", "/history.html"):
            assert client.get(page).status_code == 200, page
        refused = buy(client)
        assert (refused.status_code, refused.json()["error"]) == (409, "not_on_sale")
        assert client.get("/api/me").json()["balance_cents"] == 1_000
        assert client.get("/api/blocks").status_code == 200


def test_a_block_priced_zero_is_not_on_sale(client: TestClient, world: World) -> None:
    world.stock("cash", table=operator_table(50, "Cash gratuit"))
    with world.platform.uow.write() as repos:
        repos.connection.execute(text("UPDATE blocks SET price_cents = 0"))  # type: ignore[attr-defined]
    signed_in(client, world, 1_000)
    assert listed(client, "cash")["off_sale_reason"] == "table_unplayable"
    refused = buy(client)
    assert (refused.status_code, refused.json()["error"]) == (409, "not_on_sale")


def test_the_migration_gives_existing_emissions_and_blocks_the_price_and_title_they_sold_at(
    world: World, tmp_path: Any
) -> None:
    from alembic import command

    from grattage.adapters.database import make_engine
    from grattage.adapters.migrations import alembic_config
    from support import database_url

    kind = "sqlite" if world.platform.uow.engine.dialect.name == "sqlite" else "postgres"  # type: ignore[attr-defined]
    with database_url(kind, tmp_path / "old", migrated=False) as url:
        engine = make_engine(url)
        config = alembic_config(engine)
        command.upgrade(config, "0003")
        cash_table = json.dumps({"game": "cash", "title": "Cash 500 000 €", "tiers": []})
        with engine.begin() as db:
            for game, table_json in (("cash", cash_table), ("astro", "{}")):
                emission = db.execute(
                    text(
                        "INSERT INTO emissions (game, table_json, table_digest, created_at)"
                        " VALUES (:game, :table, 'd', '2026-01-01') RETURNING id"
                    ),
                    {"game": game, "table": table_json},
                ).scalar_one()
                for number in range(2):
                    db.execute(
                        text(
                            "INSERT INTO blocks (emission_id, game, key_id, size, sold, state,"
                            " chunk_units, created_at) VALUES (:emission, :game, :key, 10, 0,"
                            " 'pending', 5, '2026-01-01')"
                        ),
                        {"emission": emission, "game": game, "key": f"{game}{number}"},
                    )
        command.upgrade(config, "head")
        with engine.begin() as db:
            emissions = db.execute(
                text("SELECT game, price_cents, title FROM emissions ORDER BY id")
            ).all()
            blocks = db.execute(
                text("SELECT game, price_cents, title FROM blocks ORDER BY id")
            ).all()
        engine.dispose()
    assert [tuple(row) for row in emissions] == [
        ("cash", 500, "Cash 500 000 €"),
        ("astro", 200, "astro"),
    ]
    assert [tuple(row) for row in blocks] == [
        ("cash", 500, "Cash 500 000 €"),
        ("cash", 500, "Cash 500 000 €"),
        ("astro", 200, "astro"),
        ("astro", 200, "astro"),
    ]


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # several open blocks
def test_blocks_on_sale_together_share_one_price_so_no_player_pays_another_than_shown(
    client: TestClient, world: World
) -> None:
    """The outsider of issue 12 opened a 5 € block beside a 0,50 € one: the lobby showed
    0,50 € to everyone, and the players the sale spread onto the other block paid 5 €."""
    from grattage.errors import Conflict
    from grattage.service import emissions

    world.stock("cash", table=operator_table(50, "Cash à 0,50 €", block_size=50))
    world.stock("cash", table=operator_table(500, "Cash à 5 €", block_size=50))
    cheap, dear = emissions.list_blocks(world.platform, "cash")
    assert (cheap.state, dear.state) == ("open", "pending")
    with pytest.raises(Conflict, match="share one table and price"):
        emissions.open_block(world.platform, dear.id)
    emissions.suspend_block(world.platform, cheap.id)
    emissions.open_block(world.platform, dear.id)
    with pytest.raises(Conflict, match="share one table and price"):
        emissions.resume_block(world.platform, cheap.id)
    world.stock("cash", table=operator_table(500, "Cash à 5 €", block_size=50))
    same = emissions.list_blocks(world.platform, "cash")[-1]
    emissions.open_block(world.platform, same.id)  # the same table and price: allowed
    signed_in(client, world, 10_000)
    shown = listed(client, "cash")["price_cents"]
    assert {buy(client).json()["stake_cents"] for _ in range(6)} == {shown} == {500}


def test_a_ticket_is_titled_by_its_own_block_not_the_block_on_sale_now(world: World) -> None:
    world.stock("cash", table=operator_table(500, "Cash A", block_size=50))
    world.stock("cash", table=operator_table(500, "Cash B", block_size=50))
    player = world.player(100_000)
    sold = [bought(world, player, game_name="cash", mode="auto")[0] for _ in range(51)]
    assert [t.title for t in sold] == ["Cash A"] * 50 + ["Cash B"]
    # block A is sold out, B is on sale: A's tickets still name A (the lobby's « Revoir … »)
    assert tickets.get_ticket(world.platform, player, sold[49].id).title == "Cash A"
    assert tickets.last_ticket(world.platform, player).title == "Cash B"


def test_the_log_in_page_names_no_fixed_game_or_prize(world: World) -> None:
    """The games and their top prizes are the tables' (an operator's top prize may be 10 000 €)."""
    app = create_app(world.settings, platform=world.platform)  # with the pages
    with TestClient(app) as client:
        page = client.get("/login.html")
    assert page.status_code == 200
    assert "500 000" not in page.text and "Astro" not in page.text
