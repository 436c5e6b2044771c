"""Fairness use cases: a block's commitment, a finished ticket's proof, an ended block's
disclosure. The checks themselves live in :mod:`grattage.blocks.proofs` (standard library).

The commitment, the proof and the disclosure are returned as the documents
:mod:`grattage.blocks.proofs` defines (their format, with a version, is what an auditor's
verifier reads): passed on as they are, never re-shaped."""

from __future__ import annotations

import json
from typing import Any

from grattage.blocks import proofs_v2
from grattage.blocks.commitment import unit_audit_path
from grattage.blocks.merkle import CHUNK_LEAVES
from grattage.blocks.proofs import make_disclosure, make_ticket_proof
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import unseal_tiers
from grattage.errors import Conflict, NotFound
from grattage.service import drawn_proof, prizes_left, transparency
from grattage.service.context import Platform
from grattage.service.model import Block, LogEntryRow, Ticket
from grattage.service.ports import Repositories
from grattage.service.records import PublicBlock
from grattage.service.views import ticket_document

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
        left = {
            block.id: prizes.prizes_remaining
            for block, prizes in prizes_left.open_blocks_prizes(platform, repos, game)
        }
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
                    prizes_remaining=left.get(block.id),
                )
            )
    return shown


def ended_block_ids(platform: Platform) -> list[int]:
    """Blocks whose key and tiers are now public: exhausted or closed, every sale drawn (the
    key discloses a drawn block's chain, so it waits for the block's last draw)."""
    with platform.uow.read() as repos:
        return [
            block.id
            for block in repos.blocks.all()
            if block.state in ENDED_STATES and not repos.draws.undrawn(block.id)
        ]


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


