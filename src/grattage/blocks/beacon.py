"""The witness's signed documents — beacon chain, beacon round, cosignature — and their checks
(docs/witness.md gives every byte). Standard library and ``cryptography`` only, so that a
verifier can be written from the docs and this module alone.

Each document is a signed document of :mod:`grattage.blocks.signing` (Ed25519 over
``"grattage/" || kind || "/1" || 0x00 || canonical JSON without "signature"``), signed by the
witness's own key, with the kinds ``beacon-chain``, ``beacon-round`` and ``cosignature``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from grattage.blocks.hashchain import verify_link
from grattage.blocks.signing import TreeHead, check_document, key_id
from grattage.errors import VerificationFailed

CHAIN_FORMAT = "grattage-beacon-chain/1"
ROUND_FORMAT = "grattage-beacon-round/1"
COSIGNATURE_FORMAT = "grattage-cosignature/1"
CHAIN_KIND = "beacon-chain"
ROUND_KIND = "beacon-round"
COSIGNATURE_KIND = "cosignature"


def chain_id_of(head: bytes) -> str:
    """A chain's name: the hex SHA-256 of its head (so two chains never share one)."""
    return key_id(head)  # the same computation: SHA-256 of 32 bytes, in hex


def _integer(document: Mapping[str, Any], name: str, low: int = 0) -> int:
    value = document.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value < 2**63:
        raise VerificationFailed(f"the {name} of a witness document is not an integer ≥ {low}")
    return value


def _hex32(document: Mapping[str, Any], name: str) -> bytes:
    value = document.get(name)
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else b""
    except ValueError:
        raw = b""
    if len(raw) != 32 or value != raw.hex():
        raise VerificationFailed(f"the {name} of a witness document is not 32 bytes in hex")
    return raw


def _signed(kind: str, form: str, document: object, witness_key: bytes) -> Mapping[str, Any]:
    if not isinstance(document, Mapping) or document.get("format") != form:
        raise VerificationFailed(f"not a {kind} document (format {form} expected)")
    if document.get("key_id", document.get("witness_key_id")) != key_id(witness_key):
        raise VerificationFailed(f"the {kind} names another key than the witness's")
    try:
        check_document(kind, document, witness_key)
    except VerificationFailed:
        raise VerificationFailed(
            f"the {kind}'s signature does not verify with the witness's key"
        ) from None
    return document


@dataclass(frozen=True)
class BeaconChain:
    """A chain the witness committed to: round ``r`` is published at
    ``start_ms + (r - 1) * period_ms`` with the value ``s_r`` of the chain of this head."""

    chain_id: str
    head: bytes
    length: int
    start_ms: int
    period_ms: int

    def round_time_ms(self, round_number: int) -> int:
        return self.start_ms + (round_number - 1) * self.period_ms

    def end_ms(self) -> int:
        """When the round after the last would be published: the next chain starts then."""
        return self.start_ms + self.length * self.period_ms

    def unsigned_document(self, witness_key_id: str) -> dict[str, Any]:
        return {
            "format": CHAIN_FORMAT,
            "chain_id": self.chain_id,
            "head": self.head.hex(),
            "length": self.length,
            "start_ms": self.start_ms,
            "period_ms": self.period_ms,
            "key_id": witness_key_id,
        }


@dataclass(frozen=True)
class BeaconRound:
    chain_id: str
    round: int
    value: bytes
    time_ms: int

    def unsigned_document(self, witness_key_id: str) -> dict[str, Any]:
        return {
            "format": ROUND_FORMAT,
            "chain_id": self.chain_id,
            "round": self.round,
            "value": self.value.hex(),
            "time_ms": self.time_ms,
            "key_id": witness_key_id,
        }


@dataclass(frozen=True)
class Cosignature:
    chain_id: str
    round: int
    tree_size: int
    root_hash: bytes
    sth_timestamp: int
    time_ms: int

    def unsigned_document(self, witness_key_id: str) -> dict[str, Any]:
        return {
            "format": COSIGNATURE_FORMAT,
            "chain_id": self.chain_id,
            "round": self.round,
            "tree_size": self.tree_size,
            "root_hash": self.root_hash.hex(),
            "sth_timestamp": self.sth_timestamp,
            "witness_key_id": witness_key_id,
            "time_ms": self.time_ms,
        }


