"""The transparency log's use cases: queue an entry with its change, integrate the queue into
the tree and sign a head (the sequencer), and answer what monitors and verifiers ask — the
current head, entries, inclusion and consistency proofs, the operator's key.

Why a queue: a log-wide counter locked by every sale would make every sale of every game wait
for the others. As a certificate-transparency log hands out a signed promise at once and
merges within a maximum merge delay, a sale here writes its signed receipt and its queued
entry in its own transaction; the sequencer places queued entries in the tree in queue order,
within one round of the background loop (``sweep_interval_seconds``). docs/fairness.md,
"The transparency log".
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from grattage.blocks.key_history import KeyChain, KeyPeriod
from grattage.blocks.proofs_v2 import make_receipt
from grattage.blocks.signing import Signer, TreeHead, canonical_json
from grattage.blocks.tlog import (
    Frontier,
    consistency_path,
    entry_leaf_hash,
    inclusion_path,
    subtree_hash,
)
from grattage.errors import InvalidInput, NotFound, Unavailable
from grattage.service.context import LoadedBlock, Platform
from grattage.service.log_nodes import LogNodes, path_nodes
from grattage.service.model import LoggedKey, QueuedLogEntry, StoredTreeHead
from grattage.service.ports import Repositories

ENTRIES_PER_PAGE = 1000
"""At most this many entries per ``GET /api/log/entries`` (a client asks again for the rest)."""
INTEGRATE_BATCH = 5000
SIGNING_ATTEMPTS = 5
"""A sale signs again when the key changed under it: once per rotation it meets."""
PSEUDONYM_CONTEXT = b"grattage/player/1\x00"


def log_time(moment: datetime) -> str:
    """An entry's time: UTC, microseconds, ``Z`` (``2026-12-01T12:00:00.000000Z``)."""
    # isoformat, not strftime: the same characters (years 1000-9999) at a third of the cost,
    # on every sale; a UTC time's isoformat ends in "+00:00".
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def queue_entry(
    repos: Repositories,
    moment: datetime,
    kind: str,
    fields: Mapping[str, Any],
    *,
    block_row: int | None = None,
    ticket_row: int | None = None,
) -> dict[str, Any]:
    """Write an entry in the current transaction: it reaches the tree if and only if the
    change it records commits. ``block_row`` and ``ticket_row`` (database ids) index it.
    Returns the entry (its bytes are its canonical JSON)."""
    if kind == "key.change":  # only a rotation appends one, itself (service/key_rotation.py)
        raise ValueError("a key change is never queued: grattage log rotate-key appends it")
    entry = {"v": 1, "kind": kind, "time": log_time(moment), **fields}
    repos.log.enqueue(kind, canonical_json(entry).decode("ascii"), block_row, ticket_row)
    return entry


def receipt_of(repos: Repositories, ticket_id: int) -> dict[str, Any] | None:
    """A ticket's signed receipt, from the log or its queue; None for a ticket sold before
    the log."""
    body = repos.log.receipt_body(ticket_id)
    return None if body is None else dict(json.loads(body)["receipt"])


def pseudonym(platform: Platform, player_id: int) -> str:
    """A player's name in receipts: stable, unlinkable to the account without the key."""
    return _pseudonym(platform.keys.pseudonym_key(), player_id)


@lru_cache(maxsize=65_536)  # a player's every sale names them: one HMAC per player, not sale
def _pseudonym(key: bytes, player_id: int) -> str:
    message = PSEUDONYM_CONTEXT + str(player_id).encode("ascii")
    return hmac.new(key, message, "sha256").digest()[:16].hex()


def tree_frontier(repos: Repositories, size: int) -> Frontier:
    """The right edge of the tree of ``size`` entries, read in one statement."""
    nodes = LogNodes(repos.log)
    peaks, start = [], 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            peaks.append((level, start >> level))
            start += 1 << level
    nodes.prefetch(peaks)
    return Frontier.of(nodes, size)


def integrate(platform: Platform, limit: int = INTEGRATE_BATCH) -> TreeHead | None:
    """The sequencer: place up to ``limit`` queued entries in the tree, in queue order, and
    sign the new head with the key in force — in one transaction, one sequencer at a time.
    None when nothing waited."""
    return _integrate(platform, limit)[0]


