"""The page's report that its player is scratching (issue 16, item 6): the inactivity delay
runs from the last activity, not from the last reveal; a late or hostile report changes
nothing it should not. On SQLite and PostgreSQL, in the service and over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from grattage.adapters.tickets import SqlTickets
from grattage.errors import InvalidInput, NotDrawn, NotFound
from grattage.service import tickets
from grattage.service.model import Ticket
from grattage.service.scratch_activity import report_activity
from support import PASSWORD, World, bought

CSRF = {"X-Grattage-CSRF": "1"}


def stored(world: World, ticket_id: int) -> Ticket:
    with world.platform.uow.read() as repos:
        ticket = repos.tickets.get(ticket_id)
    assert ticket is not None
    return ticket


def cash_in_play(world: World, email: str | None = None) -> tuple[int, int]:
    world.stock("cash")
    player = world.player(1000, email=email)
    sold, _ = bought(world, player, game_name="cash", mode="play")
    assert sold.state == "playing"
    return player, sold.id


@pytest.fixture
def writes(world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the write transactions the platform opens from now on."""
    opened: list[int] = []
    write = world.platform.uow.write

    def counted() -> AbstractContextManager[Any]:
        opened.append(1)
        return write()

    monkeypatch.setattr(world.platform.uow, "write", counted)
    yield opened


def test_a_cash_ticket_scratched_within_the_delay_is_not_finished_by_the_sweeper(
    world: World,
) -> None:
    player, ticket_id = cash_in_play(world)
    delay = world.platform.policy.inactivity_seconds
    world.clock.advance(delay - 2)
    assert report_activity(world.platform, player, ticket_id) is True
    world.clock.advance(delay - 2)  # past the delay from the purchase, not from the report
    assert tickets.sweep(world.platform) == 0
    assert tickets.settle_due(world.platform, player) == 0
    assert stored(world, ticket_id).state == "playing"
    world.clock.advance(3)
    assert tickets.sweep(world.platform) == 1
    assert tickets.get_ticket(world.platform, player, ticket_id).finished_by == "inactivity"


def test_reports_keep_a_ticket_in_play_for_at_most_the_abandon_delay_after_its_purchase(
    world: World,
) -> None:
    player, ticket_id = cash_in_play(world)
    policy = world.platform.policy
    step = policy.inactivity_seconds - 2
    reported_for = 0
    while reported_for + step < policy.abandon_seconds:
        world.clock.advance(step)
        reported_for += step
        assert report_activity(world.platform, player, ticket_id) is True
        assert tickets.sweep(world.platform) == 0
    world.clock.advance(policy.abandon_seconds - reported_for)
    assert report_activity(world.platform, player, ticket_id) is False  # reveals nothing
    world.clock.advance(policy.inactivity_seconds)
    assert tickets.sweep(world.platform) == 1
    assert stored(world, ticket_id).finished_by == "inactivity"


def test_a_report_within_a_second_of_the_last_action_is_answered_without_a_write(
    world: World, writes: list[int]
) -> None:
    player, ticket_id = cash_in_play(world)
    before = stored(world, ticket_id).last_action_at
    writes.clear()
    world.clock.advance(0.9)
    assert report_activity(world.platform, player, ticket_id) is False
    assert writes == []
    assert stored(world, ticket_id).last_action_at == before
    world.clock.advance(0.1)
    assert report_activity(world.platform, player, ticket_id) is True
    assert stored(world, ticket_id).last_action_at == world.clock.now()


def test_a_report_on_a_finished_ticket_moves_nothing(world: World, writes: list[int]) -> None:
    player, ticket_id = cash_in_play(world)
    tickets.reveal(world.platform, player, ticket_id, reveal_all=True)
    finished = stored(world, ticket_id)
    writes.clear()
    world.clock.advance(5)
    assert report_activity(world.platform, player, ticket_id) is False
    assert writes == []
    assert stored(world, ticket_id) == finished


def test_a_report_after_the_delay_ran_out_does_not_bring_the_ticket_back(world: World) -> None:
    player, ticket_id = cash_in_play(world)
    world.clock.advance(world.platform.policy.inactivity_seconds)
    assert report_activity(world.platform, player, ticket_id) is False
    assert tickets.sweep(world.platform) == 1
    assert tickets.get_ticket(world.platform, player, ticket_id).finished_by == "inactivity"


