"""Migration 0016 on both databases: tickets of both games stored as JSON text become compact
binary rows and back, and every ticket reads the same before, between and after."""

from __future__ import annotations

import json

from alembic import command
from sqlalchemy import text

from grattage.adapters.database import make_engine
from grattage.adapters.migrations import alembic_config
from grattage.games.ticket_codec import ASTRO_V1, CASH_V1, GENERIC_JSON
from grattage.service import tickets
from support import World, bought


def _sell_both_games(world: World) -> tuple[int, list[int]]:
    """A player with finished, half-scratched and covered tickets of Cash and Astro."""
    world.stock("cash")
    world.stock("astro")
    player = world.player(100_000)
    sold = [bought(world, player, game_name="cash", mode="auto")[0].id for _ in range(3)]
    sold += [
        bought(world, player, game_name="astro", mode="auto", sign="leo")[0].id for _ in range(3)
    ]
    cash = bought(world, player, game_name="cash", mode="play")[0].id
    tickets.reveal(world.platform, player, cash, zones=["your_numbers/3", "winning_numbers/0"])
    astro = bought(world, player, game_name="astro", mode="play", sign="aries")[0].id
    tickets.reveal(world.platform, player, astro, zones=["symbols/1", "gain"])
    covered = tickets.buy(world.platform, player, game_name="astro", mode="auto", sign="leo")[0]
    return player, [*sold, cash, astro, covered.id]


def test_the_migration_makes_json_tickets_compact_and_back_and_each_reads_the_same(
    world: World,
) -> None:
    player, ids = _sell_both_games(world)

    def views() -> list[object]:
        page, _ = tickets.history(world.platform, player, limit=100)
        return [page, *(tickets.get_ticket(world.platform, player, i) for i in ids)]

    def stored() -> list[tuple[object, object]]:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT document, revealed FROM tickets ORDER BY id"))
            return [(document, revealed) for document, revealed in rows]

    before = views()
    engine = make_engine(world.settings.database_url)
    try:
        config = alembic_config(engine)
        command.downgrade(config, "0015")
        as_text = stored()
        assert all(isinstance(d, str) and isinstance(r, str) for d, r in as_text)
        assert json.loads(as_text[0][0])["game"] == "cash" and json.loads(as_text[-1][0]) == {}
        assert json.loads(as_text[6][1]) == ["your_numbers/3", "winning_numbers/0"]
        command.upgrade(config, "head")
        as_bytes = stored()
    finally:
        engine.dispose()
    assert [bytes(d)[0] for d, _ in as_bytes] == [CASH_V1] * 3 + [ASTRO_V1] * 3 + [
        CASH_V1,
        ASTRO_V1,
        GENERIC_JSON,  # the covered ticket's empty document
    ]
    assert views() == before
