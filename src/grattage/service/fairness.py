"""Fairness use cases: a block's commitment, a finished ticket's proof, an ended block's
disclosure. The checks themselves live in :mod:`grattage.blocks.proofs` (standard library).

The commitment, the proof and the disclosure are returned as the documents
:mod:`grattage.blocks.proofs` defines (their format, with a version, is what an auditor's
verifier reads): passed on as they are, never re-shaped."""

from __future__ import annotations

import json
from typing import Any

from grattage.blocks.commitment import unit_audit_path
from grattage.blocks.merkle import CHUNK_LEAVES
from grattage.blocks.proofs import make_disclosure, make_ticket_proof
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import unseal_tiers
from grattage.errors import Conflict, NotFound
from grattage.service.context import Platform
from grattage.service.model import Block
from grattage.service.ports import Repositories
from grattage.service.records import PublicBlock

ENDED_STATES = ("exhausted", "closed")


def _commitment(repos: Repositories, block_id: int) -> tuple[Block, dict[str, Any], bytes]:
    block = repos.blocks.get(block_id)
    stored = None if block is None else repos.blocks.commitment(block_id)
    if block is None or stored is None:
        raise NotFound(f"no committed block {block_id!r}")
    commitment_json, chunk_roots = stored
    return block, json.loads(commitment_json), chunk_roots


def commitment(platform: Platform, block_id: int) -> dict[str, Any]:
    """The block's public commitment: fixed when the block was created, before it opened."""
    with platform.uow.read() as repos:
        return _commitment(repos, block_id)[1]


def public_blocks(platform: Platform, game: str | None = None) -> list[PublicBlock]:
    """Every block with its state, sales and commitment root — never an unsold unit's prize."""
    shown = []
    with platform.uow.read() as repos:
        for block in repos.blocks.all(game):
            stored = repos.blocks.commitment(block.id)
            root = None if stored is None else json.loads(stored[0])["root"]
            shown.append(
                PublicBlock(
                    id=block.id,
                    game=block.game,
                    state=block.state,
                    size=block.size,
                    sold=block.sold,
                    root=root,
                    disclosed=block.state in ENDED_STATES,
                )
            )
    return shown


def ended_block_ids(platform: Platform) -> list[int]:
    """Blocks whose key and tiers are now public: exhausted or closed."""
    with platform.uow.read() as repos:
        return [block.id for block in repos.blocks.all() if block.state in ENDED_STATES]


def _read_tiers(repos: Repositories, block: Block, key: bytes, start: int, count: int) -> bytes:
    """Unsealed tiers of units ``start..start+count``, read chunk by stored chunk."""
    parts = []
    position, end = start, start + count
    while position < end:
        chunk_end = min(end, (position // block.chunk_units + 1) * block.chunk_units)
        sealed = repos.blocks.sealed_tiers(block, position, chunk_end - position)
        parts.append(unseal_tiers(key, sealed, position))
        position = chunk_end
    return b"".join(parts)


def ticket_proof(platform: Platform, player_id: int, ticket_id: int) -> dict[str, Any]:
    """The proof of a finished ticket of the player's (anyone else's id is not found)."""
    with platform.uow.read() as repos:
        ticket = repos.tickets.get(ticket_id)
        if ticket is None or ticket.player_id != player_id:
            raise NotFound(f"no ticket {ticket_id!r}")
        if ticket.state != "finished":
            raise Conflict(f"ticket {ticket_id!r} is not finished: its proof comes once it is")
        block, public, chunk_roots = _commitment(repos, ticket.block_id)
        loaded = platform.loaded_block(repos, block.id)
        first = ticket.position - ticket.position % CHUNK_LEAVES
        count = min(CHUNK_LEAVES, block.size - first)
        chunk_tiers = _read_tiers(repos, block, loaded.key, first, count)
    public_id = bytes.fromhex(public["block_id"])
    path = unit_audit_path(public_id, loaded.key, ticket.position, chunk_tiers, chunk_roots)
    tier = chunk_tiers[ticket.position - first]
    return make_ticket_proof(
        public,
        ticket.position,
        tier,
        ticket.prize_cents,
        unit_salt(loaded.key, ticket.position),
        ticket.sign,
        path,
        json.loads(ticket.document),
    )


def disclosure(platform: Platform, block_id: int) -> dict[str, Any]:
    """An ended block's key and every unit's tier, for anyone to rebuild and recount."""
    with platform.uow.read() as repos:
        block, public, _ = _commitment(repos, block_id)
        if block.state not in ENDED_STATES:
            raise Conflict(
                f"block {block_id!r} is {block.state}: its key is disclosed once it is "
                "exhausted or closed"
            )
        key = platform.loaded_block(repos, block.id).key
        tiers = _read_tiers(repos, block, key, 0, block.size)
    return make_disclosure(public, key, tiers)