def test_a_stale_list_of_overdue_tickets_does_not_finish_one_reported_since(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweeper lists the overdue tickets, then locks each: a report whose clock read came
    before the sweeper's and which committed in between keeps the ticket playing."""
    player, ticket_id = cash_in_play(world)
    world.clock.advance(world.platform.policy.inactivity_seconds)
    listed = SqlTickets.due

    def due_then_report(self: Any, *args: Any, **kwargs: Any) -> list[int]:
        found: list[int] = listed(self, *args, **kwargs)
        world.clock.advance(-1)  # the report read the time a moment before the sweeper
        assert report_activity(world.platform, player, ticket_id) is True
        world.clock.advance(1)
        return found

    monkeypatch.setattr(SqlTickets, "due", due_then_report)
    assert tickets.sweep(world.platform) == 0
    assert stored(world, ticket_id).state == "playing"


def test_a_covered_ticket_cannot_be_reported_and_someone_elses_is_not_found(
    world: World,
) -> None:
    player, ticket_id = cash_in_play(world)
    covered, _ = tickets.buy(world.platform, player, game_name="cash", mode="play")
    assert covered.state == "covered"
    with pytest.raises(NotDrawn):
        report_activity(world.platform, player, covered.id)
    world.draw()
    stranger = world.player()
    world.clock.advance(2)
    with pytest.raises(NotFound):
        report_activity(world.platform, stranger, ticket_id)
    with pytest.raises(NotFound):
        report_activity(world.platform, player, 10**6)


def test_the_pages_inactivity_reveal_is_finished_by_inactivity(world: World) -> None:
    player, ticket_id = cash_in_play(world)
    view = tickets.reveal(world.platform, player, ticket_id, reveal_all=True, by_inactivity=True)
    assert (view.state, view.finished_by) == ("finished", "inactivity")


def test_an_inactivity_reveal_is_refused_for_astro_and_for_some_zones_only(world: World) -> None:
    player, ticket_id = cash_in_play(world)
    with pytest.raises(InvalidInput):
        tickets.reveal(world.platform, player, ticket_id, ["your_numbers/0"], by_inactivity=True)
    world.stock("astro")
    astro, _ = bought(world, player, game_name="astro", mode="play", sign="leo")
    with pytest.raises(InvalidInput):
        tickets.reveal(world.platform, player, astro.id, reveal_all=True, by_inactivity=True)
    assert stored(world, astro.id).state == "playing"


def signed_in_player(client: TestClient, world: World) -> tuple[int, int]:
    email = "scratcher@example.org"
    player, ticket_id = cash_in_play(world, email)
    answer = client.post("/api/sessions", json={"email": email, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return player, ticket_id


def test_the_activity_route_answers_204_and_moves_the_last_action(
    client: TestClient, world: World
) -> None:
    _, ticket_id = signed_in_player(client, world)
    world.clock.advance(3)
    answer = client.post(f"/api/tickets/{ticket_id}/activity", headers=CSRF)
    assert (answer.status_code, answer.content) == (204, b"")
    assert stored(world, ticket_id).last_action_at == world.clock.now()
    world.clock.advance(world.platform.policy.inactivity_seconds - 1)
    assert client.get(f"/api/tickets/{ticket_id}").json()["state"] == "playing"


def test_the_activity_route_needs_the_csrf_header_and_the_owner(
    client: TestClient, world: World
) -> None:
    _, ticket_id = signed_in_player(client, world)
    before: datetime = stored(world, ticket_id).last_action_at
    world.clock.advance(3)
    assert client.post(f"/api/tickets/{ticket_id}/activity").status_code == 403
    assert client.post("/api/tickets/999999/activity", headers=CSRF).status_code == 404
    assert stored(world, ticket_id).last_action_at == before


def test_the_activity_route_on_a_finished_ticket_is_a_harmless_204(
    client: TestClient, world: World
) -> None:
    _, ticket_id = signed_in_player(client, world)
    body = {"all": True, "inactivity": True}
    revealed = client.post(f"/api/tickets/{ticket_id}/reveal", json=body, headers=CSRF)
    assert revealed.json()["finished_by"] == "inactivity"
    finished = stored(world, ticket_id)
    world.clock.advance(3)
    assert client.post(f"/api/tickets/{ticket_id}/activity", headers=CSRF).status_code == 204
    assert stored(world, ticket_id) == finished
