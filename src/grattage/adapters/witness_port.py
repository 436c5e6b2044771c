"""The witness as the draw uses it (:class:`grattage.service.draw_port.WitnessPort`), over the
HTTP client of :mod:`grattage.adapters.witness_client`, remembering when it last answered.

A sale is taken only while the witness is **healthy**: it answered this process within the
last three periods (at least 3 s); any call that finds it unreachable makes it unhealthy at
once, so that sales stop before the rounds they would name go by uncosigned. Each process
keeps it fresh by calling :meth:`HttpWitness.poll` about twice a period.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from grattage.adapters.witness_client import WitnessClient
from grattage.blocks.beacon import BeaconChain, BeaconRound, Cosignature
from grattage.blocks.signing import TreeHead
from grattage.errors import NotFound, Unavailable

HEALTHY_PERIODS = 3
HEALTHY_AT_LEAST_MS = 3000


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class HttpWitness:
    def __init__(self, client: WitnessClient, clock: Callable[[], int] = wall_clock_ms) -> None:
        self.client = client
        self._clock = clock
        self._lock = threading.Lock()
        self._answered_ms: int | None = None
        self._chains: dict[str, tuple[dict[str, Any], BeaconChain]] = {}

    @property
    def witness_key(self) -> bytes:
        return self.client.witness_key

    def now_ms(self) -> int:
        return self._clock()

    @contextmanager
    def _contact(self) -> Iterator[None]:
        try:
            yield
        except Unavailable:
            with self._lock:
                self._answered_ms = None
            raise
        with self._lock:
            self._answered_ms = self._clock()

    def healthy(self) -> bool:
        with self._lock:
            answered = self._answered_ms
        if answered is None or not self._chains:
            return False
        period = max(chain.period_ms for _, chain in self._chains.values())
        return self._clock() - answered <= max(HEALTHY_PERIODS * period, HEALTHY_AT_LEAST_MS)

    def chains(self) -> list[BeaconChain]:
        with self._lock:
            known = [chain for _, chain in self._chains.values()]
        return sorted(known, key=lambda chain: chain.start_ms)

    def chain_document(self, chain_id: str) -> dict[str, Any]:
        if chain_id not in self._chains:
            self._refresh_chains()
        try:
            return dict(self._chains[chain_id][0])
        except KeyError:
            raise NotFound(f"the witness has no chain {chain_id!r}") from None

    def _refresh_chains(self) -> None:
        with self._contact():
            found = self.client.chains()
        with self._lock:
            for document, chain in found:
                self._chains.setdefault(chain.chain_id, (document, chain))

    def round_document(
        self, round_number: int, chain_id: str, wait: bool = False
    ) -> tuple[dict[str, Any], BeaconRound]:
        with self._contact():
            document, checked = self.client.round_with_document(round_number, wait, chain_id)
        return dict(document), checked

    def cosign(
        self, head: TreeHead, round_number: int, consistency: Sequence[bytes], chain_id: str
    ) -> tuple[dict[str, Any], Cosignature]:
        with self._contact():
            return self.client.cosign(head, round_number, consistency, chain_id)

    def last_cosigned_head(self) -> TreeHead | None:
        with self._contact():
            return self.client.last_cosigned_head()

    def cosigned(self, round_number: int, chain_id: str) -> list[dict[str, Any]]:
        with self._contact():
            return self.client.cosigned(round_number, chain_id)

    def poll(self) -> None:
        chains = self.chains()
        now = self._clock()
        # A new chain is published two periods before the current one ends: look for it then.
        if not chains or chains[-1].end_ms() - now <= 3 * chains[-1].period_ms:
            self._refresh_chains()
        with self._contact():
            self.client.latest()
