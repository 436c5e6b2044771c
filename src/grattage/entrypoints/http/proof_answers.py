"""The fairness documents as the API serves them (docs/fairness.md, docs/api.md): a block's
commitment, a ticket's receipt and proof, a disclosure. They go out byte for byte as
:mod:`grattage.blocks` made them, so these models document them and are never applied: each
shape the server can send is one model here, a drawn block's (issue 15) beside the older one,
and tests/integration/test_served_schema.py validates real answers against /openapi.json with
every object closed."""

from __future__ import annotations

from typing import Any

from grattage.entrypoints.http.answers import Answer, SignedTreeHead


class Commitment(Answer):
    """A block's signed commitment (format ``grattage-commitment/2``, docs/fairness.md);
    blocks committed before the transparency log answer format 1, described there too."""

    format: str
    block_id: str
    game: str
    rules_version: str
    price_cents: int
    size: int
    table: dict[str, Any]
    table_sha256: str
    leaf: str
    root: str
    created_at: str
    key_id: str
    signature: str


class DrawnCommitment(Commitment):
    """A drawn block's commitment: format 2 and the four members of its draw (issue 15)."""

    draw: str
    """``grattage-draw/1``, the draw of docs/draw.md."""
    chain_head: str
    chain_length: int
    witness_key: str


class Receipt(Answer):
    """A sale's signed receipt, version 1 (``grattage-receipt/1``): a block that is not drawn
    sells unit n to sale n, so the receipt names the position."""

    format: str
    ticket_id: int
    player: str
    block_id: str
    sequence: int
    position: int
    stake_cents: int
    time: str
    commitment_index: int
    key_id: str
    signature: str


class Beacon(Answer):
    """The witness's round a drawn sale is drawn with."""

    chain_id: str
    round: int


class DrawnReceipt(Answer):
    """A drawn block's sale receipt, version 2 (``grattage-receipt/2``): no position (the unit
    is drawn after the sale), chained to the block's previous receipt, naming its round."""

    format: str
    ticket_id: int
    player: str
    block_id: str
    sequence: int
    client_seed: str | None
    stake_cents: int
    time: str
    previous: str
    beacon: Beacon
    commitment_index: int
    key_id: str
    signature: str


class ProvenUnit(Answer):
    position: int
    tier: int
    prize_cents: int
    salt: str
    choice: str | None
    path: list[str]


class LoggedEntry(Answer):
    index: int
    entry: dict[str, Any]
    path: list[str]


class LogInclusion(Answer):
    sth: SignedTreeHead
    commitment_entry: LoggedEntry
    receipt_entry: LoggedEntry
    key_changes: list[LoggedEntry] = []  # noqa: RUF012 (a pydantic field: copied per instance)
    """Every ``key.change`` entry of the head's tree, oldest first; absent before a rotation."""


class BeaconChainDocument(Answer):
    """The witness's signed chain of rounds (``grattage-beacon-chain/1``, docs/witness.md)."""

    format: str
    chain_id: str
    head: str
    length: int
    start_ms: int
    period_ms: int
    key_id: str
    signature: str


class BeaconRound(Answer):
    """A published round of the witness (``grattage-beacon-round/1``, docs/witness.md)."""

    format: str
    chain_id: str
    round: int
    time_ms: int
    value: str
    key_id: str
    signature: str


class Cosignature(Answer):
    """The witness's cosignature of a head for a round (``grattage-cosignature/1``)."""

    format: str
    chain_id: str
    round: int
    time_ms: int
    tree_size: int
    root_hash: str
    sth_timestamp: int
    witness_key_id: str
    signature: str


class CosignedHead(Answer):
    sth: SignedTreeHead
    cosignature: Cosignature


class DrawProof(Answer):
    """A drawn ticket's draw (docs/fairness.md, checks 6a-6h)."""

    drawn_entry: LoggedEntry
    previous_entry: LoggedEntry | None
    """The block's receipt n - 1 in the log; null for sale 0."""
    n_set_entry: LoggedEntry | None
    j_set_entry: LoggedEntry | None
    chain: BeaconChainDocument
    round: BeaconRound
    cosigned: CosignedHead
    consistency: list[str]


class TicketProof(Answer):
    """A finished ticket's proof (format ``grattage-ticket-proof/2``); a drawn block's ticket
    has a version 2 receipt, a drawn commitment and its ``draw``."""

    format: str
    operator_key: str
    commitment: Commitment | DrawnCommitment
    receipt: Receipt | DrawnReceipt
    unit: ProvenUnit
    ticket: dict[str, Any]
    log: LogInclusion
    draw: DrawProof | None = None
    """Only for a drawn block's ticket: absent otherwise."""


class Disclosure(Answer):
    """An ended block's key and tiers (format ``grattage-disclosure/2``)."""

    format: str
    operator_key: str
    commitment: Commitment | DrawnCommitment
    key: str
    tiers: str
    """Base64 of one byte per unit: its tier, in sale order."""
