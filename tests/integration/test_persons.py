"""Self-exclusion per person and per mailbox, and the national exclusion register, through the
HTTP API on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from grattage.errors import SelfExcluded
from grattage.service import accounts, responsible, tickets
from integration.test_concurrency import race
from support import PASSWORD, World

CSRF = {"X-Grattage-CSRF": "1"}
PERSON = {"first_name": "Jean-Éric", "last_name": "D'Artagnan", "birth_date": "1985-06-01"}
LISTED = {"first_name": "Inès", "last_name": "Interdite", "birth_date": "1970-03-04"}
REGISTER = "last_name,first_name,birth_date\nINTERDITE,ines,1970-03-04\n"
# Every sign-up refusal, whatever its reason: the reason is told at log-in, after the password.
REFUSED = (409, "already_exists")


@pytest.fixture
def world_settings(tmp_path: Path) -> dict[str, object]:
    register = tmp_path / "interdits.csv"
    register.write_text(REGISTER, encoding="utf-8")
    return {"exclusion_register_file": register}


def sign_up(client: TestClient, email: str, **person: str):  # type: ignore[no-untyped-def]
    body = {"email": email, "password": PASSWORD, **(person or PERSON)}
    return client.post("/api/players", json=body)


def excluded_player(
    client: TestClient, period: str = "permanent", email: str = "name@example.org"
) -> str:
    assert sign_up(client, email).status_code == 201
    login = {"email": email, "password": PASSWORD}
    token = client.post("/api/sessions", json=login).json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    excluded = client.post("/api/me/exclusion", json={"period": period}, headers=headers)
    assert excluded.status_code == 201, excluded.text
    return token


OTHER_PERSON = {"first_name": "Zoé", "last_name": "Autre", "birth_date": "1991-01-01"}


@pytest.mark.parametrize(
    "variant",
    [
        "name+1@example.org",
        "ｎａｍｅ+2@example.org",  # full-width letters
        "name@example.org.",
        '"name"@example.org',
        "NAME@example.org",
    ],
)
def test_an_excluded_mailbox_cannot_sign_up_again_under_another_spelling(
    client: TestClient, variant: str
) -> None:
    excluded_player(client)
    response = sign_up(client, variant, **OTHER_PERSON)
    assert (response.status_code, response.json()["error"]) == REFUSED


@pytest.mark.parametrize(
    "variant", ["na\u200bme@example.org", "nam\u0435@example.org", "name@\u0435xample.org"]
)
def test_an_invisible_or_look_alike_address_is_refused_outright(
    client: TestClient, variant: str
) -> None:
    excluded_player(client)
    response = sign_up(client, variant, **OTHER_PERSON)
    assert (response.status_code, response.json()["error"]) == (422, "invalid_input")


@pytest.mark.parametrize(
    "spelling",
    [
        {"first_name": "jean eric", "last_name": "DARTAGNAN"},
        {"first_name": "JEAN-ERIC", "last_name": "d’artagnan"},
        {"first_name": "Ｊｅａｎ Éric", "last_name": "D Artagnan"},
    ],
)
def test_an_excluded_person_cannot_sign_up_with_another_address(
    client: TestClient, spelling: dict[str, str]
) -> None:
    excluded_player(client)
    response = sign_up(client, "someone.else@example.net", **spelling, birth_date="1985-06-01")
    assert (response.status_code, response.json()["error"]) == REFUSED


@pytest.mark.parametrize(
    "names",
    [
        {"first_name": "D'Artagnan", "last_name": "Jean-Éric"},  # typed in each other's field
        {"first_name": "Jean-Éric Marie", "last_name": "D'Artagnan"},  # a given name added
        {"first_name": "Jean", "last_name": "d artagnan"},  # the first given name alone
    ],
)
def test_an_excluded_person_is_known_by_last_name_first_given_name_and_birth_date(
    client: TestClient, names: dict[str, str]
) -> None:
    excluded_player(client)
    response = sign_up(client, "someone.else@example.net", **names, birth_date="1985-06-01")
    assert (response.status_code, response.json()["error"]) == REFUSED


@pytest.mark.parametrize("variant", ["firstlast@gmail.com", "f.i.r.s.t.last@googlemail.com"])
def test_an_excluded_gmail_mailbox_cannot_sign_up_again_with_its_dots_moved(
    client: TestClient, variant: str
) -> None:
    excluded_player(client, email="first.last@gmail.com")
    response = sign_up(client, variant, **OTHER_PERSON)
    assert (response.status_code, response.json()["error"]) == REFUSED


def test_dots_still_name_another_mailbox_outside_gmail(client: TestClient) -> None:
    excluded_player(client, email="first.last@example.org")
    assert sign_up(client, "firstlast@example.org", **OTHER_PERSON).status_code == 201


def test_an_exclusion_reaches_the_persons_other_accounts(client: TestClient) -> None:
    assert sign_up(client, "second@example.net").status_code == 201
    excluded_player(client, "7d")
    login = {"email": "second@example.net", "password": PASSWORD}
    response = client.post("/api/sessions", json=login)
    assert (response.status_code, response.json()["error"]) == (403, "self_excluded")


def test_a_temporary_exclusion_ends_for_new_accounts_too(client: TestClient, world: World) -> None:
    excluded_player(client, "7d")
    assert sign_up(client, "name+1@example.org").status_code == 409
    world.clock.advance(timedelta(days=7, seconds=1).total_seconds())
    assert sign_up(client, "name+1@example.org").status_code == 201


def test_another_person_with_another_mailbox_still_signs_up(client: TestClient) -> None:
    excluded_player(client)
    assert sign_up(client, "zoe@example.org", **OTHER_PERSON).status_code == 201


def test_a_person_on_the_national_register_cannot_sign_up(client: TestClient) -> None:
    response = sign_up(client, "ines@example.org", **LISTED)
    assert (response.status_code, response.json()["error"]) == REFUSED


def test_a_refused_sign_up_does_not_tell_a_taken_address_from_an_excluded_person(
    client: TestClient,
) -> None:
    assert sign_up(client, "taken@example.org", **OTHER_PERSON).status_code == 201
    taken = sign_up(client, "taken@example.org", **OTHER_PERSON)
    listed = sign_up(client, "ines@example.org", **LISTED)
    excluded_player(client)
    excluded = sign_up(client, "name+1@example.org")
    assert taken.status_code == listed.status_code == excluded.status_code == 409
    assert taken.json() == listed.json() == excluded.json()


def test_a_person_put_on_the_register_later_cannot_log_in(client: TestClient, world: World) -> None:
    assert sign_up(client, "name@example.org").status_code == 201
    login = {"email": "name@example.org", "password": PASSWORD}
    assert client.post("/api/sessions", json=login).status_code == 200
    register = world.settings.exclusion_register_file
    assert register is not None
    register.write_text(REGISTER + "d'artagnan,Jean Eric,1985-06-01\n", encoding="utf-8")
    response = client.post("/api/sessions", json=login)
    assert (response.status_code, response.json()["error"]) == (403, "nationally_excluded")


def test_a_register_change_that_cannot_be_read_keeps_the_previous_list(
    client: TestClient, world: World
) -> None:
    register = world.settings.exclusion_register_file
    assert register is not None
    register.write_bytes(b"\xff\xfe not utf-8")
    response = sign_up(client, "ines@example.org", **LISTED)
    assert (response.status_code, response.json()["error"]) == REFUSED
    register.unlink()
    assert sign_up(client, "ines@example.org", **LISTED).status_code == 409


@pytest.mark.parametrize(
    "birth_date", ["0001-01-01", "1899-12-31", 0, "631152000", "1990-01-01T00:00:00", "2099-01-01"]
)
def test_a_birth_date_is_an_iso_date_from_1900_to_today(
    client: TestClient, birth_date: object
) -> None:
    body = {"email": "b@example.org", "password": PASSWORD, **PERSON, "birth_date": birth_date}
    response = client.post("/api/players", json=body)
    assert (response.status_code, response.json()["error"]) == (422, "invalid_input")


def test_a_player_is_eighteen_on_their_birthday_in_paris(client: TestClient, world: World) -> None:
    # 23:30 UTC on 30 November is already 1 December in Paris.
    world.clock.advance(11.5 * 3600)
    born = {**PERSON, "birth_date": "2008-12-01"}
    assert sign_up(client, "eighteen@example.org", **born).status_code == 201


def _register(world: World, email: str) -> int:
    person = {"first_name": "Jean-Éric", "last_name": "D'Artagnan"}
    return accounts.register(world.platform, email, PASSWORD, date(1985, 6, 1), **person)


def test_sign_ups_racing_an_exclusion_of_the_same_person_all_end_excluded(world: World) -> None:
    first = _register(world, "first@example.org")

    def attempt(index: int) -> int | None:
        if index == 0:
            responsible.exclude(world.platform, first, "permanent")
            return None
        return _register(world, f"racer{index}@example.net")

    results = race(12, attempt)
    opened = [result for result in results if isinstance(result, int)]
    refused = [result for result in results if isinstance(result, SelfExcluded)]
    assert len(opened) + len(refused) == 11, results
    for player_id in [first, *opened]:
        assert responsible.exclusion(world.platform, player_id).permanent, player_id
    with pytest.raises(SelfExcluded):
        _register(world, "late@example.net")


def test_exclusions_of_one_persons_accounts_racing_their_purchases_never_deadlock(
    world: World,
) -> None:
    world.stock("cash")
    players = [_register(world, f"acc{index}@example.org") for index in range(2)]
    for player_id in players:
        accounts.deposit(world.platform, player_id, 5_000)

    def attempt(index: int) -> object:
        player_id = players[index % 2]
        if index < 2:
            return responsible.exclude(world.platform, player_id, "30d")
        if index % 3 == 0:
            return accounts.deposit(world.platform, player_id, 100)
        return tickets.buy(world.platform, player_id, game_name="cash", mode="play")

    results = race(16, attempt)
    failures = [r for r in results if isinstance(r, Exception) and not isinstance(r, SelfExcluded)]
    assert not failures, failures
    for player_id in players:
        assert responsible.exclusion(world.platform, player_id).excluded


def test_the_persons_migration_keys_old_accounts_by_mailbox_and_carries_exclusions(
    world: World, tmp_path: Path
) -> None:
    from alembic import command
    from alembic.script import ScriptDirectory

    from grattage.adapters.database import make_engine
    from grattage.adapters.migrations import alembic_config
    from support import database_url

    kind = "sqlite" if world.platform.uow.engine.dialect.name == "sqlite" else "postgres"  # type: ignore[attr-defined]
    with database_url(kind, tmp_path / "old", migrated=False) as url:
        engine = make_engine(url)
        config = alembic_config(engine)
        before = ScriptDirectory.from_config(config).get_revision("0007").down_revision
        assert isinstance(before, str)
        command.upgrade(config, before)
        with engine.begin() as db:
            for email in ("name@example.org.", "name+1@example.org", "other@example.org"):
                db.execute(
                    text(
                        "INSERT INTO players (email, password_hash, birth_date, created_at)"
                        " VALUES (:email, 'x', '1990-01-01', '2026-01-01')"
                    ),
                    {"email": email},
                )
            db.execute(
                text(
                    "INSERT INTO player_limits (player_id, week_deposits_cents, week_stakes_cents,"
                    " excluded_forever) VALUES (1, 0, 0, TRUE), (2, 0, 0, FALSE), (3, 0, 0, FALSE)"
                )
            )
        command.upgrade(config, "head")
        with engine.begin() as db:
            emails = db.execute(text("SELECT email FROM players ORDER BY id")).scalars().all()
            keys = db.execute(
                text("SELECT mailbox_key, person_key FROM player_identities ORDER BY player_id")
            ).all()
            excluded = (
                db.execute(text("SELECT excluded_forever FROM player_limits ORDER BY player_id"))
                .scalars()
                .all()
            )
            carried = db.execute(text("SELECT key FROM identity_exclusions")).scalars().all()
        engine.dispose()
    assert emails == ["name@example.org", "name+1@example.org", "other@example.org"]
    assert [tuple(row) for row in keys] == [
        ("name@example.org", None),
        ("name@example.org", None),
        ("other@example.org", None),
    ]
    assert [bool(value) for value in excluded] == [True, True, False]
    assert carried == ["mailbox:name@example.org"]


def test_migration_0010_rekeys_persons_and_gmail_mailboxes_and_carries_their_exclusions(
    world: World, tmp_path: Path
) -> None:
    from alembic import command

    from grattage.adapters.database import make_engine
    from grattage.adapters.migrations import alembic_config
    from support import database_url

    kind = "sqlite" if world.platform.uow.engine.dialect.name == "sqlite" else "postgres"  # type: ignore[attr-defined]
    with database_url(kind, tmp_path / "old", migrated=False) as url:
        engine = make_engine(url)
        config = alembic_config(engine)
        command.upgrade(config, "0009")
        with engine.begin() as db:
            rows = [  # (email, first name, last name, key under 0009's rule)
                ("a@example.org", "Jean-Éric", "D'Artagnan", "dartagnan/jeaneric/1985-06-01"),
                (
                    "b@example.org",
                    "Jean Éric Marie",
                    "D'Artagnan",
                    "dartagnan/jeanericmarie/1985-06-01",
                ),
                ("first.last@gmail.com", "Zoé", "Autre", "autre/zoe/1991-01-01"),
                ("firstlast@gmail.com", "Léa", "Autre", "autre/lea/1991-01-01"),
            ]
            for player_id, (email, first, last, key) in enumerate(rows, start=1):
                db.execute(
                    text(
                        "INSERT INTO players (email, password_hash, birth_date, created_at)"
                        " VALUES (:email, 'x', :born, '2026-01-01')"
                    ),
                    {"email": email, "born": key[-10:]},
                )
                db.execute(
                    text(
                        "INSERT INTO player_identities VALUES (:id, :mailbox, :key, :first, :last)"
                    ),
                    {"id": player_id, "mailbox": email, "key": key, "first": first, "last": last},
                )
                db.execute(
                    text(
                        "INSERT INTO player_limits (player_id, week_deposits_cents,"
                        " week_stakes_cents, excluded_forever) VALUES (:id, 0, 0, :forever)"
                    ),
                    {"id": player_id, "forever": player_id in (1, 3)},
                )
            db.execute(
                text(
                    "INSERT INTO identity_exclusions (key, excluded_forever) VALUES"
                    " ('person:dartagnan/jeaneric/1985-06-01', TRUE),"
                    " ('mailbox:first.last@gmail.com', TRUE)"
                )
            )
        command.upgrade(config, "head")
        with engine.begin() as db:
            keys = db.execute(
                text("SELECT mailbox_key, person_key FROM player_identities ORDER BY player_id")
            ).all()
            excluded = (
                db.execute(text("SELECT excluded_forever FROM player_limits ORDER BY player_id"))
                .scalars()
                .all()
            )
            carried = db.execute(text("SELECT key FROM identity_exclusions")).scalars().all()
        engine.dispose()
    assert [person for _, person in keys][:2] == ["dartagnan/jean/1985-06-01"] * 2
    assert [mailbox for mailbox, _ in keys][2:] == ["firstlast@gmail.com"] * 2
    assert [bool(x) for x in excluded] == [True, True, True, True]
    assert sorted(carried) == ["mailbox:firstlast@gmail.com", "person:dartagnan/jean/1985-06-01"]
