"""Version 2 of the fairness documents: signed commitments logged before a block opens,
signed receipts, ticket proofs that carry both with their inclusion in a signed tree head —
standard library and ``cryptography`` only (docs/fairness.md gives every byte).

A v2 ticket proof is checked against a **pinned** head (one the checker got from the log, or
from a monitor) when one is given: then its commitment and receipt are in the log everyone
sees. Without one the proof is only self-consistent, and the checker says UNPINNED.

Each signed part is checked with the key in force at its index (:mod:`grattage.blocks.key_history`):
a proof whose head is signed by a later key than its receipt carries the ``key.change`` entries
from the log's first key on, each with its inclusion proof in the head.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grattage.blocks.key_history import KeyChain, proof_keys
from grattage.blocks.merkle import root_from_path, unit_leaf_v2
from grattage.blocks.proof_draw import RECEIPT_V2_FORMAT, DrawnSale, verify_draw
from grattage.blocks.proofs import CommittedBlock
from grattage.blocks.salts import ticket_seed
from grattage.blocks.signing import Signer, TreeHead, canonical_json, check_document
from grattage.blocks.tlog import entry_leaf_hash, verify_inclusion
from grattage.errors import GrattageError, VerificationFailed
from grattage.games.randomness import SeededRandomness
from grattage.games.registry import find_game
from grattage.games.table import table_from_dict

COMMITMENT_FORMAT = "grattage-commitment/2"
RECEIPT_FORMAT = "grattage-receipt/1"
PROOF_FORMAT = "grattage-ticket-proof/2"
DISCLOSURE_FORMAT = "grattage-disclosure/2"
LEAF_VERSION = "grattage-unit/2"


def tier_prizes(table: Any) -> tuple[int, ...]:
    """Each tier's prize in cents, the losing tier 0 first: what a v2 leaf binds."""
    return (0, *(tier.prize_cents for tier in table.tiers))


