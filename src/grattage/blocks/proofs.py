"""Proofs a player or an auditor checks offline — this module and what it imports use only the
Python standard library (``grattage.games`` is pure Python, ``merkle`` is ``hashlib``).

* A **commitment** (published before a block opens): block id, game, rules version, size, Merkle
  root, the whole prize table and its SHA-256, creation time.
* A **ticket proof** (once the ticket is finished): the commitment, the unit's position, tier,
  prize and salt, the player's choice, the RFC 6962 audit path, and the ticket document.
  :func:`verify_ticket_proof` recomputes the leaf, walks the path to the root, and re-derives the
  visible design from salt, prize and choice — so the commitment fixed what the player saw.
* A **disclosure** (once the block is exhausted or closed): the commitment, the block key and
  every unit's tier. :func:`verify_disclosure` rebuilds every salt and the whole tree, checks the
  root and recounts every tier against the table.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grattage.blocks.merkle import leaf_hash, root_from_path
from grattage.blocks.salts import ticket_seed
from grattage.errors import GrattageError, VerificationFailed
from grattage.games.base import Game
from grattage.games.randomness import SeededRandomness
from grattage.games.registry import find_game, rules_versions
from grattage.games.table import PrizeTable, table_from_dict

COMMITMENT_FORMAT = "grattage-commitment/1"
PROOF_FORMAT = "grattage-ticket-proof/1"
DISCLOSURE_FORMAT = "grattage-disclosure/1"


def make_commitment(
    block_id: bytes, game: Game, root: bytes, size: int, created_at: str
) -> dict[str, Any]:
    return {
        "format": COMMITMENT_FORMAT,
        "block_id": block_id.hex(),
        "game": game.name,
        "rules_version": game.rules_version,
        "size": size,
        "root": root.hex(),
        "table": game.table.to_dict(),
        "table_sha256": game.table.digest(),
        "created_at": created_at,
    }


def make_ticket_proof(
    commitment: Mapping[str, Any],
    position: int,
    tier: int,
    prize_cents: int,
    salt: bytes,
    choice: str | None,
    path: list[bytes],
    ticket: Mapping[str, Any],
) -> dict[str, Any]:
    return {
        "format": PROOF_FORMAT,
        "commitment": dict(commitment),
        "position": position,
        "tier": tier,
        "prize_cents": prize_cents,
        "salt": salt.hex(),
        "choice": choice,
        "path": [node.hex() for node in path],
        "ticket": dict(ticket),
    }


@dataclass(frozen=True)
class CommittedBlock:
    block_id: bytes
    game: Game
    table: PrizeTable
    root: bytes
    size: int


def read_commitment(commitment: Any) -> CommittedBlock:
    """Check a commitment's own consistency (its table hash, game, rules version)."""
    try:
        if commitment.get("format") != COMMITMENT_FORMAT:
            raise VerificationFailed(f"not a commitment: format {commitment.get('format')!r}")
        table = table_from_dict(commitment["table"])
        if table.digest() != commitment["table_sha256"]:
            raise VerificationFailed("the commitment's prize table does not match its table_sha256")
        rules_version = commitment["rules_version"]
        known = rules_versions(commitment["game"])
        if rules_version not in known:
            raise VerificationFailed(
                f"committed under rules {rules_version!r}; this checker implements "
                f"{', '.join(map(repr, known))}"
            )
        game = find_game(commitment["game"], table, rules_version=rules_version)
        block_id = bytes.fromhex(commitment["block_id"])
        root = bytes.fromhex(commitment["root"])
        size = commitment["size"]
    except VerificationFailed:
        raise
    except GrattageError as exc:
        raise VerificationFailed(f"malformed commitment: {exc.message}") from None
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise VerificationFailed(f"malformed commitment: {exc.__class__.__name__}: {exc}") from None
    if len(block_id) != 16 or len(root) != 32 or not isinstance(size, int) or size < 1:
        raise VerificationFailed("malformed commitment: block_id, root or size")
    if size != table.block_size:
        raise VerificationFailed(f"size {size!r} differs from the table's {table.block_size!r}")
    return CommittedBlock(block_id=block_id, game=game, table=table, root=root, size=size)


