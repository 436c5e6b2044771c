"""A witness in the same process, behind the same port as the real one (tests, a quick demo).

It is the real witness's service (:class:`grattage.service.witness.Witness`) on its own store
and key, reached by calls instead of HTTP, and every document it answers is checked exactly as
the HTTP client checks them. Its clock is its own (by default one that only moves when told
to), so a test makes a round pass without waiting for it; ``up = False`` makes it unreachable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grattage.adapters.witness_store import SqliteWitnessStore
from grattage.blocks.beacon import (
    BeaconChain,
    BeaconRound,
    Cosignature,
    check_chain,
    check_cosignature,
    check_round,
)
from grattage.blocks.signing import Signer, TreeHead
from grattage.errors import NotFound, Unavailable
from grattage.service.witness import Witness, initialise

START_MS = 1_800_000_000_000


class ManualMsClock:
    """Milliseconds that move only when told to."""

    def __init__(self, start_ms: int = START_MS) -> None:
        self._ms = start_ms
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return self._ms

    def set(self, ms: int) -> None:
        with self._lock:
            self._ms = max(self._ms, ms)

    def advance(self, ms: int) -> None:
        with self._lock:
            self._ms += ms


class LocalWitness:
    def __init__(
        self,
        directory: Path,
        operator_key: bytes,
        *,
        period_ms: int = 1000,
        chain_length: int = 100_000,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.clock = clock or ManualMsClock()
        store = SqliteWitnessStore(directory, create=True)
        if not store.chains():
            initialise(store, self.clock(), period_ms, chain_length)
        self.service = Witness(store, self.clock, operator_key, period_ms, chain_length)
        self._store, self._period_ms, self._chain_length = store, period_ms, chain_length
        self._key = Signer(store.signing_key()).public_key
        self.up = True

    def restart(self, operator_key: bytes) -> None:
        """The witness restarted with the operator's new key, as after a rotation (it pins one
        key and does not follow rotations: docs/witness.md); its store is kept."""
        self.service = Witness(
            self._store, self.clock, operator_key, self._period_ms, self._chain_length
        )

    def _reach(self) -> None:
        if not self.up:
            raise Unavailable("the witness cannot be reached (it is down)")

    @property
    def witness_key(self) -> bytes:
        return self._key

    def now_ms(self) -> int:
        return self.clock()

    def healthy(self) -> bool:
        return self.up

    def chains(self) -> list[BeaconChain]:
        self.service.ensure_next_chain()
        return [check_chain(document, self._key) for document in self.service.chain_documents()]

    def _chain(self, chain_id: str) -> BeaconChain:
        return check_chain(self.service.chain_document(chain_id), self._key)

    def chain_document(self, chain_id: str) -> dict[str, Any]:
        return dict(self.service.chain_document(chain_id))

    def round_document(
        self, round_number: int, chain_id: str, wait: bool = False
    ) -> tuple[dict[str, Any], BeaconRound]:
        self._reach()
        document = self.service.round_document(round_number, chain_id)
        return dict(document), check_round(document, self._chain(chain_id), self._key)

    def cosign(
        self, head: TreeHead, round_number: int, consistency: Sequence[bytes], chain_id: str
    ) -> tuple[dict[str, Any], Cosignature]:
        self._reach()
        document = self.service.cosign(
            head.to_json(), round_number, [node.hex() for node in consistency], chain_id
        )
        checked = check_cosignature(document, self._key, head, self._chain(chain_id))
        return dict(document), checked

    def last_cosigned_head(self) -> TreeHead | None:
        self._reach()
        try:
            last = self.service.last_cosigned()
        except NotFound:
            return None
        return TreeHead.from_json(last["sth"])

    def cosigned(self, round_number: int, chain_id: str) -> list[dict[str, Any]]:
        self._reach()
        heads = self.service.cosigned(round_number, chain_id)
        chain = self._chain(chain_id)
        for pair in heads:
            check_cosignature(
                pair["cosignature"], self._key, TreeHead.from_json(pair["sth"]), chain
            )
        return [dict(pair) for pair in heads]

    def poll(self) -> None:
        self._reach()
