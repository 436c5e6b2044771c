"""The server's own duties: finish what was left at start, sweep in the background."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from grattage.entrypoints.http import create_app
from grattage.service import tickets
from support import World, bought


def test_the_server_finishes_overdue_tickets_when_it_starts(world: World) -> None:
    world.stock("astro")
    player = world.player(1000)
    sold, _ = bought(world, player, game_name="astro", mode="play", sign="leo")
    world.clock.advance(world.platform.policy.abandon_seconds + 1)
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app):
        finished = tickets.get_ticket(world.platform, player, sold.id)
    assert finished.finished_by == "abandon"


def test_the_background_sweeper_finishes_an_idle_cash_ticket(world: World) -> None:
    world.stock("cash")
    player = world.player(1000)
    sold, _ = bought(world, player, game_name="cash", mode="play")
    settings = world.settings.model_copy(
        update={"run_sweeper": True, "sweep_interval_seconds": 0.05}
    )
    app = create_app(settings, platform=world.platform, mount_web=False)
    with TestClient(app):
        world.clock.advance(world.platform.policy.inactivity_seconds + 1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with world.platform.uow.read() as repos:
                stored = repos.tickets.get(sold.id)
            assert stored is not None
            if stored.state == "finished":
                break
            time.sleep(0.05)
    assert stored.state == "finished" and stored.finished_by == "inactivity"


def test_the_migrations_build_exactly_the_declared_schema(world: World) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from grattage.adapters.tables import metadata

    with world.platform.uow.read() as repos:
        context = MigrationContext.configure(repos.connection)  # type: ignore[attr-defined]
        differences = [
            difference
            for difference in compare_metadata(context, metadata)
            if difference[0] != "add_table" or difference[1].name != "alembic_version"
        ]
    assert differences == []
