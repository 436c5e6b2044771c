"""The independent witness (docs/witness.md): a beacon of hash-chain rounds, and cosignatures
of the operator's tree heads given only before the round they are for is published.

Run by a regulator or an auditor, never by the operator: its own key, storage (the
:class:`WitnessStore` port) and settings. Rounds are not stored: round ``r`` of a chain *is*
link ``r`` of the chain, published once the clock passes its time; what the witness must
remember is its chains (seed kept secret), every head it cosigned, and how far its clock went.

The clock never goes back here: a witness restarted with a clock set earlier would otherwise
hand out a cosignature for a round it had already published. It runs on
``max(wall clock, the furthest time it ever stored)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from grattage.blocks.beacon import (
    CHAIN_KIND,
    COSIGNATURE_KIND,
    ROUND_KIND,
    BeaconChain,
    BeaconRound,
    Cosignature,
    chain_id_of,
)
from grattage.blocks.hashchain import HashChain
from grattage.blocks.signing import Signer, TreeHead
from grattage.blocks.tlog import verify_consistency
from grattage.errors import Conflict, InconsistentHead, InvalidInput, NotFound, RoundClosed

AHEAD_PERIODS = 2
"""A head is cosigned for a round at most this many periods before the round is published."""
ROUNDS_KEPT = 64


@dataclass(frozen=True)
class StoredChain:
    chain: BeaconChain
    document: dict[str, Any]
    """The signed ``beacon-chain`` document, as first published."""


@dataclass(frozen=True)
class CosignedHead:
    chain_id: str
    round: int
    tree_size: int
    root_hash: bytes
    time_ms: int
    sth: dict[str, Any]
    cosignature: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"sth": self.sth, "cosignature": self.cosignature}


class WitnessStore(Protocol):
    """The witness's storage: its key, its chains and their secret seeds, its cosignatures."""

    def signing_key(self) -> bytes: ...

    def chains(self) -> list[StoredChain]:
        """Every chain, oldest first."""
        ...

    def chain_seed(self, chain_id: str) -> bytes: ...

    def add_chain(self, stored: StoredChain, seed: bytes) -> None: ...

    def cosign_atomically(
        self, decide: Callable[[CosignedHead | None], CosignedHead]
    ) -> CosignedHead:
        """In one transaction that excludes every other cosigning: read the last head
        cosigned, call ``decide`` (which raises to refuse), store what it returns."""
        ...

    def cosigned_for(self, chain_id: str, round_number: int) -> list[CosignedHead]: ...

    def last_cosigned(self) -> CosignedHead | None: ...

    def clock_floor_ms(self) -> int:
        """The furthest time the witness ever stored (its clock never goes back before it)."""
        ...

    def raise_clock_floor(self, time_ms: int) -> None: ...


def initialise(store: WitnessStore, now_ms: int, period_ms: int, length: int) -> StoredChain:
    """A new witness's first chain, its round 1 one period from now."""
    if store.chains():
        raise Conflict("this witness is already initialised: it has a chain")
    return _new_chain(store, Signer(store.signing_key()), now_ms + period_ms, period_ms, length)


def _new_chain(
    store: WitnessStore, signer: Signer, start_ms: int, period_ms: int, length: int
) -> StoredChain:
    hash_chain, head = HashChain.create(length)
    chain = BeaconChain(chain_id_of(head), head, length, start_ms, period_ms)
    document = signer.sign_document(CHAIN_KIND, chain.unsigned_document(signer.key_id))
    stored = StoredChain(chain, document)
    store.add_chain(stored, hash_chain.seed)
    return stored


