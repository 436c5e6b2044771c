"""The server's own duties: finish what was left at start, sweep in the background."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from grattage.entrypoints.http import create_app
from grattage.service import tickets
from support import DATABASES, PASSWORD, World, bought, make_world

CSRF = {"X-Grattage-CSRF": "1"}


def _queued(world: World) -> int:
    with world.platform.uow.read() as repos:
        return repos.log.queued_count()


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


@pytest.mark.parametrize("kind", DATABASES)
def test_the_background_sequencer_puts_every_sale_s_receipt_in_a_signed_head(
    kind: str, tmp_path: Path
) -> None:
    # Without a drawer or a `grattage sequence` beside it, the server's sweeper merges the log:
    # every receipt must reach a signed head, none twice.
    with make_world(kind, tmp_path, drawn=False) as world:
        world.stock("cash")
        world.player(10_000, email="logged@example.org")
        settings = world.settings.model_copy(
            update={"run_sweeper": True, "sweep_interval_seconds": 0.05}
        )
        app = create_app(settings, platform=world.platform, mount_web=False)
        with TestClient(app) as client:
            answer = client.post(
                "/api/sessions", json={"email": "logged@example.org", "password": PASSWORD}
            )
            assert answer.status_code == 200
            sold = [
                client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=CSRF)
                for _ in range(12)
            ]
            assert [answer.status_code for answer in sold] == [201] * len(sold), sold[-1].text
            wanted = sorted(answer.json()["id"] for answer in sold)
            deadline = time.monotonic() + 10
            while _signed_receipts(client) != wanted:
                assert time.monotonic() < deadline, "the sequencer left receipts unsigned"
                time.sleep(0.05)
            assert _queued(world) == 0


def _signed_receipts(client: TestClient) -> list[int]:
    """The ticket ids of the receipts in the log's newest signed head."""
    size = client.get("/api/log/sth").json()["tree_size"]
    entries = client.get(f"/api/log/entries?start=0&end={size - 1}").json()["entries"]
    return sorted(
        e["entry"]["receipt"]["ticket_id"] for e in entries if e["entry"]["kind"] == "sale.receipt"
    )
