"""A drawn block's log built from docs/fairness.md and docs/draw.md alone (blocks level): the
commitment with its draw members, receipts v2 chained per block, heads the witness cosigns for
a round before publishing it, ``beacon.chain``, ``draw.round`` and ``sale.drawn`` entries — so
that the verifiers' tests (verify-ticket, verify-block, the monitor) do not wait for a server.

Every forgery a test plays is the operator's (it holds its own key): edit what it logs, re-sign
what it signs, and rebuild the tree; the witness's key stays the witness's.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from grattage.blocks.beacon import BeaconChain, BeaconRound, Cosignature, chain_id_of
from grattage.blocks.commitment import build_tree, unit_audit_path
from grattage.blocks.draw import draw_index
from grattage.blocks.draw_file import DrawRecord, encode_draw_file
from grattage.blocks.draw_records import document_sha256, draw_members, make_receipt_v2
from grattage.blocks.hashchain import HashChain
from grattage.blocks.merkle import CHUNK_LEAVES, unit_leaf_v2
from grattage.blocks.proofs_v2 import make_commitment, make_disclosure, tier_prizes
from grattage.blocks.replay import chain_seed
from grattage.blocks.salts import unit_salt
from grattage.blocks.sealing import design_unit
from grattage.blocks.signing import Signer, TreeHead, canonical_json
from grattage.blocks.tlog import (
    Frontier,
    consistency_path,
    entry_leaf_hash,
    inclusion_path,
    subtree_hash,
)
from grattage.games import find_game, load_table
from grattage.games.base import Game

OPERATOR_PRIVATE = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
WITNESS_PRIVATE = bytes(range(32, 64))
BLOCK_KEY = hashlib.sha256(b"grattage drawn log: block key").digest()
WITNESS_SEED = hashlib.sha256(b"grattage drawn log: witness chain seed").digest()
BLOCK_ID = bytes.fromhex("67726174746167652d647261776e0001")
START_MS = 1_800_000_000_000
PERIOD_MS = 1000
TIME = "2027-01-15T08:00:00.000000Z"


def table_text(size: int) -> str:
    return (
        'game = "cash"\ntitle = "Cash (drawn log)"\nsource = "tests/drawn_log.py"\n'
        f"reconstruction = false\nblock_size = {size}\n"
        f"[[tiers]]\nprize_cents = 2000\ncount = {max(1, size // 20)}\n"
        f"[[tiers]]\nprize_cents = 1000\ncount = {max(1, size // 10)}\n"
        f"[[tiers]]\nprize_cents = 500\ncount = {max(1, size // 5)}\n"
    )


def shuffled(game: Game) -> bytes:
    """The table's multiset in a fixed pseudo-random order (Fisher-Yates over SHAKE-256)."""
    units = [tier for tier, count in enumerate(game.table.counts_by_tier()) for _ in range(count)]
    stream = hashlib.shake_256(b"drawn log tiers").digest(8 * len(units))
    for i in range(len(units) - 1, 0, -1):
        j = int.from_bytes(stream[8 * i : 8 * i + 8], "big") % (i + 1)
        units[i], units[j] = units[j], units[i]
    return bytes(units)


def sale_time(round_ms: int, at_ms: int | None = None) -> str:
    """A receipt's ``time``: ``at_ms``, else half a period before its round — the round the
    rule names for it (docs/draw.md, "The round of a sale") with any margin up to that."""
    at_ms = round_ms - PERIOD_MS // 2 if at_ms is None else at_ms
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=at_ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Sale:
    n: int
    ticket_id: int
    receipt: dict[str, Any]
    receipt_index: int
    chain_id: str
    round: int
    drawn_index: int | None = None
    slot: int | None = None
    unit: int | None = None


