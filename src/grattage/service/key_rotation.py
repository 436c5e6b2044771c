"""Rotating the operator's signing key: ``grattage log rotate-key`` (docs/fairness.md, "Key
rotation").

The new key is written to the key store (0600, fsynced, named by its key id) before anything
commits; then one transaction puts it in force:

1. the signing key is locked (:meth:`lock_signing_key`: on PostgreSQL the ``log_signer`` table
   in EXCLUSIVE mode). Every sale queues its receipt only while the key it signed with is in
   force, holding it with a share lock to its commit (and every commitment reads it so), so
   once the lock is granted every document signed by the old key has committed its queued
   entry, and every signer that comes later waits, then finds the new key in force (its
   ``FOR KEY SHARE`` re-reads the row's newest version) and signs with it;
2. the sequencer's state row is locked and the whole queue integrated — every entry signed by
   the old key is placed before the change — and a head of that size signed by the old key;
3. the ``key.change`` entry is appended at the next index *c*, ``from_index`` = *c* + 1, signed
   by the old key and countersigned by the new; the head of size *c* + 1 is the new key's;
4. the new key is put in force, the history gains it (the first rotation lists the first key
   too), and the back office's audit log records it. Whatever signs takes the signing key
   before the audit log (a sale ending a block, an emission), and so does the rotation: no
   two of them wait for each other.

On SQLite the one writer (``BEGIN IMMEDIATE`` under the group committer's lock) serialises all
of it. A rotation that fails leaves its new key's file unused: never in force, harmless.
"""

from __future__ import annotations

from dataclasses import dataclass

from grattage.blocks.key_history import make_key_change
from grattage.blocks.signing import Signer, TreeHead, canonical_json
from grattage.service import transparency
from grattage.service.audit_trail import record
from grattage.service.context import Platform
from grattage.service.model import LoggedKey, QueuedLogEntry


@dataclass(frozen=True)
class Rotation:
    old_key_id: str
    new_key_id: str
    new_public_key: bytes
    change_index: int
    """The ``key.change`` entry's index; the new key signs from the next one."""
    integrated: int
    """Entries that waited in the queue, placed before the change under the old key."""
    head: TreeHead
    """The first head of the new key: size ``change_index + 1``."""

    @property
    def from_index(self) -> int:
        return self.change_index + 1


def rotate_key(platform: Platform, actor: str = "system") -> Rotation:
    """Put a new operator key in force, by a ``key.change`` entry signed by the old one."""
    private_key = Signer.new_private_key()
    new = Signer(private_key)
    platform.keys.put_operator_key(new.key_id, private_key)  # on disk before anything commits
    try:
        return _hand_over(platform, new, actor)
    except BaseException:
        _discard_unless_in_force(platform, new.key_id)
        raise


def _discard_unless_in_force(platform: Platform, new_key_id: str) -> None:
    """A failed rotation leaves no stray key file, but only where the database shows it did
    not commit: a commit whose answer was lost may have put the new key in force, and
    deleting that key would leave the log unsignable. Unreadable database: keep the file."""
    try:
        with platform.uow.read() as repos:
            in_force = repos.log.signing_key_id(hold=False)
    except Exception:  # whatever failed, keeping the file is the safe side
        return
    if in_force != new_key_id:
        platform.keys.discard_operator_key(new_key_id)


def _hand_over(platform: Platform, new: Signer, actor: str) -> Rotation:
    with platform.uow.write() as repos:
        old = platform.signer_of(repos.log.lock_signing_key())
        history = repos.log.key_history()
        size = repos.log.lock_state()
        frontier = transparency.tree_frontier(repos, size)
        integrated = 0
        while queued := repos.log.queued(transparency.INTEGRATE_BATCH):
            frontier = transparency.append_entries(repos, frontier, queued)
            integrated += len(queued)
        if integrated:
            transparency.sign_head(platform, repos, old, frontier)
        change_index = frontier.size
        now = platform.clock.now()
        time = transparency.log_time(now)
        change = make_key_change(old, new, change_index + 1, time)
        entry = {"v": 1, "kind": "key.change", "time": time, "key_change": change}
        body = canonical_json(entry).decode("ascii")
        frontier = transparency.append_entries(
            repos, frontier, [QueuedLogEntry(None, "key.change", body, None, None)]
        )
        head = transparency.sign_head(platform, repos, new, frontier)
        added = [LoggedKey(new.key_id, new.public_key, change_index + 1, change_index)]
        if not history:
            added.insert(0, LoggedKey(old.key_id, old.public_key, 0, None))
        repos.log.set_signing_key(new.key_id, added)
        record(
            repos,
            now,
            actor,
            "log.rotate-key",
            "operator-key",
            {"old_key_id": old.key_id, "new_key_id": new.key_id, "change_index": change_index},
        )
    return Rotation(old.key_id, new.key_id, new.public_key, change_index, integrated, head)