@dataclass(frozen=True)
class VerifiedTicket:
    block: CommittedBlock
    position: int
    prize_cents: int
    ticket: dict[str, Any]


def verify_ticket_proof(proof: Any) -> VerifiedTicket:
    """Raise :class:`VerificationFailed` naming the first thing that does not hold."""
    if not isinstance(proof, Mapping) or proof.get("format") != PROOF_FORMAT:
        raise VerificationFailed("not a ticket proof (format grattage-ticket-proof/1 expected)")
    block = read_commitment(proof.get("commitment"))
    try:
        position, tier, prize = proof["position"], proof["tier"], proof["prize_cents"]
        salt = bytes.fromhex(proof["salt"])
        path = [bytes.fromhex(node) for node in proof["path"]]
        choice, ticket = proof["choice"], proof["ticket"]
    except (KeyError, TypeError, ValueError) as exc:
        raise VerificationFailed(f"malformed proof: {exc.__class__.__name__}: {exc}") from None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (position, tier, prize)):
        raise VerificationFailed("position, tier and prize_cents must be integers")
    if not 0 <= tier <= len(block.table.tiers):
        raise VerificationFailed(f"tier {tier!r} does not exist in the committed table")
    if block.table.prize_of_tier(tier) != prize:
        raise VerificationFailed(
            f"tier {tier!r} pays {block.table.prize_of_tier(tier)!r} cents, not {prize!r}"
        )
    if len(salt) != 32 or any(len(node) != 32 for node in path):
        raise VerificationFailed("salt and path hashes are 32 bytes each")
    leaf = leaf_hash(block.block_id, position, tier, salt)
    if root_from_path(position, block.size, leaf, path) != block.root:
        raise VerificationFailed(
            "the unit (position, tier, salt) and its path do not lead to the committed root"
        )
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
    return VerifiedTicket(block=block, position=position, prize_cents=prize, ticket=dict(ticket))


def make_disclosure(commitment: Mapping[str, Any], key: bytes, tiers: bytes) -> dict[str, Any]:
    return {
        "format": DISCLOSURE_FORMAT,
        "commitment": dict(commitment),
        "key": key.hex(),
        "tiers": base64.b64encode(tiers).decode("ascii"),
    }


@dataclass(frozen=True)
class VerifiedDisclosure:
    block: CommittedBlock
    counts: list[int]


def verify_disclosure(disclosure: Any, workers: int | None = None) -> VerifiedDisclosure:
    """Rebuild the whole tree from the disclosed key and tiers, check the root, recount tiers."""
    from grattage.blocks.commitment import build_tree  # multiprocessing, standard library too

    if not isinstance(disclosure, Mapping) or disclosure.get("format") != DISCLOSURE_FORMAT:
        raise VerificationFailed("not a disclosure (format grattage-disclosure/1 expected)")
    block = read_commitment(disclosure.get("commitment"))
    try:
        key = bytes.fromhex(disclosure["key"])
        tiers = base64.b64decode(disclosure["tiers"], validate=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise VerificationFailed(f"malformed disclosure: {exc.__class__.__name__}: {exc}") from None
    if len(tiers) != block.size:
        raise VerificationFailed(f"{len(tiers)!r} tiers disclosed for a block of {block.size!r}")
    counted = Counter(tiers)
    tier_count = len(block.table.tiers) + 1
    unknown = sorted(t for t in counted if t >= tier_count)
    if unknown:
        raise VerificationFailed(f"disclosed tiers that do not exist: {unknown!r}")
    counts = [counted.get(index, 0) for index in range(tier_count)]
    wrong = [
        f"tier {i}: {found!r} units, the table says {expected!r}"
        for i, (found, expected) in enumerate(
            zip(counts, block.table.counts_by_tier(), strict=True)
        )
        if found != expected
    ]
    if wrong:
        raise VerificationFailed("the tiers do not recount to the table: " + "; ".join(wrong))
    tree = build_tree(block.block_id, key, tiers, workers=workers)
    if tree.root != block.root:
        raise VerificationFailed("the disclosed key and tiers do not rebuild the committed root")
    return VerifiedDisclosure(block=block, counts=counts)