@dataclass
class DrawnLog:
    size: int = 40
    operator: Signer = field(default_factory=lambda: Signer(OPERATOR_PRIVATE))
    witness: Signer = field(default_factory=lambda: Signer(WITNESS_PRIVATE))
    entries: list[dict[str, Any]] = field(default_factory=list)
    sales: list[Sale] = field(default_factory=list)
    fixed_time: bool = False
    """Every receipt at ``TIME`` (the draws file's golden vector), not by the round rule."""

    def __post_init__(self) -> None:
        self.game = find_game("cash", load_table("cash", table_text(self.size), "drawn.toml"))
        self.tiers = shuffled(self.game)
        self.prizes = tier_prizes(self.game.table)
        self.tree = build_tree(BLOCK_ID, BLOCK_KEY, self.tiers, workers=1, tier_prizes=self.prizes)
        self.chain, self.chain_head = HashChain.create(self.size, chain_seed(BLOCK_KEY))
        self.beacon, head = HashChain.create(1000, WITNESS_SEED)
        self.beacon_chain = BeaconChain(chain_id_of(head), head, 1000, START_MS, PERIOD_MS)
        self.chain_document = self.witness.sign_document(
            "beacon-chain", self.beacon_chain.unsigned_document(self.witness.key_id)
        )
        extra = draw_members(self.chain_head, self.size, self.witness.public_key)
        self.commitment = make_commitment(
            self.operator, BLOCK_ID, self.game, 500, self.tree.root, self.size, TIME, extra
        )
        self.permutation = list(range(self.size))
        self.set_by: list[int | None] = [None] * self.size
        self.cosigned: dict[int, list[dict[str, Any]]] = {}
        self.head_ms = START_MS - 10 * PERIOD_MS
        self.chain_logged = False
        self.commitment_index = self.append("block.commitment", commitment=self.commitment)
        self.append("block.opened", block_id=BLOCK_ID.hex(), commitment_index=0)

    # -- the log ---------------------------------------------------------------------------
    def append(self, kind: str, **fields: Any) -> int:
        self.entries.append({"v": 1, "kind": kind, "time": TIME, **fields})
        return len(self.entries) - 1

    def tree_nodes(self, size: int | None = None) -> Callable[[int, int], bytes]:
        frontier, nodes = Frontier(), {}
        for entry in self.entries[: len(self.entries) if size is None else size]:
            for level, index, digest in frontier.append(entry_leaf_hash(canonical_json(entry))):
                nodes[level, index] = digest
        return lambda level, index: nodes[level, index]

    def head(self, size: int | None = None) -> TreeHead:
        size = len(self.entries) if size is None else size
        self.head_ms += 1
        root = subtree_hash(self.tree_nodes(size), 0, size)
        return self.operator.sign_tree_head(size, self.head_ms, root)

    def logged(self, index: int, size: int) -> dict[str, Any]:
        path = inclusion_path(self.tree_nodes(size), index, size)
        # A copy: a test that forges the proof must not change the log it came from.
        entry = copy.deepcopy(self.entries[index])
        return {"index": index, "entry": entry, "path": [p.hex() for p in path]}

    def consistency(self, first: int, second: int) -> list[str]:
        if first in (0, second):
            return []
        return [node.hex() for node in consistency_path(self.tree_nodes(second), first, second)]

    # -- the sale, the witness, the draw ---------------------------------------------------
    def round_time(self, number: int) -> int:
        return self.beacon_chain.round_time_ms(number)

    def sell(
        self, count: int, number: int, seed: str | None = None, at_ms: int | None = None
    ) -> list[Sale]:
        """``count`` sales for round ``number``, each receipt chained on the previous one; at
        ``at_ms`` (a time the round rule may not give that round for), else half a period
        before the round."""
        made = []
        for _ in range(count):
            n = len(self.sales)
            previous = (
                document_sha256(self.commitment)
                if n == 0
                else document_sha256(self.sales[-1].receipt)
            )
            receipt = make_receipt_v2(
                self.operator,
                ticket_id=100 + n,
                player="ab" * 16,
                block_id=BLOCK_ID,
                sequence=n,
                client_seed=seed,
                stake_cents=500,
                time=TIME if self.fixed_time else sale_time(self.round_time(number), at_ms),
                previous=previous,
                chain_id=self.beacon_chain.chain_id,
                round_number=number,
                commitment_index=self.commitment_index,
            )
            index = self.append("sale.receipt", receipt=receipt)
            sale = Sale(n, 100 + n, receipt, index, self.beacon_chain.chain_id, number)
            self.sales.append(sale)
            made.append(sale)
        return made

    def cosign(self, number: int, at_ms: int | None = None) -> dict[str, Any]:
        """The witness cosigns the current head for round ``number`` (before its time)."""
        sth = self.head()
        at_ms = self.round_time(number) - PERIOD_MS // 2 if at_ms is None else at_ms
        cosignature = Cosignature(
            self.beacon_chain.chain_id,
            number,
            sth.tree_size,
            sth.root_hash,
            sth.timestamp_ms,
            at_ms,
        )
        pair = {
            "sth": sth.to_json(),
            "cosignature": self.witness.sign_document(
                "cosignature", cosignature.unsigned_document(self.witness.key_id)
            ),
        }
        self.cosigned.setdefault(number, []).append(pair)
        return pair

    def round_document(self, number: int) -> dict[str, Any]:
        value = self.beacon.link(number)
        checked = BeaconRound(self.beacon_chain.chain_id, number, value, self.round_time(number))
        return self.witness.sign_document(
            "beacon-round", checked.unsigned_document(self.witness.key_id)
        )

    def publish(self, number: int) -> list[Sale]:
        """Round ``number`` is out: log it, and draw every covered sale not drawn, in order."""
        covered = max(
            (pair["sth"]["tree_size"] for pair in self.cosigned.get(number, [])), default=0
        )
        waiting = [s for s in self.sales if s.drawn_index is None]
        drawable = []
        for sale in waiting:
            if sale.receipt_index >= covered or sale.round > number:
                break
            drawable.append(sale)
        if not drawable:
            return []
        if not self.chain_logged:
            self.append("beacon.chain", chain=self.chain_document)
            self.chain_logged = True
        self.append(
            "draw.round",
            round=self.round_document(number),
            cosigned=list(self.cosigned.get(number, [])),
        )
        for sale in drawable:
            self._draw(sale, number)
        return drawable

    def _draw(self, sale: Sale, number: int) -> None:
        n, p = sale.n, self.permutation
        link = self.chain.link(n + 1)
        receipt_hash = document_sha256(sale.receipt)
        j = draw_index(self.beacon.link(number), link, BLOCK_ID, n, self.size, receipt_hash)
        unit_n, unit_j = p[n], p[j]
        n_set_by, j_set_by = self.set_by[n], self.set_by[j]
        p[n], p[j] = unit_j, unit_n
        self.set_by[j] = n if j != n else self.set_by[j]
        tier = self.tiers[unit_j]
        leaf = unit_leaf_v2(BLOCK_ID, unit_j, tier, self.prizes[tier], unit_salt(BLOCK_KEY, unit_j))
        sale.drawn_index = self.append(
            "sale.drawn",
            block_id=BLOCK_ID.hex(),
            commitment_index=self.commitment_index,
            sequence=n,
            receipt_index=sale.receipt_index,
            receipt_sha256=receipt_hash.hex(),
            beacon={"chain_id": self.beacon_chain.chain_id, "round": number},
            link=link.hex(),
            slot=j,
            unit=unit_j,
            slot_unit=unit_n,
            n_set_by=n_set_by,
            j_set_by=j_set_by,
            leaf=leaf.hex(),
        )
        sale.slot, sale.unit = j, unit_j

    def forget_slots(self, first: int) -> None:
        """The outsider's forgery (an operator that deleted draw_slots rows): the drawer takes
        slots ``first …`` as never set, each holding its own unit — so a later sale may be given
        a unit already sold, and its proof (setters null, the unit its slot's) still checks."""
        for slot in range(first, self.size):
            self.permutation[slot], self.set_by[slot] = slot, None

    def run(self, rounds: int, per_round: int, first_round: int = 2) -> None:
        """``rounds`` ordinary rounds of ``per_round`` sales each: sold, cosigned, drawn."""
        for number in range(first_round, first_round + rounds):
            self.sell(per_round, number)
            self.cosign(number)
            self.publish(number)

    def end(self, reason: str = "closed") -> None:
        sold = len(self.sales)
        left: dict[int, int] = {}
        for slot in range(sold, self.size):
            prize = self.prizes[self.tiers[self.permutation[slot]]]
            if prize:
                left[prize] = left.get(prize, 0) + 1
        self.append(
            "block.ended",
            block_id=BLOCK_ID.hex(),
            commitment_index=self.commitment_index,
            reason=reason,
            units_sold=sold,
            units_never_sold=self.size - sold,
            prizes_never_sold=[
                {"prize_cents": tier.prize_cents, "count": left[tier.prize_cents]}
                for tier in self.game.table.tiers
                if left.get(tier.prize_cents)
            ],
        )

    def disclosed(self, disclosure_file: bytes, draws_file: bytes | None) -> None:
        """The ``disclosure.published`` entry of the files as written (docs/fairness.md)."""
        draws = (
            {} if draws_file is None else {"draws_sha256": hashlib.sha256(draws_file).hexdigest()}
        )
        self.append(
            "disclosure.published",
            block_id=BLOCK_ID.hex(),
            commitment_index=self.commitment_index,
            sha256=hashlib.sha256(disclosure_file).hexdigest(),
            key=BLOCK_KEY.hex(),
            **draws,
        )

    # -- what the verifiers are given ------------------------------------------------------
    def records(self) -> list[DrawRecord]:
        return [
            DrawRecord(
                bytes.fromhex(self.entries[s.drawn_index]["receipt_sha256"]),
                self.entries[s.drawn_index]["beacon"]["chain_id"],
                self.entries[s.drawn_index]["beacon"]["round"],
                self.entries[s.drawn_index]["slot"],
                self.entries[s.drawn_index]["unit"],
            )
            for s in self.sales
            if s.drawn_index is not None
        ]

    def draws_file(self) -> bytes:
        records = self.records()
        values = {(r.chain_id, r.round): self.beacon.link(r.round) for r in records}
        return encode_draw_file(BLOCK_ID, self.size, [self.chain_document], values, records)

    def disclosure(self) -> dict[str, Any]:
        return make_disclosure(self.commitment, BLOCK_KEY, self.tiers, self.operator.public_key)

    def resign(self, document: dict[str, Any], kind: str = "receipt") -> dict[str, Any]:
        return self.operator.sign_document(kind, document)

    def unit_part(self, unit: int) -> dict[str, Any]:
        tier = self.tiers[unit]
        salt = unit_salt(BLOCK_KEY, unit)
        chunk = unit // CHUNK_LEAVES * CHUNK_LEAVES
        chunk_tiers = self.tiers[chunk : chunk + CHUNK_LEAVES]
        path = unit_audit_path(
            BLOCK_ID, BLOCK_KEY, unit, chunk_tiers, self.tree.chunk_roots, self.prizes
        )
        return {
            "position": unit,
            "tier": tier,
            "prize_cents": self.prizes[tier],
            "salt": salt.hex(),
            "choice": None,
            "path": [node.hex() for node in path],
            "ticket": design_unit(self.game, salt, self.prizes[tier], None),
        }

    def proof(self, n: int, size: int | None = None) -> dict[str, Any]:
        """Sale n's ticket proof, format 2 with its draw, against the head of ``size``."""
        size = len(self.entries) if size is None else size
        sale = self.sales[n]
        assert sale.drawn_index is not None, f"sale {n} is not drawn"
        drawn = self.entries[sale.drawn_index]
        unit = self.unit_part(drawn["unit"])
        beacon = (drawn["beacon"]["chain_id"], drawn["beacon"]["round"])
        pairs = self.cosigned.get(beacon[1], [])
        covering = [p for p in pairs if p["sth"]["tree_size"] > sale.receipt_index]
        pair = (covering or pairs)[0]

        def setter(sequence: int | None) -> dict[str, Any] | None:
            if sequence is None:
                return None
            at = self.sales[sequence].drawn_index
            assert at is not None
            return self.logged(at, size)

        return {
            "format": "grattage-ticket-proof/2",
            "operator_key": self.operator.public_key.hex(),
            "commitment": self.commitment,
            "receipt": sale.receipt,
            "unit": {k: v for k, v in unit.items() if k != "ticket"},
            "ticket": unit["ticket"],
            "log": {
                "sth": self.head(size).to_json(),
                "commitment_entry": self.logged(self.commitment_index, size),
                "receipt_entry": self.logged(sale.receipt_index, size),
            },
            "draw": {
                "drawn_entry": self.logged(sale.drawn_index, size),
                "previous_entry": self.logged(self.sales[n - 1].receipt_index, size) if n else None,
                "n_set_entry": setter(drawn["n_set_by"]),
                "j_set_entry": None if drawn["slot"] == n else setter(drawn["j_set_by"]),
                "chain": self.chain_document,
                "round": self.round_document(beacon[1]),
                "cosigned": pair,
                "consistency": self.consistency(pair["sth"]["tree_size"], size),
            },
        }