def check_chain(document: object, witness_key: bytes) -> BeaconChain:
    """The chain a signed ``beacon-chain`` document commits to (its chain_id re-derived)."""
    signed = _signed(CHAIN_KIND, CHAIN_FORMAT, document, witness_key)
    head = _hex32(signed, "head")
    chain = BeaconChain(
        chain_id=str(signed.get("chain_id")),
        head=head,
        length=_integer(signed, "length", 1),
        start_ms=_integer(signed, "start_ms"),
        period_ms=_integer(signed, "period_ms", 1),
    )
    if chain.chain_id != chain_id_of(head):
        raise VerificationFailed("the chain's chain_id is not the SHA-256 of its head")
    return chain


def check_round(
    document: object,
    chain: BeaconChain,
    witness_key: bytes,
    known: tuple[int, bytes] | None = None,
) -> BeaconRound:
    """A signed ``beacon-round`` of ``chain``: its signature, its time (the chain's schedule)
    and its link — hashed down to ``known`` (an earlier round already checked, as
    ``(round, value)``), or to the head when none is given."""
    signed = _signed(ROUND_KIND, ROUND_FORMAT, document, witness_key)
    checked = BeaconRound(
        chain_id=str(signed.get("chain_id")),
        round=_integer(signed, "round", 1),
        value=_hex32(signed, "value"),
        time_ms=_integer(signed, "time_ms"),
    )
    if checked.chain_id != chain.chain_id:
        raise VerificationFailed("the round belongs to another chain")
    if checked.round > chain.length:
        raise VerificationFailed(f"round {checked.round} is beyond the chain's {chain.length}")
    if checked.time_ms != chain.round_time_ms(checked.round):
        raise VerificationFailed(f"round {checked.round}'s time is not the chain's schedule")
    known_round, known_value = known if known is not None else (0, chain.head)
    if not verify_link(checked.value, checked.round, known_value, known_round):
        raise VerificationFailed(
            f"round {checked.round}'s value does not hash down to round {known_round}'s"
        )
    return checked


def check_cosignature(
    document: object, witness_key: bytes, head: TreeHead, chain: BeaconChain | None = None
) -> Cosignature:
    """A signed ``cosignature`` of exactly ``head`` (size, root and timestamp); with ``chain``,
    also one made for a round of that chain before the round was published."""
    signed = _signed(COSIGNATURE_KIND, COSIGNATURE_FORMAT, document, witness_key)
    checked = Cosignature(
        chain_id=str(signed.get("chain_id")),
        round=_integer(signed, "round", 1),
        tree_size=_integer(signed, "tree_size"),
        root_hash=_hex32(signed, "root_hash"),
        sth_timestamp=_integer(signed, "sth_timestamp"),
        time_ms=_integer(signed, "time_ms"),
    )
    if (checked.tree_size, checked.root_hash, checked.sth_timestamp) != (
        head.tree_size,
        head.root_hash,
        head.timestamp_ms,
    ):
        raise VerificationFailed("the cosignature is of another tree head")
    if chain is not None:
        if checked.chain_id != chain.chain_id or checked.round > chain.length:
            raise VerificationFailed("the cosignature is for a round of another chain")
        if checked.time_ms >= chain.round_time_ms(checked.round):
            raise VerificationFailed(
                f"the head was cosigned after round {checked.round} was published"
            )
    return checked


class Beacon(Protocol):
    """Where the draw takes its public randomness: the witness (its client), or drand. Every
    round it returns is checked (signature, schedule, link or BLS signature)."""

    def latest(self) -> BeaconRound:
        """The newest round published (the draw's round is the one after it)."""
        ...

    def round(self, round_number: int, wait: bool = False) -> BeaconRound:
        """Round ``round_number``; ``wait``: until it is published (at most two periods),
        else :class:`grattage.errors.NotFound`."""
        ...
