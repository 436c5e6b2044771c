"""Emissions and blocks: create them from the engine, open, close, and show the catalogue.

A block is stored sealed: its tier bytes (one per unit, in sale order) encrypted under the
block's key, in fixed-size chunks so that a sale reads a single byte of one chunk. The key goes
to the key store, written and fsynced before the block's row commits.
"""

from __future__ import annotations

import json
import secrets
import uuid
from dataclasses import dataclass
from typing import Protocol

from grattage.blocks.commitment import build_tree_and_chain
from grattage.blocks.draw_records import document_sha256, draw_members
from grattage.blocks.operator_chain import chain_seed, seal_chain
from grattage.blocks.progress import Progress
from grattage.blocks.proofs_v2 import make_commitment, tier_prizes
from grattage.blocks.sealing import new_block_key, seal_tiers
from grattage.blocks.shuffle import secure_generator, shuffled_tiers
from grattage.blocks.signing import canonical_json
from grattage.errors import InvalidInput
from grattage.games import PrizeTable, default_table, find_game, game_names
from grattage.games.registry import game_type
from grattage.service import prizes_left
from grattage.service.audit_trail import record, record_block_changes
from grattage.service.block_lifecycle import UNPLAYABLE_TABLE_ERRORS, table_unplayable
from grattage.service.block_states import (
    close_block,
    open_block,
    resume_block,
    suspend_block,
)
from grattage.service.context import Platform
from grattage.service.model import Block, NewBlock
from grattage.service.ports import Repositories
from grattage.service.records import GameListing, OpenBlockPrizes, PrizeTier
from grattage.service.transparency import integrate_all, log_time, queue_entry

__all__ = [
    "catalogue",
    "check_block_count",
    "close_block",
    "create_emission",
    "list_blocks",
    "open_block",
    "resume_block",
    "suspend_block",
]

SEALED_CHUNK_UNITS = 64 * 1024
"""Units per stored chunk: 64 KiB rows keep a 12 000 000-unit block at 184 rows."""


def _no_progress(step: str, done: int, total: int) -> None:
    pass


@dataclass(frozen=True)
class EmissionCreated:
    emission_id: int
    block_ids: tuple[int, ...]
    opened: tuple[int, ...]


MAX_BLOCKS_PER_EMISSION = 1000


def check_block_count(blocks: int) -> None:
    if not 1 <= blocks <= MAX_BLOCKS_PER_EMISSION:
        raise InvalidInput(f"an emission has 1 to {MAX_BLOCKS_PER_EMISSION} blocks, got {blocks!r}")


class EmissionWatch(Protocol):
    """Joins each write transaction of an emission being made (a background job's books):
    raising rolls that transaction back and stops the emission there."""

    def stored(self, repos: Repositories, emission_id: int) -> None:
        """The emission's row, or one of its blocks, is being written."""
        ...

    def finished(self, repos: Repositories, created: EmissionCreated) -> None:
        """Every block is stored and the first opened: the emission's last transaction."""
        ...


def create_emission(
    platform: Platform,
    game_name: str,
    blocks: int,
    *,
    table: PrizeTable | None = None,
    progress: Progress = _no_progress,
    open_blocks: int = 1,
    actor: str = "system",
    watch: EmissionWatch | None = None,
) -> EmissionCreated:
    """``blocks`` new blocks of ``game_name``; opens up to ``open_blocks`` if none is open.

    ``actor`` (``operator:<email>``, ``cli``…) is who the audit log says did it. Each block is
    written whole in one transaction once sealed and committed to; ``watch`` joins them."""
    check_block_count(blocks)
    table = table or default_table(game_name)
    game = find_game(game_name, table)
    # Blocks are made where the key store is writable: the operator's own keys are made
    # there too, never at an app host's first sale (its key store is read-only).
    platform.keys.operator_key()
    platform.keys.pseudonym_key()
    table_json = json.dumps(table.to_dict(), sort_keys=True, separators=(",", ":"))
    now = platform.clock.now()
    with platform.uow.write() as repos:
        emission_id = repos.blocks.add_emission(
            game.name, table_json, table.digest(), table.price_cents, table.title, now
        )
        record(
            repos,
            now,
            actor,
            "emission.create",
            f"emission:{emission_id}",
            {
                "game": game.name,
                "blocks": blocks,
                "price_cents": table.price_cents,
                "table_title": table.title,
                "table_digest": table.digest(),
            },
        )
        if watch is not None:
            watch.stored(repos, emission_id)
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
                watch=watch,
            )
        )
    integrate_all(platform)  # the commitments into the log: only then may a block open
    opened = []
    with platform.uow.write() as repos:
        if platform.witness is not None:  # drawn blocks: one open at a time
            open_blocks = min(open_blocks, 1)
        if not repos.blocks.has_open(game.name) and not repos.blocks.has_suspended(game.name):
            for _ in range(open_blocks):
                block_id = repos.blocks.open_next_pending(game.name)
                if block_id is not None:
                    opened.append(block_id)
        record_block_changes(repos, platform.clock.now(), actor)
        created = EmissionCreated(emission_id, tuple(block_ids), tuple(opened))
        if watch is not None:
            watch.finished(repos, created)
    return created