def ticket_proof(
    platform: Platform, player_id: int, ticket_id: int, tree_size: int | None = None
) -> dict[str, Any]:
    """The proof of a finished ticket of the player's (anyone else's id is not found): of
    version 2, against the log's head of ``tree_size`` (the newest by default), for a block
    committed in the transparency log; of version 1 for the blocks before it."""
    with platform.uow.read() as repos:
        ticket = repos.tickets.get(ticket_id)
        if ticket is None or ticket.player_id != player_id:
            raise NotFound(f"no ticket {ticket_id!r}")
        if ticket.state != "finished":
            raise Conflict(f"ticket {ticket_id!r} is not finished: its proof comes once it is")
        position = ticket.position
        assert position is not None  # a finished ticket was drawn
        block, public, chunk_roots = _commitment(repos, ticket.block_id)
        loaded = platform.loaded_block(repos, block.id)
        first = position - position % CHUNK_LEAVES
        count = min(CHUNK_LEAVES, block.size - first)
        chunk_tiers = _read_tiers(repos, block, loaded.key, first, count)
    public_id = bytes.fromhex(public["block_id"])
    if public.get("format") == proofs_v2.COMMITMENT_FORMAT:
        return _proof_v2(platform, ticket, public, chunk_tiers, chunk_roots, first, tree_size)
    path = unit_audit_path(public_id, loaded.key, position, chunk_tiers, chunk_roots)
    tier = chunk_tiers[position - first]
    return make_ticket_proof(
        public,
        position,
        tier,
        ticket.prize_cents,
        unit_salt(loaded.key, position),
        ticket.sign,
        path,
        ticket_document(ticket),
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
        if repos.draws.undrawn(block.id):
            raise Conflict(
                f"block {block_id!r} has sales not drawn yet: its key, which discloses its "
                "chain, is published after its last draw"
            )
        key = platform.loaded_block(repos, block.id).key
        tiers = _read_tiers(repos, block, key, 0, block.size)
        history = transparency.key_history(platform, repos)
    if public.get("format") == proofs_v2.COMMITMENT_FORMAT:
        # The key that signed the commitment: the one in force at its index.
        signed_by = [k.public_key for k in history if k.key_id == public["key_id"]]
        assert signed_by, "a logged commitment is signed by a key of the history"
        return proofs_v2.make_disclosure(public, key, tiers, signed_by[0])
    return make_disclosure(public, key, tiers)


def _proof_v2(
    platform: Platform,
    ticket: Ticket,
    commitment: dict[str, Any],
    chunk_tiers: bytes,
    chunk_roots: bytes,
    first: int,
    tree_size: int | None,
) -> dict[str, Any]:
    """Receipt + unit + commitment + both entries' inclusion in one signed head."""
    position = ticket.position
    assert position is not None
    with platform.uow.read() as repos:
        loaded = platform.loaded_block(repos, ticket.block_id)
        receipt_entry = _receipt_entry(repos, ticket.id)
    if receipt_entry is None or not _drawn_logged(platform, ticket.id, receipt_entry):
        # Sold or drawn less than a merge delay ago: one round places it (it waits before
        # whatever is queued meanwhile), where integrating until the queue is empty could
        # chase the sales of a busy server for as long as they kept coming.
        transparency.integrate_round(platform)
        with platform.uow.read() as repos:
            receipt_entry = _receipt_entry(repos, ticket.id)
    if receipt_entry is None or loaded.block.commitment_index is None:
        raise Conflict(f"ticket {ticket.id!r}'s receipt is not in the transparency log")
    head = transparency.current_head(platform, tree_size)
    if receipt_entry.index >= head.tree_size:
        raise Conflict(
            f"the head of size {head.tree_size} does not include this ticket's receipt yet"
        )
    prizes = proofs_v2.tier_prizes(loaded.game.table)
    block_id = bytes.fromhex(commitment["block_id"])
    path = unit_audit_path(block_id, loaded.key, position, chunk_tiers, chunk_roots, prizes)
    with platform.uow.read() as repos:
        commitment_row = repos.log.entry_at(loaded.block.commitment_index)
        history = transparency.key_history(platform, repos)
        changes = [
            repos.log.entry_at(key.change_index)
            for key in history
            if key.change_index is not None and key.change_index < head.tree_size
        ]
    assert commitment_row is not None and None not in changes

    def logged(index: int, body: str) -> dict[str, Any]:
        proof = transparency.inclusion(platform, index, head.tree_size)
        return {"index": index, "entry": json.loads(body), "path": proof["path"]}

    entry = json.loads(receipt_entry.body)
    draw = drawn_proof.draw_part(platform, ticket, receipt_entry, head, logged)
    log: dict[str, Any] = {
        "sth": head.to_json(),
        "commitment_entry": logged(commitment_row.index, commitment_row.body),
        "receipt_entry": logged(receipt_entry.index, receipt_entry.body),
    }
    if changes:  # the key history from the first key to the head's (none before a rotation)
        log["key_changes"] = [logged(row.index, row.body) for row in changes if row is not None]
    return {
        "format": proofs_v2.PROOF_FORMAT,
        "operator_key": history[0].public_key.hex(),
        "commitment": commitment,
        "receipt": entry["receipt"],
        "unit": {
            "position": position,
            "tier": chunk_tiers[position - first],
            "prize_cents": ticket.prize_cents,
            "salt": unit_salt(loaded.key, position).hex(),
            "choice": ticket.sign,
            "path": [node.hex() for node in path],
        },
        "ticket": ticket_document(ticket),
        "log": log,
        **({} if draw is None else {"draw": draw}),
    }


def _drawn_logged(platform: Platform, ticket_id: int, receipt_entry: LogEntryRow) -> bool:
    """A drawn block's ticket has its ``sale.drawn`` in the log (any other ticket: True)."""
    if json.loads(receipt_entry.body)["receipt"].get("format") != "grattage-receipt/2":
        return True
    with platform.uow.read() as repos:
        return any(row.kind == "sale.drawn" for row in repos.log.entries_of_ticket(ticket_id))


def _receipt_entry(repos: Repositories, ticket_id: int) -> LogEntryRow | None:
    rows = [row for row in repos.log.entries_of_ticket(ticket_id) if row.kind == "sale.receipt"]
    return rows[0] if rows else None
