"""The drawer: the leader's loop that has the log's heads cosigned before the rounds their
sales name, and draws each round's sales once it is published (docs/draw.md, "The draw in the
platform").

Every server process runs one (:meth:`Drawer.step`, from a thread of the entry point): each
keeps the witness's health fresh for its own sales; the one that holds the lease (a row taken
with a conditional write, renewed while it lives) also cosigns and draws. The lease only saves
work: cosigning twice is harmless (heads only grow) and every draw is a conditional write.
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

from grattage.blocks.signing import TreeHead
from grattage.errors import (
    Conflict,
    InconsistentHead,
    NotFound,
    RoundClosed,
    Unavailable,
    VerificationFailed,
)
from grattage.service import transparency
from grattage.service.context import Platform
from grattage.service.draw_port import WitnessPort
from grattage.service.draw_sale import round_for_sale
from grattage.service.drawing import PublishedRound, draw_round

log = logging.getLogger("grattage.drawer")

LEASE_MS = 3000
TICK_MS = 25
"""How often the leader looks for receipts to have cosigned (at most: a quarter period)."""
COSIGN_GUARD_MS = 5
"""A round this close to its time is not asked for (the witness would refuse it as closed)."""
AHEAD_PERIODS = 2
"""The witness cosigns for a round at most two periods before it (docs/witness.md)."""


@dataclass
class Drawer:
    platform: Platform
    holder: str = field(default_factory=lambda: secrets.token_hex(8))
    lease_ms: int = LEASE_MS
    _lease_until: int = 0
    _polled_at: int = 0
    _cosigned: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    """Per round: the largest head cosigned for it, and when."""
    _own_cosignatures: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    """Per round: the witness's cosignature of the largest head it cosigned for this drawer,
    as the witness lists them (``{"sth", "cosignature"}``)."""
    _last_cosigned: TreeHead | None = None
    _last_known: bool = False
    _drawn_through_ms: int = 0
    _draw_failing_since: int | None = None
    """When the drawing half's turns started failing (beacon ms); None while they succeed."""
    _refused_since: int | None = None
    """When the witness started refusing this log's heads (another key pinned, a head it
    finds inconsistent); None once it cosigns again."""
    _lease_lock: threading.Lock = field(default_factory=threading.Lock)
    _witness_away: bool = False
    """Said once per outage: the witness did not answer, and has not answered since."""
    _away_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def witness(self) -> WitnessPort:
        witness = self.platform.witness
        assert witness is not None, "a drawer needs a witness"
        return witness

    def _period_ms(self) -> int:
        chains = self.witness.chains()
        return chains[-1].period_ms if chains else 1000

    def poll_only(self) -> float:
        """A turn of a process that never leads: keep the witness's health fresh."""
        self._poll()
        return self._period_ms() / 2000

    def _poll(self) -> None:
        now = self.witness.now_ms()
        if now - self._polled_at >= self._period_ms() // 2:
            self._polled_at = now
            try:
                self.witness.poll()
            except Unavailable as error:
                self.witness_unavailable(error)
            else:
                self._witness_answered()

    def witness_unavailable(self, error: Unavailable) -> None:
        """The witness did not answer (a poll, a cosignature, a round): say so once for the
        whole outage, not at every turn. Nothing is drawn meanwhile — a draw needs the round."""
        with self._away_lock:
            if self._witness_away:
                return
            self._witness_away = True
        log.warning("%s: waiting for it (no sale is drawn without its round)", error.message)

    def _witness_answered(self) -> None:
        with self._away_lock:
            if not self._witness_away:
                return
            self._witness_away = False
        log.warning("the witness answers again: cosigning and drawing resume")

    def step(self) -> float:
        """One turn of both halves (one thread): seconds until the next turn."""
        return min(self.cosign_turn(), self.draw_turn())

    def cosign_turn(self) -> float:
        """The cosigning half's turn: poll the witness (twice a period) and, if this process
        leads, integrate and have the heads cosigned. Seconds until the next turn. It runs
        apart from the drawing half, so that a long draw never lets a round pass uncosigned."""
        self._poll()
        # A drawer whose heads the witness refuses gives up the lease (:meth:`stuck`) but
        # keeps asking, and leads again once a head is cosigned.
        if not self.lead() and self._refused_since is None:
            return self._period_ms() / 2000
        self.cosign()
        return min(TICK_MS, self._period_ms() // 4) / 1000

    def draw_turn(self) -> float:
        """The drawing half's turn: if this process leads, draw what is published. A drawer
        whose draws keep failing gives up the lease (:meth:`lead`) but keeps trying, without
        it (every draw is a conditional write), and leads again once a draw succeeds."""
        if not self.lead() and self._draw_failing_since is None:
            return self._period_ms() / 2000
        try:
            self.draw()
        except Exception:
            if self._draw_failing_since is None:
                self._draw_failing_since = self.witness.now_ms()
            raise
        self._draw_failing_since = None
        return min(TICK_MS, self._period_ms() // 4) / 1000

    def stuck(self, now_ms: int) -> bool:
        """Whether the draws have failed, or the witness has refused every head, for a whole
        lease: this drawer draws nothing, and must not hold the lease that lets sales be
        taken (service/drawer_seen.py). An outsider's finding: after a key rotation the
        witness, still pinned to the old key, refused every head while sales went on, none
        of them ever drawn."""
        return any(
            since is not None and now_ms - since >= self.lease_ms
            for since in (self._draw_failing_since, self._refused_since)
        )

    def _refused(self) -> None:
        if self._refused_since is None:
            self._refused_since = self.witness.now_ms()

    def lead(self) -> bool:
        """Take or renew the lease (when half of it is gone); whether this drawer leads.
        Never while it is stuck: its lease then runs out, and drawn sales stop."""
        with self._lease_lock:
            now = self.witness.now_ms()
            if self.stuck(now):
                self._lease_until = 0
                return False
            if now < self._lease_until - self.lease_ms // 2:
                return True
            with self.platform.uow.write() as repos:
                held = repos.draws.take_lease(self.holder, now, now + self.lease_ms)
            self._lease_until = now + self.lease_ms if held else 0
            if held:
                self.platform.drawer_seen.saw(self._lease_until)
            if not held:  # another process leads: what this one knew of the witness may be old
                self._last_known = False
            return held

    # -- cosigning -----------------------------------------------------------------------

    def cosign(self) -> int:
        """Integrate the queue, and have the head cosigned for every round not yet published
        that waiting receipts name (a late receipt: the next round). How many cosignatures."""
        platform, witness = self.platform, self.witness
        with platform.uow.read() as repos:
            queued = repos.log.queued_count()
            rounds = repos.draws.pending_rounds(2**62)
        if queued:  # a round, not until the queue is empty: under load that chased sales
            transparency.integrate_round(platform)
        now, chains = witness.now_ms(), witness.chains()
        if not rounds or not chains:  # no chain known: the witness was away since the start
            return 0
        try:
            head = transparency.current_head(platform)
        except NotFound:
            return 0
        targets: set[tuple[str, int, int]] = set()
        for chain_id, number, round_ms in rounds:
            if round_ms - now > COSIGN_GUARD_MS:
                targets.add((chain_id, number, round_ms))
            else:  # its round is out and it was not covered in time: the next round draws it
                targets.add(round_for_sale(chains, now, COSIGN_GUARD_MS + 1, None))
        period = self._period_ms()
        done = 0
        for chain_id, number, round_ms in sorted(targets, key=lambda target: target[2]):
            if round_ms - now > AHEAD_PERIODS * period:
                continue  # too early for the witness: a later turn asks
            size, at = self._cosigned.get((chain_id, number), (-1, 0))
            if size >= head.tree_size:
                continue
            # Not at every turn: every tenth of a period, and at every turn of the last fifth
            # before the round (what the sales of its last moments need), so that a round
            # gathers about a dozen cosigned heads, not one per turn.
            if now - at < period // 10 and round_ms - now > period // 5:
                continue
            done += self._cosign(head, chain_id, number, now)
        return done

    def _cosign(self, head: TreeHead, chain_id: str, number: int, now: int) -> int:
        witness = self.witness
        if not self._last_known:
            self._last_cosigned = witness.last_cosigned_head()
            self._last_known = True
        last = self._last_cosigned
        proof: list[bytes] = []
        if last is not None and 0 < last.tree_size < head.tree_size:
            answer = transparency.consistency(self.platform, last.tree_size, head.tree_size)
            proof = [bytes.fromhex(node) for node in answer["proof"]]
        try:
            document, _ = witness.cosign(head, number, proof, chain_id)
        except RoundClosed as refused:
            log.info("round %d: %s", number, refused.message)
            return 0
        except (InconsistentHead, Conflict) as refused:
            self._last_known = False  # another leader moved it: read it again next time
            self._refused()
            log.warning("the witness refused the head of size %d: %s", head.tree_size, refused)
            return 0
        except VerificationFailed as refused:  # it pins another key: a rotation, not restarted
            self._refused()
            log.warning(
                "the witness refused the head of size %d: %s (after a key rotation the witness "
                "is restarted with the key in force: docs/witness.md)",
                head.tree_size,
                refused.message,
            )
            return 0
        self._refused_since = None
        self._cosigned[chain_id, number] = (head.tree_size, now)
        self._own_cosignatures[chain_id, number] = {"sth": head.to_json(), "cosignature": document}
        self._last_cosigned = head
        if len(self._cosigned) > 256:
            for key in sorted(self._cosigned)[:128]:
                del self._cosigned[key]
                self._own_cosignatures.pop(key, None)
        return 1

    # -- drawing -------------------------------------------------------------------------

    def draw(self) -> int:
        """Draw every published round that waiting sales name, or that may cover late ones,
        in time order. How many sales were drawn."""
        platform, witness = self.platform, self.witness
        total = 0
        while True:
            with platform.uow.read() as repos:
                earliest = repos.draws.earliest_round()
            chains = witness.chains()
            if earliest is None or not chains:  # no chain known yet: the witness was away
                return total
            target = max(earliest[2], self._drawn_through_ms + 1)
            chain_id, number, round_ms = round_for_sale(chains, target, 0, None)
            if round_ms > witness.now_ms():
                return total
            total += draw_round(platform, self.published(chain_id, number, round_ms))
            self._drawn_through_ms = round_ms

    def _with_own_cosignature(
        self, chain_id: str, number: int, listed: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The witness's list of the round's cosigned heads, with the one it cosigned for this
        drawer if the list lacks a head as large (outsider finding: a list short of it, from a
        faulty witness or a proxy that dropped it, made the drawer draw those receipts late,
        with the next round, once this round's value was public — a second draw). Drawn with
        the cosignature it holds, they are drawn on time, and the cosignature is logged."""
        own = self._own_cosignatures.get((chain_id, number))
        if own is None:
            return listed
        largest = max((int(pair["sth"]["tree_size"]) for pair in listed), default=0)
        if int(own["sth"]["tree_size"]) <= largest:
            return listed
        log.warning(
            "the witness lists no head for round %d as large as the one it cosigned for this "
            "drawer (size %d): drawing with that cosignature",
            number,
            own["sth"]["tree_size"],
        )
        return [*listed, own]

    def published(self, chain_id: str, number: int, round_ms: int) -> PublishedRound:
        """The round, signed and checked, and every head the witness cosigned for it."""
        witness = self.witness
        document, checked = witness.round_document(number, chain_id, wait=True)
        cosigned = self._with_own_cosignature(chain_id, number, witness.cosigned(number, chain_id))
        keys = transparency.key_chain(self.platform)  # a head before a rotation: the old key
        heads = [TreeHead.from_json(pair["sth"]) for pair in cosigned]
        for head in heads:  # each one of this log's own heads, with the key in force at its size
            keys.check_head(head)
        largest = max(heads, key=lambda head: head.tree_size, default=None)
        # the one that decides what the round covers must be this log as it is here (the
        # others extend to it: the witness cosigned each only if consistent with the last)
        if largest is not None and (
            transparency.root_of_size(self.platform, largest.tree_size) != largest.root_hash
        ):
            raise VerificationFailed(
                f"the witness cosigned for round {number} a head of size {largest.tree_size} "
                "that is not this log's"
            )
        return PublishedRound(
            chain_id=chain_id,
            round=number,
            round_ms=round_ms,
            value=checked.value,
            document=document,
            chain_document=witness.chain_document(chain_id),
            cosigned=cosigned,
        )
