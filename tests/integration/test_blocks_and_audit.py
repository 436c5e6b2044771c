"""Suspending, resuming and closing blocks, and the hash-chained audit log that records every
change of a block's state and every operator action."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from grattage.errors import Conflict, NotOnSale, SoldOut
from grattage.service import audit_trail
from grattage.service.emissions import (
    close_block,
    list_blocks,
    open_block,
    resume_block,
    suspend_block,
)
from grattage.service.records import TicketView
from support import World, bought


def buy(world: World, player: int) -> TicketView:
    ticket, _ = bought(world, player, game_name="cash", mode="auto")
    return ticket


def states(world: World) -> list[str]:
    return [block.state for block in list_blocks(world.platform, "cash")]


def sql(world: World, statement: str) -> None:
    with world.platform.uow.write() as repos:
        repos.blocks.db.execute(text(statement))  # type: ignore[attr-defined]


def test_a_suspended_block_sells_nothing_until_resumed(world: World) -> None:
    world.stock("cash", blocks=2)
    player = world.player(5_000)
    suspend_block(world.platform, 1, actor="operator:o@example.org")
    assert states(world) == ["suspended", "pending"]
    with pytest.raises(NotOnSale, match="cash is suspended by the operator"):
        buy(world, player)
    assert states(world) == ["suspended", "pending"]  # the next block did not open instead
    resume_block(world.platform, 1, actor="operator:o@example.org")
    assert buy(world, player).document["block"] == 1


def test_a_closed_block_never_reopens_and_a_closed_game_says_so(world: World) -> None:
    world.stock("cash", blocks=1)
    player = world.player(5_000)
    close_block(world.platform, 1, actor="cli")
    for change in (open_block, resume_block, suspend_block, close_block):
        with pytest.raises(Conflict):
            change(world.platform, 1)
    with pytest.raises(NotOnSale, match="cash is closed by the operator"):
        buy(world, player)


def test_a_sold_out_game_is_still_sold_out(world: World) -> None:
    world.stock("cash", blocks=1)
    size = list_blocks(world.platform, "cash")[0].size
    player = world.player(size * 500)
    for _ in range(size):
        buy(world, player)
    with pytest.raises(SoldOut):
        buy(world, player)


def test_every_block_state_change_is_in_the_audit_log_including_exhaustion(
    world: World,
) -> None:
    world.stock("cash", blocks=2)
    size = list_blocks(world.platform, "cash")[0].size
    player = world.player(size * 500)
    suspend_block(world.platform, 1, actor="operator:o@example.org")
    resume_block(world.platform, 1, actor="operator:o@example.org")
    for _ in range(size):
        buy(world, player)
    actions = [
        (entry.action, entry.subject, entry.actor)
        for entry in reversed(audit_trail.latest(world.platform))
    ]
    assert actions == [
        ("emission.create", "emission:1", "system"),
        ("block.create", "block:1", "system"),
        ("block.create", "block:2", "system"),
        ("block.open", "block:1", "system"),
        ("block.suspended", "block:1", "operator:o@example.org"),
        ("block.open", "block:1", "operator:o@example.org"),
        ("block.exhausted", "block:1", "system:sale"),
        ("block.open", "block:2", "system:sale"),
    ]
    assert audit_trail.verify(world.platform).clean


def _logged(world: World, count: int = 6) -> None:
    world.stock("cash", blocks=2)
    suspend_block(world.platform, 1)
    resume_block(world.platform, 1)
    assert audit_trail.verify(world.platform).entries == count


def test_audit_verify_passes_on_a_clean_log(world: World) -> None:
    _logged(world)
    result = audit_trail.verify(world.platform)
    assert (result.clean, result.first_bad) == (True, None)


def test_audit_verify_names_an_edited_entry(world: World) -> None:
    _logged(world)
    sql(world, "UPDATE audit_log SET actor = 'someone else' WHERE id = 3")
    result = audit_trail.verify(world.platform)
    assert (result.clean, result.first_bad) == (False, 3)


def test_audit_verify_names_a_deleted_entry(world: World) -> None:
    _logged(world)
    sql(world, "DELETE FROM audit_log WHERE id = 4")
    assert audit_trail.verify(world.platform).first_bad == 4


def test_audit_verify_notices_entries_cut_off_the_end(world: World) -> None:
    _logged(world)
    sql(world, "DELETE FROM audit_log WHERE id = 6")
    assert audit_trail.verify(world.platform).first_bad == 6


def test_audit_verify_names_reordered_entries(world: World) -> None:
    _logged(world)
    sql(world, "UPDATE audit_log SET id = 100 WHERE id = 2")
    sql(world, "UPDATE audit_log SET id = 2 WHERE id = 3")
    sql(world, "UPDATE audit_log SET id = 3 WHERE id = 100")
    assert audit_trail.verify(world.platform).first_bad == 2


def test_audit_verify_names_an_inserted_entry(world: World) -> None:
    _logged(world)
    with world.platform.uow.read() as repos:
        third = repos.audit_log.entries(2, 1)[0]
    sql(world, "UPDATE audit_log SET id = id + 10")
    sql(world, "UPDATE audit_log SET id = id - 10 WHERE id <= 13")
    sql(world, "UPDATE audit_log SET id = id - 9 WHERE id > 13")
    details = json.dumps({"forged": True})
    sql(
        world,
        "INSERT INTO audit_log (id, created_at, actor, action, subject, details, prev_hash, hash)"
        f" VALUES (4, '{third.created_at}', 'x', 'block.closed', 'block:1', '{details}',"
        f" '{third.hash}', '{'0' * 64}')",
    )
    assert audit_trail.verify(world.platform).first_bad == 4


@pytest.mark.parametrize("world_settings", [{"drawn": False}])  # several open blocks
def test_concurrent_operator_actions_form_one_unbroken_chain(world: World) -> None:
    from integration.test_concurrency import race

    world.stock("cash", blocks=8)
    for block_id in range(2, 9):
        open_block(world.platform, block_id)

    def toggle(index: int) -> None:
        block_id = index % 8 + 1
        suspend_block(world.platform, block_id, actor=f"operator:{index}")
        resume_block(world.platform, block_id, actor=f"operator:{index}")

    results = race(16, toggle)
    assert all(result is None or isinstance(result, Conflict) for result in results)
    result = audit_trail.verify(world.platform)
    assert result.clean, result.problem
    assert result.entries >= 1 + 8 + 8 + 2 * 8


def test_the_suspended_state_migration_keeps_existing_blocks_and_tickets(
    world: World, tmp_path
) -> None:
    from alembic import command

    from grattage.adapters.database import make_engine
    from grattage.adapters.migrations import alembic_config
    from support import database_url

    kind = world.platform.uow.engine.dialect.name  # type: ignore[attr-defined]
    kind = "sqlite" if kind == "sqlite" else "postgres"
    with database_url(kind, tmp_path / "old", migrated=False) as url:
        engine = make_engine(url)
        config = alembic_config(engine)
        command.upgrade(config, "0002")
        with engine.begin() as db:
            for statement in (
                "INSERT INTO players (email, password_hash, birth_date, created_at, failed_logins)"
                " VALUES ('a@b.org', 'x', '1990-01-01', '2026-01-01', 0)",
                "INSERT INTO emissions (game, table_json, table_digest, created_at)"
                " VALUES ('cash', '{}', 'd', '2026-01-01')",
                "INSERT INTO blocks (emission_id, game, key_id, size, sold, state, chunk_units,"
                " created_at) VALUES (1, 'cash', 'k', 10, 1, 'open', 5, '2026-01-01')",
                "INSERT INTO tickets (player_id, game, block_id, position, mode, stake_cents,"
                " prize_cents, document, revealed, state, created_at, last_action_at,"
                " balance_before_cents, balance_after_cents) VALUES (1, 'cash', 1, 0, 'auto',"
                " 500, 0, '{}', '[]', 'finished', '2026-01-01', '2026-01-01', 500, 0)",
            ):
                db.execute(text(statement))
        command.upgrade(config, "head")
        with engine.begin() as db:
            db.execute(text("UPDATE blocks SET state = 'suspended'"))
            assert db.execute(text("SELECT count(*) FROM tickets")).scalar_one() == 1
        with pytest.raises(Exception, match="block_state|CHECK"), engine.begin() as db:
            db.execute(text("UPDATE blocks SET state = 'bogus'"))
        engine.dispose()