def _create_block(
    platform: Platform,
    game: str,
    *,
    emission_id: int,
    table: PrizeTable,
    number: int,
    progress: Progress,
    actor: str = "system",
    watch: EmissionWatch | None = None,
) -> int:
    label = f"block {number + 1}"
    size = table.block_size
    chunks = -(-size // SEALED_CHUNK_UNITS)
    progress(f"{label}: shuffling", 0, chunks)
    tiers = shuffled_tiers(table, secure_generator()).tobytes()
    key = new_block_key()
    sealed = seal_tiers(key, tiers)
    public_id = uuid.uuid4().bytes
    # A drawn block's commitment binds its operator chain (N hashes, sequential): walked by one
    # of the tree's worker processes while the others hash the tree, not after it.
    tree, chain = build_tree_and_chain(
        public_id,
        key,
        tiers,
        chain_seed(key) if platform.witness is not None else None,
        progress=lambda _step, done, total: progress(f"{label}: committing", done, total),
        tier_prizes=tier_prizes(table),
    )
    del tiers
    bound = find_game(game, table)
    drawn = None
    if platform.witness is not None and chain is not None:
        chain_head, checkpoints = seal_chain(key, chain)
        drawn = (draw_members(chain_head, size, platform.witness.witness_key), checkpoints)
    created_at = log_time(platform.clock.now())
    key_id = secrets.token_hex(16)
    platform.keys.put(key_id, key)
    try:
        with platform.uow.write() as repos:
            # The key in force, held until this commits (a rotation waits); taken before the
            # audit log, as every signer does (service/key_rotation.py).
            signer = platform.signer(repos, hold=True)
            if watch is not None:
                watch.stored(repos, emission_id)
            created = NewBlock(
                emission_id,
                game,
                key_id,
                size,
                SEALED_CHUNK_UNITS,
                platform.clock.now(),
                price_cents=table.price_cents,
                title=table.title,
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
            commitment = make_commitment(
                signer,
                public_id,
                bound,
                table.price_cents,
                tree.root,
                size,
                created_at,
                extra=None if drawn is None else drawn[0],
            )
            repos.blocks.add_commitment(
                block_id, canonical_json(commitment).decode("ascii"), tree.chunk_roots
            )
            if drawn is not None:
                repos.draws.add_block(block_id, size, drawn[1])
                # The chain of its receipts starts at the commitment (receipt 0's previous).
                repos.draws.set_chain_tip(block_id, document_sha256(commitment).hex(), None)
            queue_entry(
                repos,
                platform.clock.now(),
                "block.commitment",
                {"commitment": commitment},
                block_row=block_id,
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


def catalogue(platform: Platform) -> list[GameListing]:
    """Every game as the lobby shows it, with the table, price and title of the block now on
    sale (else of the game's default table). A stored table that cannot be played never fails
    the catalogue: its game is listed off sale, ``table_unplayable``."""
    shown = []
    with platform.uow.read() as repos:
        open_blocks = prizes_left.open_blocks_prizes(platform, repos)
        for name in game_names():
            on_sale_now = tuple(left for block, left in open_blocks if block.game == name)
            block = repos.blocks.showcase(name)
            units_left = repos.blocks.units_left(name)
            shown.append(_listing(platform, name, block, units_left, on_sale_now))
    return shown


def _listing(
    platform: Platform,
    name: str,
    block: Block | None,
    units_left: int,
    on_sale_now: tuple[OpenBlockPrizes, ...],
) -> GameListing:
    kind = game_type(name)
    if block is None:
        game, price, title = find_game(name), default_table(name).price_cents, None
    else:
        price, title = block.price_cents, block.title
        try:
            game = platform.game_for_table(block.table_json)
        except UNPLAYABLE_TABLE_ERRORS:
            game = None
    if game is None or table_unplayable(game.table, price) is not None:
        return GameListing(
            name=name,
            title=title or name,
            table_title=title or name,
            table_source="",
            price_cents=price,
            block_size=block.size if block is not None else 0,
            top_prize_cents=0,
            winning_tickets=0,
            prizes_total_cents=0,
            reconstruction=False,
            regulation_date=kind.regulation_date,
            choices=tuple(kind.choices),
            zones=tuple(kind.zones),
            prize_table=(),
            on_sale=False,
            open_blocks=(),
            top_prizes_remaining=None,
            off_sale_reason="table_unplayable",
        )
    table = game.table
    return GameListing(
        name=game.name,
        title=title or table.title,
        table_title=table.title,
        table_source=table.source,
        price_cents=price,
        block_size=table.block_size,
        top_prize_cents=max(t.prize_cents for t in table.tiers),
        winning_tickets=table.prizes_count,
        prizes_total_cents=table.prizes_total_cents,
        reconstruction=table.reconstruction,
        regulation_date=game.regulation_date,
        choices=tuple(game.choices),
        zones=tuple(game.zones),
        prize_table=tuple(PrizeTier(t.prize_cents, t.count) for t in table.tiers),
        on_sale=units_left > 0,
        open_blocks=on_sale_now,
        top_prizes_remaining=prizes_left.top_prizes_remaining(on_sale_now),
        off_sale_reason=None if units_left > 0 else "sold_out",
    )