def make_commitment(
    signer: Signer,
    block_id: bytes,
    game: Any,
    price_cents: int,
    root: bytes,
    size: int,
    created_at: str,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``extra``: the members a drawn block adds (docs/fairness.md, "Drawn blocks")."""
    table = game.table.to_dict()
    return signer.sign_document(
        "commitment",
        {
            **(extra or {}),
            "format": COMMITMENT_FORMAT,
            "block_id": block_id.hex(),
            "game": game.name,
            "rules_version": game.rules_version,
            "price_cents": price_cents,
            "size": size,
            "table": table,
            "table_sha256": game.table.digest(),
            "leaf": LEAF_VERSION,
            "root": root.hex(),
            "created_at": created_at,
            "key_id": signer.key_id,
        },
    )


@dataclass(frozen=True)
class CommittedBlockV2(CommittedBlock):
    price_cents: int
    commitment: Mapping[str, Any]


def read_commitment(commitment: Any, public_key: bytes) -> CommittedBlockV2:
    """Check a v2 commitment's signature and its own consistency."""
    check_document("commitment", commitment, public_key)
    try:
        if commitment.get("format") != COMMITMENT_FORMAT or commitment["leaf"] != LEAF_VERSION:
            raise VerificationFailed(f"not a {COMMITMENT_FORMAT} commitment")
        table = table_from_dict(commitment["table"])
        if table.digest() != commitment["table_sha256"]:
            raise VerificationFailed("the commitment's prize table does not match its table_sha256")
        game = find_game(commitment["game"], table, rules_version=commitment["rules_version"])
        block_id = bytes.fromhex(commitment["block_id"])
        root = bytes.fromhex(commitment["root"])
        size, price = commitment["size"], commitment["price_cents"]
    except VerificationFailed:
        raise
    except GrattageError as exc:
        raise VerificationFailed(f"malformed commitment: {exc.message}") from None
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise VerificationFailed(f"malformed commitment: {exc.__class__.__name__}: {exc}") from None
    if len(block_id) != 16 or len(root) != 32:
        raise VerificationFailed("malformed commitment: block_id or root")
    for name, value in (("size", size), ("price_cents", price)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise VerificationFailed(f"malformed commitment: {name} {value!r}")
    if size != table.block_size:
        raise VerificationFailed(f"size {size!r} differs from the table's {table.block_size!r}")
    return CommittedBlockV2(
        block_id=block_id,
        game=game,
        table=table,
        root=root,
        size=size,
        price_cents=price,
        commitment=commitment,
    )


def make_receipt(
    signer: Signer,
    *,
    ticket_id: int,
    player: str,
    block_id: bytes,
    sequence: int,
    position: int,
    stake_cents: int,
    time: str,
    commitment_index: int,
) -> dict[str, Any]:
    return signer.sign_document(
        "receipt",
        {
            "format": RECEIPT_FORMAT,
            "ticket_id": ticket_id,
            "player": player,
            "block_id": block_id.hex(),
            "sequence": sequence,
            "position": position,
            "stake_cents": stake_cents,
            "time": time,
            "commitment_index": commitment_index,
            "key_id": signer.key_id,
        },
    )


@dataclass(frozen=True)
class VerifiedTicketV2:
    block: CommittedBlockV2
    receipt: Mapping[str, Any]
    position: int
    prize_cents: int
    ticket: dict[str, Any]
    head: TreeHead
    pinned: bool
    draw: DrawnSale | None = None
    """The sale's draw, recomputed (drawn blocks only)."""


def _logged(part: Any, kind: str, member: str, document: Mapping[str, Any], head: TreeHead) -> int:
    """Check ``document`` is the ``member`` of an entry of ``kind`` included in ``head``."""
    try:
        index, entry = part["index"], part["entry"]
        path = [bytes.fromhex(node) for node in part["path"]]
        if entry["kind"] != kind or entry[member] != document:
            raise VerificationFailed(f"the log entry {index!r} is not this {member}")
        leaf = entry_leaf_hash(canonical_json(entry))
    except VerificationFailed:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise VerificationFailed(f"malformed log part: {exc.__class__.__name__}: {exc}") from None
    if not isinstance(index, int) or not verify_inclusion(
        leaf, index, head.tree_size, path, head.root_hash
    ):
        raise VerificationFailed(
            f"the {member} is not included in the signed tree head of size {head.tree_size}"
        )
    return index


def verify_ticket_proof(
    proof: Any,
    pinned: TreeHead | None = None,
    public_key: bytes | None = None,
    log_keys: KeyChain | None = None,
) -> VerifiedTicketV2:
    """Raise :class:`VerificationFailed` naming the first thing that does not hold.

    ``public_key`` is the key the checker pins (any key of the history: the one in the docs,
    the log's first); ``log_keys`` the log's key history as the checker fetched and verified
    it (``--log``), which the proof's own must be, up to its head."""
    if not isinstance(proof, Mapping) or proof.get("format") != PROOF_FORMAT:
        raise VerificationFailed(f"not a ticket proof ({PROOF_FORMAT} expected)")
    try:
        first_key = bytes.fromhex(proof["operator_key"])
        receipt, unit, log = proof["receipt"], proof["unit"], proof["log"]
        head = TreeHead.from_json(log["sth"])
        position, tier, prize = unit["position"], unit["tier"], unit["prize_cents"]
        salt = bytes.fromhex(unit["salt"])
        path = [bytes.fromhex(node) for node in unit["path"]]
        choice, ticket = unit["choice"], proof["ticket"]
    except VerificationFailed:
        raise
    except KeyError as exc:
        raise VerificationFailed(f"malformed proof: it has no {exc.args[0]!r} member") from None
    except (TypeError, ValueError) as exc:
        raise VerificationFailed(f"malformed proof: {exc}") from None
    keys = proof_keys(first_key, log.get("key_changes", []), head, public_key, log_keys)
    keys.check_head(head)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (position, tier, prize)):
        raise VerificationFailed("position, tier and prize_cents must be integers")
    commitment = proof["commitment"]
    commitment_index = _logged(
        log.get("commitment_entry"), "block.commitment", "commitment", commitment, head
    )
    keys.check_document("commitment", commitment, commitment_index)
    block = read_commitment(commitment, keys.at(commitment_index).public_key)
    receipt_index = _logged(log.get("receipt_entry"), "sale.receipt", "receipt", receipt, head)
    keys.check_document("receipt", receipt, receipt_index)
    expected = {
        "format": RECEIPT_FORMAT,
        "block_id": block.block_id.hex(),
        "position": position,
        "stake_cents": block.price_cents,
        "commitment_index": commitment_index,
    }
    drawn = _drawn_sale(proof, block, receipt, receipt_index, head, keys, position, expected)
    for name, value in expected.items():
        if receipt.get(name) != value:
            raise VerificationFailed(
                f"the receipt's {name} is {receipt.get(name)!r}, the proof's is {value!r}"
            )
    if not 0 <= tier <= len(block.table.tiers) or block.table.prize_of_tier(tier) != prize:
        raise VerificationFailed(f"tier {tier!r} does not pay {prize!r} cents in the table")
    if len(salt) != 32 or any(len(node) != 32 for node in path):
        raise VerificationFailed("salt and path hashes are 32 bytes each")
    leaf = unit_leaf_v2(block.block_id, position, tier, prize, salt)
    if root_from_path(position, block.size, leaf, path) != block.root:
        raise VerificationFailed(
            "the unit (position, tier, prize, salt) and its path do not lead to the committed root"
        )
    if drawn is not None and drawn.leaf != leaf.hex():
        raise VerificationFailed("the unit's leaf is not the one its draw logged")
    _check_design(block, prize, salt, choice, ticket)
    is_pinned = pinned is not None and _is_the_pinned_head(head, pinned)
    return VerifiedTicketV2(
        block=block,
        receipt=receipt,
        position=position,
        prize_cents=prize,
        ticket=dict(ticket),
        head=head,
        pinned=is_pinned,
        draw=drawn,
    )


def _drawn_sale(
    proof: Mapping[str, Any],
    block: CommittedBlockV2,
    receipt: Mapping[str, Any],
    receipt_index: int,
    head: TreeHead,
    keys: KeyChain,
    position: int,
    expected: dict[str, Any],
) -> DrawnSale | None:
    """A drawn block's sale: its draw recomputed (its unit must be the proof's), and the
    receipt expected of version 2, with no position (the unit was not known at the sale)."""
    if block.commitment.get("draw") is None:
        return None
    del expected["position"]
    expected["format"] = RECEIPT_V2_FORMAT
    drawn = verify_draw(
        proof.get("draw"),
        commitment=block.commitment,
        receipt=receipt,
        receipt_index=receipt_index,
        head=head,
        keys=keys,
    )
    if drawn.unit != position:
        raise VerificationFailed(
            f"the proof shows unit {position!r}; the sale's draw gave unit {drawn.unit}"
        )
    return drawn


def _is_the_pinned_head(head: TreeHead, pinned: TreeHead) -> bool:
    if pinned.tree_size == head.tree_size and pinned.root_hash != head.root_hash:
        raise VerificationFailed(
            f"the proof's head of size {head.tree_size} has another root than the pinned head of "
            "that size: the log was forked"
        )
    if pinned.tree_size != head.tree_size:
        raise VerificationFailed(
            f"the proof is against the head of size {head.tree_size}, not the pinned head of "
            f"size {pinned.tree_size}: ask for the proof at the pinned size"
        )
    return True


def _check_design(
    block: CommittedBlockV2, prize: int, salt: bytes, choice: Any, ticket: Any
) -> None:
    try:
        expected = block.game.design(prize, SeededRandomness(ticket_seed(salt, choice)), choice)
        shown = {key: ticket[key] for key in expected}
    except (GrattageError, KeyError, TypeError) as exc:
        raise VerificationFailed(f"the ticket cannot be re-derived: {exc}") from None
    if shown != expected:
        differing = sorted(key for key in expected if shown[key] != expected[key])
        raise VerificationFailed(
            f"the ticket shown differs from the committed design in {', '.join(differing)}"
        )
    try:
        block.game.validate(ticket)
    except GrattageError as exc:
        raise VerificationFailed(f"the ticket breaks a rule: {exc.message}") from None


def make_disclosure(
    commitment: Mapping[str, Any], key: bytes, tiers: bytes, operator_key: bytes
) -> dict[str, Any]:
    return {
        "format": DISCLOSURE_FORMAT,
        "operator_key": operator_key.hex(),
        "commitment": dict(commitment),
        "key": key.hex(),
        "tiers": base64.b64encode(tiers).decode("ascii"),
    }


@dataclass(frozen=True)
class VerifiedDisclosureV2:
    block: CommittedBlockV2
    tiers: bytes
    counts: list[int]


def verify_disclosure(
    disclosure: Any, public_key: bytes | None = None, workers: int | None = None
) -> VerifiedDisclosureV2:
    """Rebuild every v2 leaf from the disclosed key and tiers, check the signed root, recount.
    Without ``public_key``, the disclosure's own ``operator_key`` is used (unpinned)."""
    from grattage.blocks.commitment import build_tree  # multiprocessing, standard library too

    if not isinstance(disclosure, Mapping) or disclosure.get("format") != DISCLOSURE_FORMAT:
        raise VerificationFailed(f"not a disclosure ({DISCLOSURE_FORMAT} expected)")
    if public_key is None:
        try:
            public_key = bytes.fromhex(disclosure["operator_key"])
        except (KeyError, TypeError, ValueError):
            raise VerificationFailed("malformed disclosure: operator_key") from None
    block = read_commitment(disclosure.get("commitment"), public_key)
    try:
        key = bytes.fromhex(disclosure["key"])
        tiers = base64.b64decode(disclosure["tiers"], validate=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise VerificationFailed(f"malformed disclosure: {exc.__class__.__name__}: {exc}") from None
    if len(tiers) != block.size:
        raise VerificationFailed(f"{len(tiers)!r} tiers disclosed for a block of {block.size!r}")
    counted = Counter(tiers)
    tier_count = len(block.table.tiers) + 1
    if any(tier >= tier_count for tier in counted):
        raise VerificationFailed("disclosed tiers that do not exist in the table")
    counts = [counted.get(index, 0) for index in range(tier_count)]
    if counts != block.table.counts_by_tier():
        raise VerificationFailed(
            f"the tiers recount to {counts!r}, the table says {block.table.counts_by_tier()!r}"
        )
    tree = build_tree(
        block.block_id, key, tiers, workers=workers, tier_prizes=tier_prizes(block.table)
    )
    if tree.root != block.root:
        raise VerificationFailed("the disclosed key and tiers do not rebuild the committed root")
    return VerifiedDisclosureV2(block=block, tiers=tiers, counts=counts)


def prizes_never_sold(
    verified: VerifiedDisclosureV2, sold_positions: set[int]
) -> list[tuple[int, int]]:
    """(prize in cents, count) of the winning units no sale took, largest prize first."""
    never: Counter[int] = Counter()
    for position, tier in enumerate(verified.tiers):
        if tier and position not in sold_positions:
            never[verified.block.table.prize_of_tier(tier)] += 1
    return sorted(never.items(), reverse=True)
