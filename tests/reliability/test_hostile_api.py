"""Scenario 6, hostile input: schemathesis generates requests (valid and invalid) for every
operation of the app's own OpenAPI document, authenticated as a player with money and tickets.
No answer may be a 5xx, every error is the documented ``{"error", "message"}`` JSON, and the
books reconcile afterwards (checked at teardown by the ``world`` fixture).

(Fuzzing of ticket documents, prize-table files and block files: tests/unit/test_hostile_input.py.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from grattage.entrypoints.http import create_app
from grattage.service import accounts, tickets
from support import PASSWORD, World

from .harness import big_table, kind, player_balance_matches_tickets, record, scaled

DEPOSIT = 200_000


def test_generated_requests_to_every_operation_never_get_a_5xx(world: World) -> None:
    world.stock("cash", blocks=2, table=big_table("cash", 10))
    world.stock("astro", blocks=2, table=big_table("astro", 10))
    email = "fuzzed@example.org"
    player = world.player(DEPOSIT, email=email)
    for mode in ("play", "auto"):
        tickets.buy(world.platform, player, game_name="cash", mode=mode)
        tickets.buy(world.platform, player, game_name="astro", mode=mode, sign="leo")
    token = accounts.log_in(world.platform, email, PASSWORD).token
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    examples = {
        GenerationMode.POSITIVE: scaled(20, 400),
        GenerationMode.NEGATIVE: scaled(12, 250),
    }
    statuses: Counter[int] = Counter()
    failures: list[str] = []
    auth = {"Authorization": f"Bearer {token}"}
    for operation in operations:
        logs_out = operation.method.upper() == "DELETE" and operation.path == "/api/sessions"
        headers = None if logs_out else auth  # keep the session for the other operations
        for mode, count in examples.items():
            attack = _attack(operation, mode, count, headers, statuses, failures)
            try:
                attack()
            except Unsatisfiable:
                # nothing to make invalid (an operation without parameters or body)
                assert mode == GenerationMode.NEGATIVE, operation.label
    requests = sum(statuses.values())
    record(
        f"hostile input, schemathesis [{kind(world)}]",
        operations=len(operations),
        requests_fuzzed=requests,
        server_errors_5xx=sum(v for k, v in statuses.items() if k >= 500),
        statuses=dict(sorted(statuses.items())),
    )
    assert failures == [], failures[:5]
    assert len(operations) >= 15
    assert player_balance_matches_tickets(world, player, _deposited(world, player))


def test_a_nul_character_anywhere_is_refused_as_bad_input(world: World) -> None:
    """Found by the fuzzer: PostgreSQL refuses NUL in text, and that was a 500."""
    world.stock("cash")
    world.player(1000, email="nul@example.org")
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as client:
        token = client.post(
            "/api/sessions", json={"email": "nul@example.org", "password": PASSWORD}
        ).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        answers = [
            client.get("/api/blocks", params={"game": "\x00"}),
            client.get("/api/blocks", params={"game": "cash\x00"}),
            client.post("/api/sessions", json={"email": "a\x00@example.org", "password": "x" * 9}),
            client.post(
                "/api/players",
                json={
                    "email": "b\x00@example.org",
                    "password": "x" * 9,
                    "first_name": "Bea",
                    "last_name": "Nul",
                    "birth_date": "1990-01-01",
                },
            ),
            client.post("/api/games/cash%00/tickets", json={"mode": "play"}, headers=auth),
            client.post(
                "/api/games/astro/tickets", json={"mode": "play", "sign": "\x00"}, headers=auth
            ),
        ]
    assert all(answer.status_code < 500 for answer in answers), [a.text for a in answers]
    assert all(answer.status_code >= 400 for answer in answers[2:]), [a.text for a in answers]
    assert all(set(answer.json()) == {"error", "message"} for answer in answers[2:])


def _attack(
    operation: Any,
    mode: GenerationMode,
    count: int,
    headers: dict[str, str] | None,
    statuses: Counter[int],
    failures: list[str],
) -> Callable[[], None]:
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def attack(case: Any) -> None:
        response = case.call(headers=headers)
        statuses[response.status_code] += 1
        if response.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path}: {response.text}")
        elif response.status_code >= 400:
            body = response.json()
            if set(body) != {"error", "message"}:
                failures.append(f"{case.method} {case.formatted_path}: {body}")

    return attack  # type: ignore[no-any-return]


def _deposited(world: World, player: int) -> int:
    from sqlalchemy import func, select

    from grattage.adapters.tables import accounts as accounts_table
    from grattage.adapters.tables import movements

    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        return int(
            db.execute(
                select(func.coalesce(func.sum(movements.c.amount_cents), 0))
                .select_from(
                    movements.join(accounts_table, accounts_table.c.id == movements.c.to_account_id)
                )
                .where(movements.c.kind == "deposit", accounts_table.c.player_id == player)
            ).scalar_one()
        )
