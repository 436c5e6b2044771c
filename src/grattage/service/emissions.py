"""Emissions and blocks: create them from the engine, open, close, and show the catalogue.

A block is stored sealed: its tier bytes (one per unit, in sale order) encrypted under the
block's key, in fixed-size chunks so that a sale reads a single byte of one chunk. The key goes
to the key store, written and fsynced before the block's row commits.
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from grattage.blocks.commitment import build_tree
from grattage.blocks.progress import Progress
from grattage.blocks.proofs import make_commitment
from grattage.blocks.sealing import new_block_key, seal_tiers
from grattage.blocks.shuffle import secure_generator, shuffled_tiers
from grattage.errors import Conflict, InvalidInput, NotFound
from grattage.games import PrizeTable, default_table, find_game, game_names
from grattage.service.audit_trail import record, record_block_changes
from grattage.service.context import Platform
from grattage.service.model import Block, BlockState, NewBlock
from grattage.service.ports import Repositories
from grattage.service.records import GameListing, PrizeTier

SEALED_CHUNK_UNITS = 64 * 1024
"""Units per stored chunk: 64 KiB rows keep a 12 000 000-unit block at 184 rows."""


def _no_progress(step: str, done: int, total: int) -> None:
    pass


@dataclass(frozen=True)
class EmissionCreated:
    emission_id: int
    block_ids: tuple[int, ...]
    opened: tuple[int, ...]


def create_emission(
    platform: Platform,
    game_name: str,
    blocks: int,
    *,
    table: PrizeTable | None = None,
    progress: Progress = _no_progress,
    open_blocks: int = 1,
    actor: str = "system",
) -> EmissionCreated:
    """``blocks`` new blocks of ``game_name``; opens up to ``open_blocks`` if none is open.

    ``actor`` (``operator:<email>``, ``cli``…) is who the audit log says did it."""
    if not 1 <= blocks <= 1000:
        raise InvalidInput(f"an emission has 1 to 1000 blocks, got {blocks!r}")
    table = table or default_table(game_name)
    game = find_game(game_name, table)
    table_json = json.dumps(table.to_dict(), sort_keys=True, separators=(",", ":"))
    now = platform.clock.now()
    with platform.uow.write() as repos:
        emission_id = repos.blocks.add_emission(game.name, table_json, table.digest(), now)
        record(
            repos,
            now,
            actor,
            "emission.create",
            f"emission:{emission_id}",
            {
                "game": game.name,
                "blocks": blocks,
                "table_title": table.title,
                "table_digest": table.digest(),
            },
        )
    block_ids = []
    for number in range(blocks):
        block_ids.append(
            _create_block(
                platform,
                game.name,
                emission_id=emission_id,
                table=table,
                number=number,
                progress=progress,
                actor=actor,
            )
        )
    opened = []
    with platform.uow.write() as repos:
        if not repos.blocks.has_open(game.name) and not repos.blocks.has_suspended(game.name):
            for _ in range(open_blocks):
                block_id = repos.blocks.open_next_pending(game.name)
                if block_id is not None:
                    opened.append(block_id)
        record_block_changes(repos, platform.clock.now(), actor)
    return EmissionCreated(emission_id, tuple(block_ids), tuple(opened))


def _create_block(
    platform: Platform,
    game: str,
    *,
    emission_id: int,
    table: PrizeTable,
    number: int,
    progress: Progress,
    actor: str = "system",
) -> int:
    label = f"block {number + 1}"
    size = table.block_size
    chunks = -(-size // SEALED_CHUNK_UNITS)
    progress(f"{label}: shuffling", 0, chunks)
    tiers = shuffled_tiers(table, secure_generator()).tobytes()
    key = new_block_key()
    sealed = seal_tiers(key, tiers)
    public_id = uuid.uuid4().bytes
    tree = build_tree(
        public_id,
        key,
        tiers,
        progress=lambda _step, done, total: progress(f"{label}: committing", done, total),
    )
    del tiers
    commitment = make_commitment(
        public_id,
        find_game(game, table),
        tree.root,
        size,
        platform.clock.now().isoformat(timespec="seconds"),
    )
    key_id = secrets.token_hex(16)
    platform.keys.put(key_id, key)
    try:
        with platform.uow.write() as repos:
            created = NewBlock(
                emission_id, game, key_id, size, SEALED_CHUNK_UNITS, platform.clock.now()
            )
            block_id = repos.blocks.add_block(created)
            record(
                repos,
                platform.clock.now(),
                actor,
                "block.create",
                f"block:{block_id}",
                {"emission": emission_id, "game": game, "size": size, "state": "pending"},
            )
            repos.blocks.add_commitment(
                block_id, json.dumps(commitment, sort_keys=True), tree.chunk_roots
            )
            for chunk in range(chunks):
                start = chunk * SEALED_CHUNK_UNITS
                repos.blocks.add_chunk(block_id, chunk, sealed[start : start + SEALED_CHUNK_UNITS])
                progress(f"{label}: storing", chunk + 1, chunks)
    except BaseException:
        platform.keys.discard(key_id)
        raise
    return block_id


def list_blocks(platform: Platform, game: str | None = None) -> list[Block]:
    with platform.uow.read() as repos:
        return repos.blocks.all(game)


def close_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """The operator withdraws a block from sale for good; the next pending one opens if no
    block is left on sale (and none is suspended)."""
    _change_state(
        platform,
        block_id,
        ("open", "suspended", "pending"),
        "closed",
        actor,
        "it cannot be closed",
        then=_open_next_if_none_on_sale,
    )


def open_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """Put a pending block on sale alongside the open ones."""
    _change_state(platform, block_id, ("pending",), "open", actor, "only a pending block opens")


def suspend_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """Stop selling a block until it is resumed (an open or pending block)."""
    _change_state(
        platform,
        block_id,
        ("open", "pending"),
        "suspended",
        actor,
        "only an open or pending block is suspended",
    )


def resume_block(platform: Platform, block_id: int, actor: str = "system") -> None:
    """Put a suspended block back on sale."""
    _change_state(
        platform, block_id, ("suspended",), "open", actor, "only a suspended block resumes"
    )


def _open_next_if_none_on_sale(repos: Repositories, block: Block) -> None:
    if not repos.blocks.has_open(block.game) and not repos.blocks.has_suspended(block.game):
        repos.blocks.open_next_pending(block.game)


def _change_state(
    platform: Platform,
    block_id: int,
    before: tuple[BlockState, ...],
    after: BlockState,
    actor: str,
    rule: str,
    then: Callable[[Repositories, Block], None] | None = None,
) -> None:
    """Move the block to ``after`` from the first of ``before`` it is in (Conflict, saying
    ``rule``, if none), run ``then`` in the same transaction, and audit every change."""
    now = platform.clock.now()
    with platform.uow.write() as repos:
        block = repos.blocks.get(block_id)
        if block is None:
            raise NotFound(f"no block {block_id!r}")
        if not any(repos.blocks.set_state(block_id, after, only_from=state) for state in before):
            raise Conflict(f"block {block_id!r} is {block.state}; {rule}")
        if then is not None:
            then(repos, block)
        record_block_changes(repos, now, actor)


def catalogue(platform: Platform) -> list[GameListing]:
    """Every game as the lobby shows it, with the table of the block now on sale."""
    shown = []
    with platform.uow.read() as repos:
        for name in game_names():
            block = repos.blocks.showcase(name)
            game = (
                platform.game_for_table(block.table_json) if block is not None else find_game(name)
            )
            table = game.table
            shown.append(
                GameListing(
                    name=game.name,
                    title=game.title,
                    table_title=table.title,
                    table_source=table.source,
                    price_cents=game.price_cents,
                    block_size=table.block_size,
                    top_prize_cents=max(t.prize_cents for t in table.tiers),
                    winning_tickets=table.prizes_count,
                    prizes_total_cents=table.prizes_total_cents,
                    reconstruction=table.reconstruction,
                    choices=tuple(game.choices),
                    zones=tuple(game.zones),
                    prize_table=tuple(PrizeTier(t.prize_cents, t.count) for t in table.tiers),
                    on_sale=repos.blocks.units_left(name) > 0,
                )
            )
    return shown
