"""The documents and log entries of a drawn sale (docs/fairness.md, "Drawn blocks"): receipt
v2, the commitment's draw members, the ``sale.drawn`` resolution. Standard library and the
signing module only, so that a verifier can share them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grattage.blocks.signing import Signer, canonical_json

RECEIPT_V2_FORMAT = "grattage-receipt/2"
DRAW_VERSION = "grattage-draw/1"
MAX_CLIENT_SEED_BYTES = 32


def document_sha256(document: Mapping[str, Any]) -> bytes:
    """SHA-256 of a signed document's canonical JSON, signature included: a receipt's H, a
    chain's ``previous``."""
    return hashlib.sha256(canonical_json(document)).digest()


def draw_members(chain_head: bytes, chain_length: int, witness_key: bytes) -> dict[str, Any]:
    """What a drawn block's commitment adds to format 2."""
    return {
        "draw": DRAW_VERSION,
        "chain_head": chain_head.hex(),
        "chain_length": chain_length,
        "witness_key": witness_key.hex(),
    }


def is_drawn(commitment: Mapping[str, Any]) -> bool:
    return commitment.get("draw") == DRAW_VERSION


def check_client_seed(seed: str | None) -> str | None:
    """A client seed as a receipt carries it: None, or 1 to 32 bytes in lowercase hex."""
    if seed is None:
        return None
    if (
        not isinstance(seed, str)
        or not 2 <= len(seed) <= 2 * MAX_CLIENT_SEED_BYTES
        or len(seed) % 2
        or seed.strip("0123456789abcdef")
    ):
        raise ValueError("a client seed is 1 to 32 bytes in lowercase hex")
    return seed


def make_receipt_v2(
    signer: Signer,
    *,
    ticket_id: int,
    player: str,
    block_id: bytes,
    sequence: int,
    client_seed: str | None,
    stake_cents: int,
    time: str,
    previous: bytes,
    chain_id: str,
    round_number: int,
    commitment_index: int,
) -> dict[str, Any]:
    return signer.sign_document(
        "receipt",
        {
            "format": RECEIPT_V2_FORMAT,
            "ticket_id": ticket_id,
            "player": player,
            "block_id": block_id.hex(),
            "sequence": sequence,
            "client_seed": client_seed,
            "stake_cents": stake_cents,
            "time": time,
            "previous": previous.hex(),
            "beacon": {"chain_id": chain_id, "round": round_number},
            "commitment_index": commitment_index,
            "key_id": signer.key_id,
        },
    )


@dataclass(frozen=True)
class Resolution:
    """One drawn sale, as its ``sale.drawn`` entry states it."""

    block_id: bytes
    commitment_index: int
    sequence: int
    receipt_index: int
    receipt_sha256: bytes
    chain_id: str
    round: int
    link: bytes
    slot: int
    unit: int
    slot_unit: int
    n_set_by: int | None
    j_set_by: int | None
    leaf: bytes

    def entry_fields(self) -> dict[str, Any]:
        return {
            "block_id": self.block_id.hex(),
            "commitment_index": self.commitment_index,
            "sequence": self.sequence,
            "receipt_index": self.receipt_index,
            "receipt_sha256": self.receipt_sha256.hex(),
            "beacon": {"chain_id": self.chain_id, "round": self.round},
            "link": self.link.hex(),
            "slot": self.slot,
            "unit": self.unit,
            "slot_unit": self.slot_unit,
            "n_set_by": self.n_set_by,
            "j_set_by": self.j_set_by,
            "leaf": self.leaf.hex(),
        }
