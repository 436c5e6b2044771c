"""The audit trail: an append-only log in which each entry carries the hash of the one before.

Entry ``n`` is hashed as the canonical JSON (sorted keys, no spaces, UTF-8) of its id, time,
actor, action, subject, details and the previous entry's hash (64 zeros before the first), so
editing, deleting, reordering or inserting an entry breaks the chain from that entry on. An
entry is written in the same transaction as the change it records; appends take the one-row
head (``audit_head``) first, so concurrent appends form one chain. Nothing here updates or
deletes an entry.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from grattage.service.block_log import log_block_change
from grattage.service.context import Platform
from grattage.service.model import AuditEntry
from grattage.service.ports import Repositories
from grattage.service.records import AuditRecord
from grattage.service.views import iso

GENESIS = "0" * 64
_PAGE = 5_000


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def entry_hash(
    *,
    id: int,
    created_at: str,
    actor: str,
    action: str,
    subject: str,
    details: str,
    prev_hash: str,
) -> str:
    document = {
        "id": id,
        "created_at": created_at,
        "actor": actor,
        "action": action,
        "subject": subject,
        "details": details,
        "prev_hash": prev_hash,
    }
    return hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()


def record(
    repos: Repositories,
    now: datetime,
    actor: str,
    action: str,
    subject: str,
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one entry in the caller's transaction."""
    last_id, last_hash = repos.audit_log.lock_head()
    fields = {
        "id": last_id + 1,
        "created_at": iso(now) or "",
        "actor": actor,
        "action": action,
        "subject": subject,
        "details": canonical(details or {}),
        "prev_hash": last_hash,
    }
    entry = AuditEntry(**fields, hash=entry_hash(**fields))  # type: ignore[arg-type]
    repos.audit_log.append(entry)
    return entry


def record_block_changes(
    repos: Repositories, now: datetime, actor: str, reason: str | None = None
) -> None:
    """Write the block state changes the transaction made (a sale exhausting a block, the next
    block opening, an operator's action) to the audit log, with the ``reason`` if one is given
    (a block closed by the sale of its last top prize)."""
    for block_id, before, after in repos.blocks.drain_state_changes():
        log_block_change(repos, now, block_id, before, after)
        details: dict[str, str] = {"from": before, "to": after}
        if reason is not None:
            details["reason"] = reason
        record(repos, now, actor, f"block.{after}", f"block:{block_id}", details)


@dataclass(frozen=True)
class Verification:
    entries: int
    first_bad: int | None
    problem: str | None

    @property
    def clean(self) -> bool:
        return self.problem is None


def verify(platform: Platform) -> Verification:
    """Walk the chain from the first entry; the first entry that breaks it, and why."""
    with platform.uow.read() as repos:
        head_id, head_hash = repos.audit_log.head()
        expected_id, previous = 1, GENESIS
        after = 0
        while True:
            page = repos.audit_log.entries(after, _PAGE)
            for entry in page:
                if entry.id != expected_id:
                    missing = entry.id > expected_id
                    problem = (
                        f"entry {expected_id} is missing" if missing else "entries out of order"
                    )
                    return Verification(expected_id - 1, min(entry.id, expected_id), problem)
                if entry.prev_hash != previous:
                    return Verification(
                        expected_id - 1,
                        entry.id,
                        "its previous-entry hash does not match the entry before it "
                        "(an entry before it was changed, removed or moved)",
                    )
                recomputed = entry_hash(
                    id=entry.id,
                    created_at=entry.created_at,
                    actor=entry.actor,
                    action=entry.action,
                    subject=entry.subject,
                    details=entry.details,
                    prev_hash=entry.prev_hash,
                )
                if recomputed != entry.hash:
                    return Verification(expected_id - 1, entry.id, "its content was changed")
                previous = entry.hash
                expected_id += 1
            if len(page) < _PAGE:
                break
            after = page[-1].id
    count = expected_id - 1
    if (count, previous) != (head_id, head_hash):
        return Verification(
            count,
            count + 1,
            f"the log ends at entry {count} but its head records entry {head_id}: "
            "entries were removed from the end",
        )
    return Verification(count, None, None)


def latest(platform: Platform, limit: int = 100) -> list[AuditRecord]:
    with platform.uow.read() as repos:
        found = repos.audit_log.latest(limit)
    return [
        AuditRecord(
            id=entry.id,
            created_at=entry.created_at,
            actor=entry.actor,
            action=entry.action,
            subject=entry.subject,
            details=json.loads(entry.details),
            hash=entry.hash,
        )
        for entry in found
    ]
