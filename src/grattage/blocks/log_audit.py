"""What a monitor checks in the transparency log, entry by entry — standard library and
``cryptography`` only, so that anyone can run it against the operator.

:class:`LogAuditor` is fed the log's entries in index order (as ``grattage monitor`` fetches
them) and keeps what it must remember between runs in a small JSON state: the tree's frontier
(O(log n) hashes), the operator key's history (:class:`~grattage.blocks.key_history.KeyChain`:
which key signs at which index), and per block its commitment's figures, the next
sale sequence and a bitmap of the positions sold. The first entry that breaks a rule raises
:class:`~grattage.errors.VerificationFailed` naming the entry's index and the rule.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grattage.blocks.draw_audit import DrawAudit
from grattage.blocks.key_history import KeyChain
from grattage.blocks.signing import TreeHead, canonical_json
from grattage.blocks.tlog import Frontier, entry_leaf_hash, verify_consistency
from grattage.errors import VerificationFailed

ENTRY_KINDS = (
    "block.commitment",
    "block.opened",
    "block.suspended",
    "block.resumed",
    "block.ended",
    "sale.receipt",
    "disclosure.published",
    "key.change",
    "beacon.chain",
    "draw.round",
    "sale.drawn",
)
COMMITMENT_V2 = "grattage-commitment/2"
RECEIPT_FORMAT = "grattage-receipt/1"
RECEIPT_V2_FORMAT = "grattage-receipt/2"


@dataclass
class BlockSeen:
    commitment_index: int
    size: int
    price_cents: int
    prizes: dict[int, int]
    """prize in cents → count in the committed table."""
    state: str = "committed"
    next_sequence: int = 0
    sold: bytearray = field(default_factory=bytearray)

    def to_json(self) -> dict[str, Any]:
        return {
            "commitment_index": self.commitment_index,
            "size": self.size,
            "price_cents": self.price_cents,
            "prizes": [[prize, count] for prize, count in self.prizes.items()],
            "state": self.state,
            "next_sequence": self.next_sequence,
            "sold": base64.b64encode(bytes(self.sold)).decode("ascii"),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BlockSeen:
        return cls(
            commitment_index=data["commitment_index"],
            size=data["size"],
            price_cents=data["price_cents"],
            prizes={int(prize): int(count) for prize, count in data["prizes"]},
            state=data["state"],
            next_sequence=data["next_sequence"],
            sold=bytearray(base64.b64decode(data["sold"])),
        )


class LogAuditor:
    """Replays the log's rules over its entries; its state survives between runs."""

    def __init__(self, first_key: bytes) -> None:
        """``first_key``: the log's first key (trusted on first use, or pinned)."""
        self.keys = KeyChain(first_key)
        self.frontier = Frontier()
        self.blocks: dict[str, BlockSeen] = {}
        self.head: TreeHead | None = None
        self.draws = DrawAudit()

    @property
    def public_key(self) -> bytes:
        """The key in force after the entries fed so far."""
        return self.keys.current.public_key

    # -- the tree and its heads ----------------------------------------------------------
    def check_head(self, head: TreeHead) -> None:
        """A new head, before its entries are fed: it did not shrink the log, and when it
        names the key in force its signature holds (a head naming another key is checked once
        its entries are fed: a key change among them may bring that key in)."""
        if head.key_id == self.keys.current.key_id:
            head.check(self.public_key)
        if self.head is not None and head.tree_size < self.head.tree_size:
            raise VerificationFailed(
                f"the log shrank: head of size {head.tree_size} after one of size "
                f"{self.head.tree_size}"
            )

    def check_consistency(self, head: TreeHead, proof: list[bytes]) -> None:
        last = self.head
        if last is None or last.tree_size == 0:
            return
        if not verify_consistency(
            last.tree_size, head.tree_size, last.root_hash, head.root_hash, proof
        ):
            raise VerificationFailed(
                f"the head of size {head.tree_size} is not consistent with the head of size "
                f"{last.tree_size} seen before: the log was rewritten or forked"
            )

    def accept_head(self, head: TreeHead) -> None:
        """After every entry up to ``head.tree_size`` was fed: the rebuilt root must match."""
        if self.frontier.size != head.tree_size:
            raise VerificationFailed(
                f"fed {self.frontier.size} entries for a head of size {head.tree_size}"
            )
        if self.frontier.root() != head.root_hash:
            raise VerificationFailed(
                f"the entries served do not hash to the signed root of size {head.tree_size}: "
                "an entry was rewritten, or the head is not the log's (a head naming a key not "
                "yet in force is checked once its entries are fed: they may bring its key in)"
            )
        self.keys.check_head(head)
        cosigned = self.draws.largest_cosigned
        if cosigned is not None and cosigned.tree_size == head.tree_size:
            self.check_cosigned(head, [])
        self.draws.check_on_time(head.timestamp_ms)
        self.head = head

    def check_cosigned(self, head: TreeHead, proof: list[bytes]) -> None:
        """The largest head the witness cosigned in the entries fed is a prefix of ``head``
        (``proof``: the log's consistency proof between them). Every head it cosigned extends
        the ones before (the witness checks it), so this one check covers them all."""
        cosigned = self.draws.largest_cosigned
        if cosigned is None:
            return
        if not verify_consistency(
            cosigned.tree_size, head.tree_size, cosigned.root_hash, head.root_hash, proof
        ):
            raise VerificationFailed(
                f"the head of size {cosigned.tree_size} the witness cosigned is not a prefix of "
                f"the log's head of size {head.tree_size}: the witness was shown another log"
            )
        self.draws.largest_cosigned = None

    # -- the entries ---------------------------------------------------------------------
    def feed(self, index: int, entry: object) -> None:
        if index != self.frontier.size:
            raise VerificationFailed(f"entry {index}: expected entry {self.frontier.size}")
        try:
            encoded = canonical_json(entry)
        except (TypeError, ValueError) as exc:
            raise VerificationFailed(f"entry {index}: not canonical JSON: {exc}") from None
        try:
            self._check(entry)
        except VerificationFailed as exc:
            raise VerificationFailed(f"entry {index}: {exc.message}") from None
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise VerificationFailed(
                f"entry {index}: malformed: {exc.__class__.__name__}: {exc}"
            ) from None
        self.frontier.append(entry_leaf_hash(encoded))

    def _check(self, entry: Any) -> None:
        if not isinstance(entry, Mapping) or entry.get("v") != 1:
            raise VerificationFailed("not a version-1 entry")
        kind = entry.get("kind")
        if kind not in ENTRY_KINDS:
            raise VerificationFailed(f"unknown kind {kind!r}")
        if not isinstance(entry.get("time"), str):
            raise VerificationFailed("an entry has a time")
        index = self.frontier.size
        if kind == "block.commitment":
            self._commitment(index, entry["commitment"])
        elif kind == "sale.receipt":
            self._receipt(index, entry["receipt"])
        elif kind == "key.change":
            self.keys.follow(index, entry["key_change"])
        elif kind == "sale.drawn":
            self._drawn(entry)
        elif kind == "beacon.chain":
            self.draws.chain(entry["chain"])
        elif kind == "draw.round":
            self.draws.round(entry, self.keys, index)
        else:
            self._block_event(kind, entry)

    def _commitment(self, index: int, commitment: Any) -> None:
        self.keys.check_document("commitment", commitment, index)
        if commitment.get("format") != COMMITMENT_V2:
            raise VerificationFailed(f"a commitment is {COMMITMENT_V2}")
        block_id = commitment["block_id"]
        if block_id in self.blocks:
            raise VerificationFailed(f"block {block_id} committed twice")
        table = commitment["table"]
        size, price = commitment["size"], commitment["price_cents"]
        if size != table["block_size"] or not isinstance(price, int) or price < 1:
            raise VerificationFailed(f"block {block_id}: size or price disagree with its table")
        prizes = {tier["prize_cents"]: tier["count"] for tier in table["tiers"]}
        self.blocks[block_id] = BlockSeen(
            commitment_index=index,
            size=size,
            price_cents=price,
            prizes=prizes,
            sold=bytearray((size + 7) // 8),
        )
        self.draws.commitment(commitment)

    def _block(self, block_id: Any, commitment_index: Any) -> BlockSeen:
        block = self.blocks.get(block_id)
        if block is None:
            raise VerificationFailed(f"block {block_id} has no earlier commitment in the log")
        if commitment_index != block.commitment_index:
            raise VerificationFailed(
                f"block {block_id} names commitment {commitment_index!r}, logged at "
                f"{block.commitment_index}"
            )
        return block

    def _block_event(self, kind: str, entry: Mapping[str, Any]) -> None:
        block = self._block(entry["block_id"], entry["commitment_index"])
        allowed = {
            "block.opened": ("committed", "suspended"),
            "block.suspended": ("committed", "open"),  # a pending block may be suspended
            "block.resumed": ("suspended",),
            "block.ended": ("committed", "open", "suspended"),
            "disclosure.published": ("ended",),
        }[kind]
        if block.state not in allowed:
            raise VerificationFailed(f"{kind} for a block that is {block.state}")
        if kind == "block.ended":
            self._ended(block, entry)
        elif kind == "disclosure.published":
            self.draws.published(entry)
            block.state = "disclosed"  # once: a second file for a block is a second story
        else:
            block.state = {"block.opened": "open", "block.resumed": "open"}.get(kind, "suspended")

    def _ended(self, block: BlockSeen, entry: Mapping[str, Any]) -> None:
        if entry["units_sold"] != block.next_sequence:
            raise VerificationFailed(
                f"the block ended with {entry['units_sold']!r} units sold, but the log holds "
                f"{block.next_sequence} receipts for it"
            )
        if entry["units_never_sold"] != block.size - block.next_sequence:
            raise VerificationFailed("units_never_sold is not the block's size minus its sales")
        never_sold = 0
        for row in entry["prizes_never_sold"]:
            prize, count = row["prize_cents"], row["count"]
            if not 0 < count <= block.prizes.get(prize, 0):
                raise VerificationFailed(
                    f"{count!r} × {prize!r} cents never sold: not in its table"
                )
            never_sold += count
        if never_sold > entry["units_never_sold"]:
            raise VerificationFailed("more prizes never sold than units never sold")
        self.draws.ended(entry["block_id"], entry["units_sold"])
        block.state = "ended"

    def _receipt(self, index: int, receipt: Any) -> None:
        self.keys.check_document("receipt", receipt, index)
        if receipt.get("format") not in (RECEIPT_FORMAT, RECEIPT_V2_FORMAT):
            raise VerificationFailed(f"a receipt is {RECEIPT_FORMAT} or {RECEIPT_V2_FORMAT}")
        block = self._block(receipt["block_id"], receipt["commitment_index"])
        if block.state != "open":
            raise VerificationFailed(f"a sale from a block that is {block.state}")
        sequence = receipt["sequence"]
        if sequence != block.next_sequence:
            raise VerificationFailed(
                f"receipt sequence {sequence!r} where {block.next_sequence} was next: "
                "a sale is missing or repeated"
            )
        if receipt["stake_cents"] != block.price_cents:
            raise VerificationFailed(
                f"stake {receipt['stake_cents']!r} differs from the committed price "
                f"{block.price_cents}"
            )
        if receipt["format"] == RECEIPT_V2_FORMAT:
            self.draws.receipt(index, receipt)  # its unit is named by its sale.drawn entry
            block.next_sequence += 1
            return
        if receipt["block_id"] in self.draws.blocks:
            raise VerificationFailed(f"a drawn block's sale has a {RECEIPT_FORMAT} receipt")
        position = receipt["position"]
        if not isinstance(position, int) or not 0 <= position < block.size:
            raise VerificationFailed(f"position {position!r} is not in the block")
        if position != sequence:
            # Until sales are drawn from the beacon (docs/draw.md), the n-th sale of a block
            # takes its unit n: a receipt naming another unit is a sale the operator steered.
            raise VerificationFailed(
                f"receipt {sequence} names unit {position}: the n-th sale takes unit n"
            )
        self._sell_unit(block, position)
        block.next_sequence += 1

    def _sell_unit(self, block: BlockSeen, position: int) -> None:
        byte, bit = divmod(position, 8)
        if block.sold[byte] >> bit & 1:
            raise VerificationFailed(f"position {position} sold twice")
        block.sold[byte] |= 1 << bit

    def _drawn(self, entry: Mapping[str, Any]) -> None:
        """A drawn sale's unit: of a receipt already logged, in the block, never sold before.
        (The draw itself — round, link, j — is checked by the draw's own rules.)"""
        block = self._block(entry["block_id"], entry["commitment_index"])
        unit = entry["unit"]
        if not entry["sequence"] < block.next_sequence:
            raise VerificationFailed(f"sale {entry['sequence']!r} drawn before its receipt")
        if not isinstance(unit, int) or not 0 <= unit < block.size:
            raise VerificationFailed(f"unit {unit!r} is not in the block")
        self._sell_unit(block, unit)
        self.draws.drawn(entry)

    # -- the state kept between runs -----------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": "grattage-monitor-state/1",
            "public_key": self.public_key.hex(),
            "keys": self.keys.to_json(),
            "size": self.frontier.size,
            "frontier": [peak.hex() for peak in self.frontier.peaks],
            "head": None if self.head is None else self.head.to_json(),
            "blocks": {block_id: block.to_json() for block_id, block in self.blocks.items()},
            "draws": self.draws.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LogAuditor:
        if data.get("format") != "grattage-monitor-state/1":
            raise VerificationFailed("not a monitor state file")
        auditor = cls(bytes.fromhex(data["public_key"]))
        if "keys" in data:  # a state written before rotations knew only its one key
            auditor.keys = KeyChain.from_json(data["keys"])
            if auditor.public_key.hex() != data["public_key"]:
                raise VerificationFailed("the state's key is not the last of its key history")
        auditor.frontier = Frontier(
            size=data["size"], peaks=[bytes.fromhex(peak) for peak in data["frontier"]]
        )
        auditor.head = None if data["head"] is None else TreeHead.from_json(data["head"])
        auditor.blocks = {
            block_id: BlockSeen.from_json(block) for block_id, block in data["blocks"].items()
        }
        auditor.draws = DrawAudit.from_json(data.get("draws"))
        return auditor