class Witness:
    """The witness's use cases; ``clock`` gives the wall-clock time in milliseconds."""

    def __init__(
        self,
        store: WitnessStore,
        clock: Callable[[], int],
        operator_key: bytes,
        period_ms: int,
        chain_length: int,
    ) -> None:
        self._store = store
        self._clock = clock
        self._operator_key = operator_key
        self._period_ms = period_ms
        self._length = chain_length
        self._signer = Signer(store.signing_key())
        self._lock = threading.Lock()
        self._floor = store.clock_floor_ms()
        self._chains: list[StoredChain] = store.chains()
        if not self._chains:
            raise InvalidInput("the witness has no chain yet: run `grattage witness init`")
        self._links: dict[str, HashChain] = {}
        self._rounds: dict[tuple[str, int], dict[str, Any]] = {}
        self._rounds_lock = threading.Lock()
        self._sealed_ms = self._floor
        """Every round up to this time is sealed: no cosigning for it is still under way."""
        # Rebuilding a chain's checkpoints walks it whole (2.6 M hashes by default): only the
        # chains still in use are rebuilt now, a finished one the first time it is asked.
        now = self.now_ms()
        for stored in self._chains:
            if stored.chain.end_ms() > now or stored is self._chains[-1]:
                self._load(stored)

    def _load(self, stored: StoredChain) -> HashChain:
        chain = stored.chain
        hash_chain, head = HashChain.create(chain.length, self._store.chain_seed(chain.chain_id))
        if head != chain.head:
            raise InvalidInput(f"the seed kept for chain {chain.chain_id} is not that chain's")
        self._links[chain.chain_id] = hash_chain
        return hash_chain

    def _hash_chain(self, stored: StoredChain) -> HashChain:
        loaded = self._links.get(stored.chain.chain_id)
        if loaded is None:
            with self._lock:
                loaded = self._links.get(stored.chain.chain_id) or self._load(stored)
        return loaded

    def now_ms(self) -> int:
        self._floor = max(self._floor, self._clock())
        return self._floor

    def tick(self) -> None:
        """Run every period or so: keep the next chain ready, remember how far the clock went."""
        self.ensure_next_chain()
        self._store.raise_clock_floor(self.now_ms())

    def ensure_next_chain(self) -> None:
        """Publish the next chain before the current one runs out (or after a long stop)."""
        with self._lock:
            now, last = self.now_ms(), self._chains[-1].chain
            if last.end_ms() - now > AHEAD_PERIODS * self._period_ms:
                return
            start = max(last.end_ms(), now + self._period_ms)
            stored = _new_chain(self._store, self._signer, start, self._period_ms, self._length)
            self._load(stored)
            self._chains.append(stored)

    # -- reading -------------------------------------------------------------------------

    def key(self) -> dict[str, str]:
        return {
            "algorithm": "Ed25519",
            "public_key": self._signer.public_key.hex(),
            "key_id": self._signer.key_id,
        }

    def _current(self) -> StoredChain:
        now = self.now_ms()
        started = [stored for stored in self._chains if stored.chain.start_ms <= now]
        return started[-1] if started else self._chains[0]

    def _chain(self, chain_id: str | None) -> StoredChain:
        if chain_id is None:
            return self._current()
        for stored in self._chains:
            if stored.chain.chain_id == chain_id:
                return stored
        raise NotFound(f"this witness has no chain {chain_id!r}")

    def chain_document(self, chain_id: str | None = None) -> dict[str, Any]:
        return self._chain(chain_id).document

    def chain_documents(self) -> list[dict[str, Any]]:
        return [stored.document for stored in self._chains]

    def round_wait_seconds(self, round_number: int, chain_id: str | None = None) -> float:
        """How long until the round is published (0 if it is); NotFound if more than two
        periods away (a long poll waits no longer)."""
        chain = self._chain(chain_id).chain
        _check_round_number(chain, round_number)
        wait_ms = chain.round_time_ms(round_number) - self.now_ms()
        if wait_ms > AHEAD_PERIODS * chain.period_ms:
            raise NotFound(f"round {round_number} is not published yet")
        return max(0, wait_ms) / 1000

    def round_document(self, round_number: int, chain_id: str | None = None) -> dict[str, Any]:
        stored = self._chain(chain_id)
        chain = stored.chain
        _check_round_number(chain, round_number)
        time_ms = chain.round_time_ms(round_number)
        if self.now_ms() < time_ms:
            raise NotFound(f"round {round_number} is not published yet")
        self._seal(time_ms)
        cached = self._rounds.get((chain.chain_id, round_number))
        if cached is not None:
            return cached
        value = self._hash_chain(stored).link(round_number)
        published = BeaconRound(chain.chain_id, round_number, value, time_ms)
        document = self._signer.sign_document(
            ROUND_KIND, published.unsigned_document(self._signer.key_id)
        )
        # Every worker of the operator asks for the same few rounds: each is made once (up to
        # 4 095 hashes and a signature) and kept while it is among the newest.
        with self._rounds_lock:
            self._rounds[chain.chain_id, round_number] = document
            while len(self._rounds) > ROUNDS_KEPT:
                del self._rounds[next(iter(self._rounds))]
        return document

    def latest_round_document(self) -> dict[str, Any]:
        stored = self._current()
        chain = stored.chain
        elapsed = self.now_ms() - chain.start_ms
        if elapsed < 0:
            raise NotFound("no round is published yet")
        return self.round_document(
            min(chain.length, elapsed // chain.period_ms + 1), chain.chain_id
        )

    def _seal(self, time_ms: int) -> None:
        """Before a round's value or its list of cosigned heads is given once its time has come:
        wait for every cosigning that decided before that time to be stored. A cosigning reads
        the clock inside its write transaction and commits a moment later; a round published in
        that moment, with a list read before the commit, left out a head the witness had signed
        for it (CI: the operator drew that head's receipts late, with the next round, and the
        monitor, reading the list later, rightly called it a round the operator chose). Raising
        the stored clock floor is a write transaction of its own: it starts once every earlier
        one has committed, and any cosigning after it reads a clock past the round."""
        if self._sealed_ms >= time_ms:
            return
        self._store.raise_clock_floor(time_ms)
        self._sealed_ms = max(self._sealed_ms, time_ms)

    def cosigned(self, round_number: int, chain_id: str | None = None) -> list[dict[str, Any]]:
        chain = self._chain(chain_id).chain
        _check_round_number(chain, round_number)
        round_time = chain.round_time_ms(round_number)
        if self.now_ms() >= round_time:  # the round is out: its list is final once sealed
            self._seal(round_time)
        return [head.to_json() for head in self._store.cosigned_for(chain.chain_id, round_number)]

    def last_cosigned(self) -> dict[str, Any]:
        last = self._store.last_cosigned()
        if last is None:
            raise NotFound("this witness has cosigned no tree head yet")
        return last.to_json()

    # -- cosigning -----------------------------------------------------------------------

    def cosign(
        self,
        sth: Mapping[str, Any],
        round_number: int,
        consistency: Sequence[str],
        chain_id: str | None = None,
    ) -> dict[str, Any]:
        """Cosign the operator's head for a round not yet published, if it extends the last
        head cosigned (RFC 9162 consistency proof ``consistency``, from that head to this)."""
        head = TreeHead.from_json(sth)
        head.check(self._operator_key)
        proof = _hex_nodes(consistency)
        chain = self._chain(chain_id).chain
        _check_round_number(chain, round_number)
        round_time = chain.round_time_ms(round_number)

        def decide(last: CosignedHead | None) -> CosignedHead:
            now = self.now_ms()  # read inside the transaction: no round slips in between
            if now >= round_time:
                raise RoundClosed(f"round {round_number} is already published")
            if round_time - now > AHEAD_PERIODS * chain.period_ms:
                raise RoundClosed(f"round {round_number} is more than two periods ahead")
            if last is not None:
                _check_extends(last, head, proof)
            signed = Cosignature(
                chain.chain_id,
                round_number,
                head.tree_size,
                head.root_hash,
                head.timestamp_ms,
                now,
            )
            cosignature = self._signer.sign_document(
                COSIGNATURE_KIND, signed.unsigned_document(self._signer.key_id)
            )
            return CosignedHead(
                chain.chain_id,
                round_number,
                head.tree_size,
                head.root_hash,
                now,
                head.to_json(),
                cosignature,
            )

        return self._store.cosign_atomically(decide).cosignature


def _check_round_number(chain: BeaconChain, round_number: int) -> None:
    if not 1 <= round_number <= chain.length:
        raise InvalidInput(f"a round of this chain is 1 to {chain.length}, got {round_number}")


def _hex_nodes(nodes: Sequence[str]) -> list[bytes]:
    try:
        proof = [bytes.fromhex(node) for node in nodes]
    except (TypeError, ValueError):
        raise InvalidInput("a consistency proof is a list of hex SHA-256 hashes") from None
    if any(len(node) != 32 for node in proof):
        raise InvalidInput("a consistency proof is a list of hex SHA-256 hashes")
    return proof


def _check_extends(last: CosignedHead, head: TreeHead, proof: list[bytes]) -> None:
    if head.tree_size < last.tree_size:
        raise InconsistentHead(
            f"a head of size {head.tree_size} is older than the head of size "
            f"{last.tree_size} already cosigned"
        )
    if head.tree_size == last.tree_size and head.root_hash != last.root_hash:
        raise InconsistentHead(
            f"a split view: another root for the size {head.tree_size} already cosigned"
        )
    if not verify_consistency(
        last.tree_size, head.tree_size, last.root_hash, head.root_hash, proof
    ):
        raise InconsistentHead(
            f"the head of size {head.tree_size} does not extend the head of size "
            f"{last.tree_size} already cosigned (consistency proof refused)"
        )