def _integrate(platform: Platform, limit: int) -> tuple[TreeHead | None, int]:
    """:func:`integrate`, and how many entries it placed."""
    with platform.uow.write() as repos:
        size = repos.log.lock_state()
        queued = repos.log.queued(limit)
        if not queued:
            return None, 0
        # Read after the state row is locked: a rotation changes the key holding that row too.
        signer = platform.signer(repos)
        frontier = append_entries(repos, tree_frontier(repos, size), queued)
        return sign_head(platform, repos, signer, frontier), len(queued)


def append_entries(
    repos: Repositories, frontier: Frontier, entries: list[QueuedLogEntry]
) -> Frontier:
    """Place ``entries`` in the tree after ``frontier`` (the tree's state row locked)."""
    size = frontier.size
    leaves, created = [], []
    for offset, entry in enumerate(entries):
        leaf = entry_leaf_hash(entry.body.encode("ascii"))
        leaves.append(leaf)
        created += [node for node in frontier.append(leaf) if node[0] > 0]
        if entry.kind == "block.commitment" and entry.block_id is not None:
            repos.log.set_commitment_index(entry.block_id, size + offset)
    repos.log.integrate(size, entries, leaves, created)
    return frontier


def sign_head(
    platform: Platform, repos: Repositories, signer: Signer, frontier: Frontier
) -> TreeHead:
    timestamp = int(platform.clock.now().timestamp() * 1000)
    head = signer.sign_tree_head(frontier.size, timestamp, frontier.root())
    stored = StoredTreeHead(
        head.tree_size, head.timestamp_ms, head.root_hash, head.key_id, head.signature
    )
    repos.log.add_head(stored)
    return head


def integrate_all(platform: Platform) -> TreeHead | None:
    """Integrate until the queue is empty (after an emission, in tests, at shutdown)."""
    last = None
    while (head := integrate(platform)) is not None:
        last = head
    return last


def integrate_round(platform: Platform, limit: int = INTEGRATE_BATCH) -> TreeHead | None:
    """One round of the server's sequencer: integrate the queue, ``limit`` entries per
    transaction, until a transaction finds fewer than ``limit`` waiting; what is queued after
    that waits for the next round. The last head signed, or None.

    Integrating until the queue is empty instead chased the sales: under load every pass found
    the few sold meanwhile, and the sequencer ran small transactions back to back, each with
    its own commit and signed head, in SQLite's one write lock."""
    last = None
    while True:
        head, placed = _integrate(platform, limit)
        last = head or last
        if placed < limit:
            return last


def _tree_head(stored: StoredTreeHead) -> TreeHead:
    return TreeHead(
        stored.tree_size, stored.timestamp_ms, stored.root, stored.key_id, stored.signature
    )


def current_head(platform: Platform, tree_size: int | None = None) -> TreeHead:
    """The newest signed head, or the one signed at ``tree_size``."""
    with platform.uow.read() as repos:
        stored = repos.log.latest_head() if tree_size is None else repos.log.head_of_size(tree_size)
    if stored is None:
        raise NotFound(
            "no tree head signed yet" if tree_size is None else f"no head of size {tree_size}"
        )
    return _tree_head(stored)


def _checked_size(repos: Repositories, tree_size: int) -> None:
    head = repos.log.latest_head()
    if head is None or not 0 < tree_size <= head.tree_size:
        raise NotFound(f"the log has no tree of size {tree_size!r}")


def inclusion(platform: Platform, index: int, tree_size: int) -> dict[str, Any]:
    """RFC 9162 inclusion proof of entry ``index`` in the tree of ``tree_size`` entries."""
    if not 0 <= index < tree_size:
        raise InvalidInput(f"entry {index!r} is not in a tree of {tree_size!r} entries")
    with platform.uow.read() as repos:
        _checked_size(repos, tree_size)
        nodes = LogNodes(repos.log)
        nodes.prefetch([(0, index), *path_nodes(index, tree_size)])
        path = inclusion_path(nodes, index, tree_size)
        leaf = nodes(0, index)
    return {
        "index": index,
        "tree_size": tree_size,
        "leaf_hash": leaf.hex(),
        "path": [node.hex() for node in path],
    }


def consistency(platform: Platform, first: int, second: int) -> dict[str, Any]:
    """RFC 9162 consistency proof between the trees of ``first`` and ``second`` entries."""
    if not 0 < first <= second:
        raise InvalidInput(f"no consistency proof from {first!r} to {second!r} entries")
    with platform.uow.read() as repos:
        _checked_size(repos, second)
        nodes = LogNodes(repos.log)
        nodes.prefetch_for(lambda source: consistency_path(source, first, second))
        proof = consistency_path(nodes, first, second)
    return {"first": first, "second": second, "proof": [node.hex() for node in proof]}


