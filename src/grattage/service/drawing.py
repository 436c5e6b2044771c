"""Drawing the sales of a published round (docs/draw.md, "The draw in the platform").

Once round ``r``'s value ``w_r`` is published, the sales whose receipts were **covered** — in a
head the witness cosigned for ``r`` before publishing it (or, for a late sale, for a later
round) — are drawn in index order per block: ``j`` from ``w_r``, the block's link ``d_{n+1}``
and the receipt's hash; one Fisher–Yates step on the stored sparse permutation; the unit's
tier unsealed and its ticket designed as every ticket is; an ``auto`` prize credited; the
``sale.drawn`` entry queued. One transaction per batch of a block's draws: its cursor moves
from the value read under its lock to the value after, so a batch runs once however many
drawers try, and a drawer killed at any instant resumes at the block's first undrawn index.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from grattage.blocks.draw import draw_index
from grattage.blocks.draw_records import Resolution
from grattage.blocks.merkle import unit_leaf_v2
from grattage.blocks.sealing import design_unit, unit_salt, unseal_tiers
from grattage.errors import Conflict
from grattage.service import block_log, prizes_left
from grattage.service.audit_trail import record_block_changes
from grattage.service.context import LoadedBlock, Platform
from grattage.service.draw_port import QueuedDraw, SlotState
from grattage.service.model import HOUSE_PRIZES, Leg, Movement, Ticket
from grattage.service.ports import Repositories
from grattage.service.transparency import queue_entry
from grattage.service.views import stored_document, stored_revealed

DRAW_BATCH = 100
"""Draws per transaction: a batch holds its block's cursor and the tickets it draws."""
MAX_RETRIES = 10_000
"""Batches per block and round, at most: enough for any backlog, bounded all the same."""
MOVED = -1


class DesignMismatchError(AssertionError):
    """A designed ticket does not show its unit's prize: a bug, never a client's fault."""


@dataclass(frozen=True)
class PublishedRound:
    """A round the witness published, with every head it cosigned for it: what its draws use
    and what its ``draw.round`` entry logs."""

    chain_id: str
    round: int
    round_ms: int
    value: bytes
    document: Mapping[str, Any]
    chain_document: Mapping[str, Any]
    cosigned: list[dict[str, Any]]

    @property
    def covered_size(self) -> int:
        """The largest head cosigned for the round: a receipt below it was logged in time."""
        return max((int(pair["sth"]["tree_size"]) for pair in self.cosigned), default=0)


def draw_round(platform: Platform, published: PublishedRound) -> int:
    """Draw every sale the round covers that is not drawn yet (sales of this round, and late
    ones of earlier rounds); how many were drawn."""
    with platform.uow.read() as repos:
        block_ids = repos.draws.pending_blocks(published.round_ms)
    total = 0
    for block_id in block_ids:
        for _ in range(MAX_RETRIES):
            drawn = _draw_batch(platform, published, block_id)
            if drawn == 0:
                break
            total += max(drawn, 0)  # -1: another drawer was first; read the block again
    return total


def _draw_batch(platform: Platform, published: PublishedRound, block_id: int) -> int:
    """The block's next covered sales, in index order, drawn: computed from a read of the
    block's state — the swaps, the units' tiers, the designs — outside any lock, then written
    in one short transaction that first checks, under the cursor's lock, that the state read
    is still the block's (else nothing is written and :data:`MOVED` says so: another drawer
    was first). How many were drawn; 0 when none of the round's is left to draw."""
    now = platform.clock.now()
    with platform.uow.read() as repos:
        cursor = repos.draws.cursor(block_id)
        batch: list[QueuedDraw] = []
        for draw in repos.draws.drawable(block_id, published.round_ms, DRAW_BATCH):
            if draw.sequence != cursor + len(batch):
                break  # an earlier index is not drawable yet (nor is this one, after it)
            if draw.receipt_index is None or draw.receipt_index >= published.covered_size:
                break  # not logged in time for this round: a later round draws it
            batch.append(draw)
        if not batch:
            return 0
        loaded = platform.loaded_block(repos, block_id)
        planned = _plan(platform, repos, loaded, published, batch)
    if planned is None:
        return MOVED
    with platform.uow.write() as repos:
        if repos.draws.lock_cursor(block_id) != cursor:
            return MOVED  # drawn meanwhile by another drawer: read again
        _log_round_once(repos, now, published)
        for ready in planned:
            _apply(platform, repos, loaded, ready, now)
        if not repos.draws.set_cursor(block_id, cursor, cursor + len(planned)):
            raise Conflict(f"block {block_id}'s draws moved meanwhile: this batch rolls back")
        block_log.log_end_once_drawn(repos, now, block_id)
    return len(planned)


def _log_round_once(repos: Repositories, now: datetime, published: PublishedRound) -> None:
    if repos.draws.round_logged(published.chain_id, published.round):
        return
    if not repos.draws.chain_logged(published.chain_id):
        queue_entry(repos, now, "beacon.chain", {"chain": dict(published.chain_document)})
        repos.draws.mark_chain_logged(published.chain_id)
    queue_entry(
        repos,
        now,
        "draw.round",
        {"round": dict(published.document), "cosigned": list(published.cosigned)},
    )
    repos.draws.mark_round_logged(published.chain_id, published.round)


@dataclass(frozen=True)
class _Planned:
    """One draw as computed, ready to write."""

    ticket: Ticket
    resolution: Resolution
    slot_writes: list[tuple[int, SlotState | None]]
    """(slot, its new state; None: its row goes)."""
    prize_cents: int
    document: bytes


