"""The draw's ports: its storage (:mod:`grattage.adapters.draws`) and the witness it needs
(:mod:`grattage.adapters.witness_client`), kept beside :mod:`grattage.service.ports`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from grattage.blocks.beacon import BeaconChain, BeaconRound, Cosignature
from grattage.blocks.signing import TreeHead
from grattage.service.model import Ticket


@dataclass(frozen=True)
class QueuedDraw:
    """A sale sold and not yet drawn: its ticket, block, index, the round its receipt names,
    its receipt's hash and, once integrated, the receipt entry's log index."""

    ticket_id: int
    block_id: int
    sequence: int
    chain_id: str
    round: int
    round_ms: int
    receipt_sha256: str
    receipt_index: int | None


@dataclass(frozen=True)
class SlotState:
    unit: int
    set_by: int


class DrawRepository(Protocol):
    def add_block(self, block_id: int, chain_length: int, checkpoints: bytes) -> None: ...
    def drawn_blocks(self, block_ids: Sequence[int]) -> set[int]:
        """Which of these blocks are drawn (committed with a chain)."""
        ...

    def checkpoints(self, block_id: int) -> tuple[int, bytes] | None:
        """(chain length, sealed checkpoints) of a drawn block, None for another."""
        ...

    def set_chain_tip(self, block_id: int, receipt_sha256: str, round_ms: int | None) -> None: ...

    def queue(self, draw: QueuedDraw) -> None:
        """Queue the sale for its round, give its ticket (stored before the unit was taken)
        its block and index, and make its receipt the block's chain tip; Inconsistent if a
        ticket of the block already has that index."""
        ...

    def earliest_round(self) -> tuple[str, int, int] | None:
        """(chain id, round, time) of the earliest round a queued sale names."""
        ...

    def pending_rounds(self, until_ms: int) -> list[tuple[str, int, int]]:
        """The distinct (chain id, round, time) queued sales name, up to ``until_ms``."""
        ...

    def pending_blocks(self, until_ms: int) -> list[int]:
        """The blocks with queued sales whose round's time is at most ``until_ms``."""
        ...

    def drawable(self, block_id: int, until_ms: int, limit: int) -> list[QueuedDraw]:
        """The block's queued sales whose round's time is at most ``until_ms``, by index,
        with their receipt's log index once integrated."""
        ...

    def cursor(self, block_id: int) -> int:
        """The block's sales drawn so far (its next index to draw)."""
        ...

    def lock_cursor(self, block_id: int) -> int:
        """The block's sales drawn so far (its next index to draw), locked until the end of
        the transaction."""
        ...

    def set_cursor(self, block_id: int, before: int, after: int) -> bool: ...
    def slot(self, block_id: int, slot: int) -> SlotState | None: ...
    def slots_from(self, block_id: int, low: int, high: int) -> dict[int, SlotState]:
        """The stored slots in ``[low, high)``."""
        ...

    def covered_tickets(self, ticket_ids: Sequence[int]) -> dict[int, Ticket]:
        """Those of the tickets still covered."""
        ...

    def set_slot(self, block_id: int, slot: int, state: SlotState) -> None: ...
    def drop_slot(self, block_id: int, slot: int) -> None: ...
    def dequeue(self, ticket_id: int) -> None: ...
    def round_logged(self, chain_id: str, round_number: int) -> bool: ...
    def mark_round_logged(self, chain_id: str, round_number: int) -> None: ...
    def chain_logged(self, chain_id: str) -> bool: ...
    def mark_chain_logged(self, chain_id: str) -> None: ...
    def take_lease(self, holder: str, now_ms: int, until_ms: int) -> bool:
        """Hold the leader's lease until ``until_ms`` if it is free, expired or already
        ``holder``'s; whether it is held."""
        ...

    def lease_expiry(self) -> int:
        """Until when (beacon time, ms) the leader's lease is held: 0 if it never was."""
        ...

    def resolve_ticket(self, ticket_id: int, **values: Any) -> bool:
        """Store a covered ticket's draw (its unit, prize, design, state); False if it was no
        longer covered (nothing changed)."""
        ...

    def undrawn(self, block_id: int) -> int:
        """Sales of the block sold and not yet drawn."""
        ...


class WitnessPort(Protocol):
    """The independent witness as the draw uses it; every document it returns is checked
    (signed with the pinned key, a round hashed down its chain, a cosignature of the head)."""

    @property
    def witness_key(self) -> bytes: ...

    def now_ms(self) -> int:
        """The beacon's time as this process sees it (its schedule is in this time)."""
        ...

    def healthy(self) -> bool:
        """Whether the witness answered this process recently: a sale is taken only then."""
        ...

    def chains(self) -> list[BeaconChain]:
        """The witness's chains known to this process, oldest first."""
        ...

    def chain_document(self, chain_id: str) -> dict[str, Any]: ...

    def round_document(
        self, round_number: int, chain_id: str, wait: bool = False
    ) -> tuple[dict[str, Any], BeaconRound]:
        """A published round, signed and checked; NotFound before its time (``wait``: held
        until then when it is at most two periods away)."""
        ...

    def cosign(
        self, head: TreeHead, round_number: int, consistency: Sequence[bytes], chain_id: str
    ) -> tuple[dict[str, Any], Cosignature]: ...

    def last_cosigned_head(self) -> TreeHead | None: ...

    def cosigned(self, round_number: int, chain_id: str) -> list[dict[str, Any]]:
        """Every head cosigned for the round, as ``{"sth", "cosignature"}``, each checked."""
        ...

    def poll(self) -> None:
        """Ask the witness for its latest round (and chains): keeps :meth:`healthy` true while
        it answers. Raises Unavailable when it does not."""
        ...