def root_of_size(platform: Platform, tree_size: int) -> bytes:
    with platform.uow.read() as repos:
        _checked_size(repos, tree_size)
        nodes = LogNodes(repos.log)
        nodes.prefetch_for(lambda source: subtree_hash(source, 0, tree_size))
        return subtree_hash(nodes, 0, tree_size)


def entries(platform: Platform, start: int, end: int) -> list[dict[str, Any]]:
    """Entries ``start..end`` (inclusive, as RFC 9162's get-entries), at most
    :data:`ENTRIES_PER_PAGE`; fewer when the log is shorter."""
    if not 0 <= start <= end:
        raise InvalidInput(f"entries {start!r} to {end!r}: start ≥ 0 and end ≥ start")
    end = min(end, start + ENTRIES_PER_PAGE - 1)
    with platform.uow.read() as repos:
        rows = repos.log.entries(start, end)
    return [{"index": row.index, "entry": json.loads(row.body)} for row in rows]


def key_history(platform: Platform, repos: Repositories) -> list[LoggedKey]:
    """Every operator key with the index it signs from, the first key first."""
    logged = repos.log.key_history()
    if logged:
        return logged
    first = platform.signer_of(None)  # no rotation yet: the first key rules from index 0
    return [LoggedKey(first.key_id, first.public_key, 0, None)]


def key_chain(platform: Platform) -> KeyChain:
    """The operator's key history as the verifiers replay it: the key in force at any index
    (a head of size n is at index n), to check heads and documents signed before a rotation."""
    with platform.uow.read() as repos:
        history = key_history(platform, repos)
    chain = KeyChain(history[0].public_key)
    chain.periods = [KeyPeriod(k.public_key, k.from_index, k.change_index) for k in history]
    return chain


def operator_key(platform: Platform) -> dict[str, Any]:
    """``GET /api/log/key``: the key in force, and every key with the indexes it signs."""
    with platform.uow.read() as repos:
        history = key_history(platform, repos)
    return {
        "algorithm": "Ed25519",
        "public_key": history[-1].public_key.hex(),
        "key_id": history[-1].key_id,
        "keys": [
            {
                "key_id": key.key_id,
                "public_key": key.public_key.hex(),
                "from_index": key.from_index,
                "change_index": key.change_index,
            }
            for key in history
        ],
    }


def sign_and_log_receipt(
    platform: Platform,
    repos: Repositories,
    loaded: LoadedBlock,
    ticket_id: int,
    player_id: int,
    position: int,
    stake: int,
    now: datetime,
) -> dict[str, Any] | None:
    """Sign a sale's receipt and queue its entry, in the sale's transaction (blocks committed
    before the transparency log sell without one)."""
    public_id, commitment_index = loaded.public_id, loaded.block.commitment_index
    if commitment_index is None or public_id is None:
        return None
    return queue_signed_receipt(
        platform,
        repos,
        now,
        lambda signer: make_receipt(
            signer,
            ticket_id=ticket_id,
            player=pseudonym(platform, player_id),
            block_id=public_id,
            sequence=position,  # units are sold in position order: the n-th sale takes unit n
            position=position,
            stake_cents=stake,
            time=log_time(now),
            commitment_index=commitment_index,
        ),
        block_row=loaded.id,
        ticket_row=ticket_id,
    )


def queue_signed_receipt(
    platform: Platform,
    repos: Repositories,
    now: datetime,
    sign: Callable[[Signer], dict[str, Any]],
    *,
    block_row: int,
    ticket_row: int,
) -> dict[str, Any]:
    """A sale's receipt (v1 or a drawn sale's v2), signed by ``sign`` and queued as its
    ``sale.receipt`` entry: signed with the key this process last saw in force, and queued only
    if that key is still in force — in one statement, which then holds it until the sale
    commits (so no rotation lands in between); after a rotation, signed again with the new key.
    The receipt queued."""
    key_id = platform.signing_key_hint
    entry_time = log_time(now)
    for _ in range(SIGNING_ATTEMPTS):
        receipt = sign(platform.signer_of(key_id))
        entry = {"v": 1, "kind": "sale.receipt", "time": entry_time, "receipt": receipt}
        body = canonical_json(entry).decode("ascii")
        if repos.log.enqueue_signed("sale.receipt", body, key_id, block_row, ticket_row):
            platform.signing_key_hint = key_id
            return receipt
        key_id = repos.log.signing_key_id(hold=False)
    raise Unavailable("the operator key kept changing during the sale; retry in a moment")
