"""What a monitor checks of the draw, entry by entry (docs/fairness.md, "Drawn blocks";
docs/draw.md) — standard library and ``cryptography`` only, kept in the monitor's state.

* every ``beacon.chain``: signed by the witness key of a drawn block's commitment, once;
* every ``draw.round``: the round signed by that witness, on its chain's schedule, its value
  hashing down to the last round checked of its chain (or the head), once, in increasing
  order; each head it lists signed by the operator and cosigned by the witness before the
  round's time, of the log before this entry — the largest kept, for the monitor to check it is
  a prefix of the head it accepts (all cosigned heads extend one another: the witness checks);
* every receipt v2 of a drawn block: its ``previous`` the hash of the block's last receipt (of
  the commitment for the first), its round never earlier than the previous receipt's, and —
  checked at its draw, once its chain is logged — the round the rule gives for its ``time``
  and the previous receipt's round (blocks/round_rule.py: exactly with the server's margin,
  ``margin_ms``, else what holds for every margin up to a period);
* every ``sale.drawn``: in index order without a gap, of a receipt logged (the index and H
  agree), with a round logged whose cosigned heads cover the receipt (its own round, or, if
  late, a later one no earlier logged round covered it for), a link that hashes to the block's
  previous link (``d_0`` first), the slot re-derived from the round, the link and H, and the
  unit, the unit of slot j and both setters as the block's permutation has them;
* every ``disclosure.published``: a drawn block's names its draws file's SHA-256
  (``draws_sha256``, 64 lowercase hex), another block's has no such member;
* on time: a receipt with no resolution ``late_rounds`` rounds after its round (by the
  witness's latest round, or the head's time) is a violation. A resolution late beyond the
  rule is one too, named the same way: its round is logged (and checked) before its
  ``sale.drawn``, and that round is already past the receipt's due time.

Every rule but the timing one stops the check at its entry. A timing violation stops it too
unless ``record_timing`` is set (the monitor): it is then recorded (``timing_violations``,
the receipt's entry index and the reason, kept in the state) and the check goes on, so that
one honest outage does not hide every later entry (docs/fairness.md, "The monitor").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from grattage.blocks.beacon import BeaconChain, check_chain, check_cosignature, check_round
from grattage.blocks.draw import draw_index
from grattage.blocks.draw_state import (
    NONE,
    ChainSeen,
    DrawnBlock,
    block_json,
    block_of,
    chains_json,
    chains_of,
)
from grattage.blocks.key_history import KeyChain
from grattage.blocks.round_rule import check_round_rule
from grattage.blocks.signing import TreeHead, canonical_json
from grattage.errors import VerificationFailed

LATE_ROUNDS = 10
LATE_MIN_MS = 10_000
"""A receipt is overdue ``LATE_ROUNDS`` rounds after its round, and never sooner than 10 s
after it (with rounds of 0.1 s, ten rounds are less than a loaded drawer's turn)."""
ROUNDS_KEPT = 512
"""Rounds remembered per chain (value, largest head covered): draws follow their round."""
DRAW_VERSION = "grattage-draw/1"
HEX_DIGITS = frozenset("0123456789abcdef")


class DrawAudit:
    def __init__(self, late_rounds: int = LATE_ROUNDS) -> None:
        self.late_rounds = late_rounds
        self.chains: dict[str, ChainSeen] = {}
        self.blocks: dict[str, DrawnBlock] = {}
        self.largest_cosigned: TreeHead | None = None
        self.latest_round_ms = 0
        self.margin_ms: int | None = None
        """The server's draw margin, if known: receipts' rounds are then checked exactly."""
        self.record_timing = False
        """Record a timing violation and go on (the monitor), instead of stopping there."""
        self.timing_violations: dict[int, str] = {}
        """The timing violations recorded: the receipt's entry index, and the reason."""
        self.late: list[tuple[str, int, int, str, int, str, int]] = []
        """Late draws not yet checked against the witness: (block, n, receipt index, the
        receipt's chain and round, the chain and round drawn with)."""

    # -- entries -------------------------------------------------------------------------
    def commitment(self, commitment: Mapping[str, Any]) -> None:
        if commitment.get("draw") is None:
            return
        if commitment["draw"] != DRAW_VERSION:
            raise VerificationFailed(f"a drawn block's draw is {DRAW_VERSION}")
        head = bytes.fromhex(commitment["chain_head"])
        if commitment["chain_length"] != commitment["size"] or len(head) != 32:
            raise VerificationFailed("a drawn block's chain is as long as the block")
        self.blocks[commitment["block_id"]] = DrawnBlock(
            size=commitment["size"],
            chain_head=head,
            witness_key=bytes.fromhex(commitment["witness_key"]),
            last_receipt=_sha256(canonical_json(commitment)),
            last_link=head,
        )

    def chain(self, document: Mapping[str, Any]) -> None:
        keys = {block.witness_key for block in self.blocks.values()}
        for key in sorted(keys):
            try:
                chain = check_chain(document, key)
            except VerificationFailed:
                continue
            if chain.chain_id in self.chains:
                raise VerificationFailed(f"chain {chain.chain_id[:16]}… logged twice")
            self.chains[chain.chain_id] = ChainSeen(chain, key, 0, chain.head)
            return
        raise VerificationFailed("a beacon chain no drawn block's witness signed")

    def round(self, entry: Mapping[str, Any], keys: KeyChain, log_size: int) -> None:
        document = entry["round"]
        seen = self.chains.get(document.get("chain_id"))
        if seen is None:
            raise VerificationFailed("a round of a chain not logged before it")
        checked = check_round(
            document, seen.chain, seen.witness_key, (seen.last_round, seen.last_value)
        )
        if checked.round <= seen.last_round:
            raise VerificationFailed(f"round {checked.round} logged again, or out of order")
        covered = 0
        for pair in entry["cosigned"]:
            head = TreeHead.from_json(pair["sth"])
            keys.check_head(head)  # the key in force at its size, an old one perhaps
            cosignature = check_cosignature(pair["cosignature"], seen.witness_key, head, seen.chain)
            if cosignature.round != checked.round or cosignature.chain_id != checked.chain_id:
                raise VerificationFailed(
                    f"a head listed for round {checked.round} was cosigned for another"
                )
            if head.tree_size > log_size:
                raise VerificationFailed(
                    "a head cosigned for the round is larger than the log before it"
                )
            covered = max(covered, head.tree_size)
            if self.largest_cosigned is None or head.tree_size > self.largest_cosigned.tree_size:
                self.largest_cosigned = head
        seen.last_round, seen.last_value = checked.round, checked.value
        seen.rounds[checked.round] = (checked.value, covered)
        for old in sorted(seen.rounds)[:-ROUNDS_KEPT]:
            del seen.rounds[old]
        self.latest_round_ms = max(self.latest_round_ms, checked.time_ms)
        self.check_on_time(self.latest_round_ms)

    def receipt(self, index: int, receipt: Mapping[str, Any]) -> None:
        block = self.blocks.get(receipt["block_id"])
        if block is None:
            raise VerificationFailed("a receipt v2 for a block that is not drawn")
        if bytes.fromhex(receipt["previous"]) != block.last_receipt:
            raise VerificationFailed(
                f"receipt {receipt['sequence']} does not chain on the block's previous receipt: "
                "a receipt was inserted, removed or changed"
            )
        beacon = (str(receipt["beacon"]["chain_id"]), int(receipt["beacon"]["round"]))
        if block.last_beacon is not None and self._earlier(beacon, block.last_beacon):
            raise VerificationFailed(f"receipt {receipt['sequence']} names an earlier round")
        block.last_beacon = beacon
        receipt_hash = _sha256(canonical_json(receipt))
        block.last_receipt = receipt_hash
        block.pending[receipt["sequence"]] = (
            index,
            receipt_hash,
            *beacon,
            _time_ms(receipt["time"]),
        )

    def drawn(self, entry: Mapping[str, Any]) -> None:
        block = self.blocks.get(entry["block_id"])
        if block is None:
            raise VerificationFailed("a draw of a block that is not drawn")
        n = entry["sequence"]
        if n != block.next_drawn:
            raise VerificationFailed(
                f"draw {n!r} where draw {block.next_drawn} was next: out of order"
            )
        if n not in block.pending:
            raise VerificationFailed(f"draw {n} of a receipt not logged before it")
        receipt_index, receipt_hash, chain_id, number, _ = block.pending[n]
        if (
            entry["receipt_index"] != receipt_index
            or bytes.fromhex(entry["receipt_sha256"]) != receipt_hash
        ):
            raise VerificationFailed(f"draw {n} names another receipt than the one logged")
        previous = block.drawn_beacon
        check_round_rule(
            n,
            (chain_id, number),
            block.pending[n][4],
            None if previous is None else (previous, self._time(previous)),
            [seen.chain for seen in self.chains.values()],
            self.margin_ms,
        )
        beacon = (str(entry["beacon"]["chain_id"]), int(entry["beacon"]["round"]))
        value = self._covering_round(beacon, receipt_index, (chain_id, number), n)
        if beacon != (chain_id, number):
            self.late.append((entry["block_id"], n, receipt_index, chain_id, number, *beacon))
        link = bytes.fromhex(entry["link"])
        if len(link) != 32 or _sha256(link) != block.last_link:
            raise VerificationFailed(
                f"draw {n}: the link does not hash to the block's previous link"
            )
        block_id = bytes.fromhex(entry["block_id"])
        j = draw_index(value, link, block_id, n, block.size, receipt_hash)
        if entry["slot"] != j:
            raise VerificationFailed(
                f"draw {n}: the slot re-derived from its round, link and receipt is {j}, not "
                f"{entry['slot']!r}"
            )
        self._swap(block, n, j, entry)
        block.last_link = link
        block.drawn_beacon = (chain_id, number)
        del block.pending[n]
        block.next_drawn += 1

    def check_late_draws(
        self,
        cosigned: Callable[[int, str], list[dict[str, Any]]],
        chain_of: Callable[[str], BeaconChain],
    ) -> int:
        """Every late draw against the witness's own lists: no head it cosigned for a round
        from the receipt's to the one before the draw's may cover the receipt (rounds that
        drew nothing are not in the log, so only the witness can tell). How many checked."""
        for block_id, n, receipt_index, chain_id, number, late_chain, late_round in self.late:
            rounds = [
                (chain_id, r)
                for r in range(
                    number, late_round if late_chain == chain_id else chain_of(chain_id).length + 1
                )
            ]
            if late_chain != chain_id:
                rounds += [(late_chain, r) for r in range(1, late_round)]
            for round_chain, round_number in rounds:
                for pair in cosigned(round_number, round_chain):
                    if int(pair["sth"]["tree_size"]) > receipt_index:
                        raise VerificationFailed(
                            f"draw {n} of block {block_id[:16]}… was drawn late with round "
                            f"{late_round}, but the witness cosigned for round {round_number} a "
                            "head covering its receipt: it had to be drawn with that one"
                        )
        checked = len(self.late)
        self.late.clear()
        return checked

    def ended(self, block_id: str, units_sold: int) -> None:
        block = self.blocks.get(block_id)
        if block is None:
            return
        if block.next_drawn != units_sold:
            raise VerificationFailed(
                f"a drawn block ended with {units_sold - block.next_drawn} sales not drawn"
            )
        block.units = block.setters = None  # no draw reads them again

    def published(self, entry: Mapping[str, Any]) -> None:
        """A ``disclosure.published``: the shape of its ``draws_sha256`` (what a downloaded
        draws file is checked against is ``verify-block``'s)."""
        value = entry.get("draws_sha256")
        if entry["block_id"] not in self.blocks:
            if "draws_sha256" in entry:
                raise VerificationFailed("the disclosure of a block not drawn names draws_sha256")
            return
        if not (isinstance(value, str) and len(value) == 64 and set(value) <= HEX_DIGITS):
            raise VerificationFailed(
                f"a drawn block's disclosure names draws_sha256 {value!r}: not 64 lowercase hex"
            )

    # -- the rules -----------------------------------------------------------------------
    def _time(self, beacon: tuple[str, int]) -> int | None:
        seen = self.chains.get(beacon[0])
        return None if seen is None else seen.chain.round_time_ms(beacon[1])

    def _earlier(self, one: tuple[str, int], other: tuple[str, int]) -> bool:
        if one[0] == other[0]:
            return one[1] < other[1]
        times = self._time(one), self._time(other)
        return times[0] is not None and times[1] is not None and times[0] < times[1]

    def _covering_round(
        self, beacon: tuple[str, int], receipt_index: int, own: tuple[str, int], n: int
    ) -> bytes:
        seen = self.chains.get(beacon[0])
        if seen is None or beacon[1] not in seen.rounds:
            raise VerificationFailed(f"draw {n} uses round {beacon[1]}, not logged before it")
        value, covered = seen.rounds[beacon[1]]
        if covered <= receipt_index:
            raise VerificationFailed(
                f"draw {n}: no head cosigned for round {beacon[1]} covers its receipt (entry "
                f"{receipt_index}): it was logged after the round could be known"
            )
        if beacon != own:
            if not self._earlier(own, beacon):
                raise VerificationFailed(f"draw {n} is late with a round that is not later")
            for other in self.chains.values():
                for number, (_, size) in other.rounds.items():
                    at = (other.chain.chain_id, number)
                    if (
                        size > receipt_index
                        and not self._earlier(at, own)
                        and self._earlier(at, beacon)
                    ):
                        raise VerificationFailed(
                            f"draw {n} is late with round {beacon[1]}, but round {number} covered "
                            "its receipt: it had to be drawn with that one"
                        )
        return value

    def _swap(self, block: DrawnBlock, n: int, j: int, entry: Mapping[str, Any]) -> None:
        units, setters = block.permutation()
        unit_n, unit_j = units[n], units[j]
        claims = {
            "unit": (entry["unit"], unit_j),
            "slot_unit": (entry["slot_unit"], unit_n),
            "n_set_by": (entry["n_set_by"], None if setters[n] == NONE else setters[n]),
            "j_set_by": (entry["j_set_by"], None if setters[j] == NONE else setters[j]),
        }
        for name, (claimed, actual) in claims.items():
            if claimed != actual:
                raise VerificationFailed(
                    f"draw {n}: its {name} is {claimed!r}, the block's permutation says {actual!r}"
                )
        units[n], units[j] = unit_j, unit_n
        if j != n:
            setters[j] = n

    def check_on_time(self, now_ms: int) -> None:
        """Every receipt not drawn ``late_rounds`` rounds after its round is a violation."""
        for block_id, block in self.blocks.items():
            for n, (index, _, chain_id, number, time_ms) in block.pending.items():
                seen = self.chains.get(chain_id)
                if seen is None:
                    due = time_ms + max(self.late_rounds * 1000, LATE_MIN_MS)
                else:
                    allowance = max(self.late_rounds * seen.chain.period_ms, LATE_MIN_MS)
                    due = seen.chain.round_time_ms(number) + allowance
                if now_ms > due and index not in self.timing_violations:
                    reason = (
                        f"the receipt at entry {index} (block {block_id[:16]}…, sale {n}, round "
                        f"{number}) has no resolution {self.late_rounds} rounds (and 10 s) after "
                        "its round"
                    )
                    if not self.record_timing:
                        raise VerificationFailed(reason)
                    self.timing_violations[index] = reason

    # -- the state kept between runs -----------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "late_draws": [list(late) for late in self.late],
            "timing_violations": [
                [index, reason] for index, reason in sorted(self.timing_violations.items())
            ],
            "late_rounds": self.late_rounds,
            "latest_round_ms": self.latest_round_ms,
            "chains": chains_json(self.chains),
            "blocks": {block_id: block_json(block) for block_id, block in self.blocks.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> DrawAudit:
        audit = cls()
        if not data:
            return audit
        audit.late_rounds = data["late_rounds"]
        audit.late = [tuple(late) for late in data.get("late_draws", [])]
        audit.timing_violations = {
            int(index): str(reason) for index, reason in data.get("timing_violations", [])
        }
        audit.latest_round_ms = data["latest_round_ms"]
        audit.chains = chains_of(data["chains"])
        audit.blocks = {block_id: block_of(b) for block_id, b in data["blocks"].items()}
        return audit


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _time_ms(text: str) -> int:
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return (moment - datetime(1970, 1, 1)) // timedelta(milliseconds=1)  # exact: no float
