"""What the transparency log says of a block's life: opened, suspended, resumed, ended (with
the units sold and the prizes never sold). Written in the transaction of the change, beside
its audit entry (:func:`grattage.service.audit_trail.record_block_changes`) — and, once its
disclosure file is written, that the disclosure was published and the SHA-256 of its bytes."""

from __future__ import annotations

import json
from datetime import datetime

from grattage.errors import Conflict
from grattage.games.table import table_from_dict
from grattage.service.context import Platform
from grattage.service.model import BlockState
from grattage.service.ports import Repositories
from grattage.service.transparency import queue_entry

ENDED: tuple[BlockState, ...] = ("exhausted", "closed")


def log_block_change(
    repos: Repositories, now: datetime, block_id: int, before: BlockState, after: BlockState
) -> None:
    block = repos.blocks.get(block_id)
    if block is None or block.commitment_index is None:
        return  # a block committed before the log existed (format 1) is not in it
    stored = repos.blocks.commitment(block_id)
    assert stored is not None
    fields: dict[str, object] = {
        "block_id": json.loads(stored[0])["block_id"],
        "commitment_index": block.commitment_index,
    }
    if after == "open":
        kind = "block.resumed" if before == "suspended" else "block.opened"
    elif after == "suspended":
        kind = "block.suspended"
    elif after in ENDED:
        if repos.draws.undrawn(block_id):
            return  # its units sold are known once drawn: the drawer logs the end then
        kind = "block.ended"
        table = table_from_dict(json.loads(block.table_json))
        sold = repos.log.sold_prizes(block_id)
        never = [
            {"prize_cents": tier.prize_cents, "count": tier.count - sold.get(tier.prize_cents, 0)}
            for tier in table.tiers
            if tier.count - sold.get(tier.prize_cents, 0) > 0
        ]
        fields |= {
            "reason": after,
            "units_sold": block.sold,
            "units_never_sold": block.size - block.sold,
            "prizes_never_sold": never,
        }
    else:
        return
    queue_entry(repos, now, kind, fields, block_row=block_id)


def log_end_once_drawn(repos: Repositories, now: datetime, block_id: int) -> None:
    """After a block's draws: its ``block.ended`` entry, if it has ended, every sale is drawn
    and none is logged yet (the end was deferred while sales waited for their draw)."""
    block = repos.blocks.get(block_id)
    if block is None or block.state not in ENDED or repos.draws.undrawn(block_id):
        return
    if repos.log.block_entry_body(block_id, "block.ended") is None:
        log_block_change(repos, now, block_id, "open", block.state)


def disclosure_logged(platform: Platform, block_id: int) -> bool:
    """Whether the block needs no ``disclosure.published`` entry: it has one (integrated or
    queued), or it is a block from before the log."""
    with platform.uow.read() as repos:
        block = repos.blocks.get(block_id)
        if block is None or block.commitment_index is None:
            return True
        return repos.log.block_entry_body(block_id, "disclosure.published") is not None


def log_disclosure_published(
    platform: Platform, block_id: int, sha256_hex: str, draws_sha256_hex: str | None = None
) -> bool:
    """Queue an ended block's ``disclosure.published`` entry — the SHA-256 of the disclosure
    file's bytes and the block key, and for a drawn block the SHA-256 of its draws file —
    once per block, whoever writes the file first; whether this call queued it. The log's
    state row is locked (as the sequencer does) so that two workers publishing at once log it
    once."""
    with platform.uow.write() as repos:
        repos.log.lock_state()
        block = repos.blocks.get(block_id)
        if block is None or block.commitment_index is None:
            return False
        if block.state not in ENDED:
            raise Conflict(f"block {block_id!r} is {block.state}: not disclosed yet")
        if repos.log.block_entry_body(block_id, "disclosure.published") is not None:
            return False
        stored = repos.blocks.commitment(block_id)
        assert stored is not None
        key = platform.loaded_block(repos, block_id).key
        queue_entry(
            repos,
            platform.clock.now(),
            "disclosure.published",
            {
                "block_id": json.loads(stored[0])["block_id"],
                "commitment_index": block.commitment_index,
                "sha256": sha256_hex,
                "key": key.hex(),
                # only a drawn block's entry has it: another's stays as it always was
                **({} if draws_sha256_hex is None else {"draws_sha256": draws_sha256_hex}),
            },
            block_row=block_id,
        )
    return True