def _plan(
    platform: Platform,
    repos: Repositories,
    loaded: LoadedBlock,
    published: PublishedRound,
    batch: list[QueuedDraw],
) -> list[_Planned] | None:
    """The batch's draws, computed; None when one of its tickets is no longer covered (another
    drawer drew it since the batch was read)."""
    assert loaded.public_id is not None and loaded.block.commitment_index is not None
    links = platform.link_cursor(repos, loaded)
    size = loaded.block.size
    first, last = batch[0].sequence, batch[-1].sequence
    stored = repos.draws.slots_from(loaded.id, first, last + 1)  # every n, in one read
    covered = repos.draws.covered_tickets([draw.ticket_id for draw in batch])
    changed: dict[int, SlotState | None] = {}  # this batch's own swaps, over the stored ones

    def slot_state(slot: int) -> SlotState | None:
        if slot in changed:
            return changed[slot]
        if first <= slot <= last:
            return stored.get(slot)
        return repos.draws.slot(loaded.id, slot)

    planned = []
    for draw in batch:
        assert draw.receipt_index is not None
        n = draw.sequence
        link = links.link(n + 1)
        receipt_sha256 = bytes.fromhex(draw.receipt_sha256)
        j = draw_index(published.value, link, loaded.public_id, n, size, receipt_sha256)
        # One Fisher-Yates step: swap slots n and j; the sale gets the unit now in slot n.
        at_n = slot_state(n)
        at_j = at_n if j == n else slot_state(j)
        unit_n = n if at_n is None else at_n.unit
        unit = unit_n if j == n else (j if at_j is None else at_j.unit)
        writes: list[tuple[int, SlotState | None]] = []
        if j != n:
            changed[j] = SlotState(unit_n, n)
            writes.append((j, changed[j]))
        changed[n] = None  # slot n is final: no later draw reads it
        if at_n is not None:
            writes.append((n, None))
        ticket = covered.get(draw.ticket_id)
        if ticket is None:
            return None
        prize, document, leaf = _design(repos, loaded, ticket, unit)
        resolution = Resolution(
            block_id=loaded.public_id,
            commitment_index=loaded.block.commitment_index,
            sequence=n,
            receipt_index=draw.receipt_index,
            receipt_sha256=receipt_sha256,
            chain_id=published.chain_id,
            round=published.round,
            link=link,
            slot=j,
            unit=unit,
            slot_unit=unit_n,
            n_set_by=None if at_n is None else at_n.set_by,
            j_set_by=None if at_j is None else at_j.set_by,
            leaf=leaf,
        )
        planned.append(_Planned(ticket, resolution, writes, prize, document))
    return planned


def _design(
    repos: Repositories, loaded: LoadedBlock, ticket: Ticket, unit: int
) -> tuple[int, bytes, bytes]:
    """The unit's prize and the ticket's design (the same code as an undrawn sale's), and the
    unit's leaf."""
    game = loaded.game
    tier = unseal_tiers(loaded.key, repos.blocks.sealed_tier(loaded.block, unit), unit)[0]
    prize = game.table.prize_of_tier(tier)
    salt = unit_salt(loaded.key, unit)
    document = design_unit(game, salt, prize, ticket.sign)
    if game.evaluate(document) != prize:
        raise DesignMismatchError(f"block {loaded.id} unit {unit}: design != prize")
    assert loaded.public_id is not None
    leaf = unit_leaf_v2(loaded.public_id, unit, tier, prize, salt)
    return prize, stored_document(document), leaf


def _apply(
    platform: Platform, repos: Repositories, loaded: LoadedBlock, draw: _Planned, now: datetime
) -> None:
    """Write one planned draw: the swap, the ticket's unit and prize (an ``auto`` prize
    credited), its ``sale.drawn`` entry; the sale leaves the queue."""
    ticket, resolution, prize = draw.ticket, draw.resolution, draw.prize_cents
    for slot, state in draw.slot_writes:
        if state is None:
            repos.draws.drop_slot(loaded.id, slot)
        else:
            repos.draws.set_slot(loaded.id, slot, state)
    closed = bool(prize) and prizes_left.count_sale(
        platform, repos, loaded.id, loaded.game.table, prize
    )
    auto = ticket.mode == "auto"
    balance_after = ticket.balance_after_cents
    if auto and prize:
        account_id = repos.ledger.player_account_id(ticket.player_id)
        house = repos.ledger.house_account(HOUSE_PRIZES)
        legs = [Leg(account_id, prize), Leg(house, -prize)]
        movement = Movement("prize", legs, now, ticket.player_id, ticket.id)
        balance_after = repos.ledger.post(movement)[account_id]
    resolved = repos.draws.resolve_ticket(
        ticket.id,
        position=resolution.unit,
        prize_cents=prize,
        document=draw.document,
        revealed=stored_revealed(loaded.game, loaded.game.zones if auto else ()),
        state="finished" if auto else "playing",
        last_action_at=now,
        finished_at=now if auto else None,
        finished_by="auto" if auto else None,
        balance_after_cents=balance_after,
    )
    if not resolved:
        raise Conflict(f"ticket {ticket.id} was drawn meanwhile: this batch rolls back")
    queue_entry(
        repos,
        now,
        "sale.drawn",
        resolution.entry_fields(),
        block_row=loaded.id,
        ticket_row=ticket.id,
    )
    repos.draws.dequeue(ticket.id)
    if closed:  # its last top prize closed the block: logged after this draw's entry
        record_block_changes(repos, now, actor="system:sale", reason=prizes_left.TOP_PRIZE_SOLD_OUT)
