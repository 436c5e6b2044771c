"""What the service needs besides its database, as protocols the adapters implement:
password hashing, the national exclusion register, the key store and chart drawing.

The storage ports (repositories and the unit of work) are in :mod:`grattage.service.ports`.
"""

from __future__ import annotations

from typing import Literal, Protocol

from grattage.service.records import PayoutSeries, TierSeries


class PasswordHasher(Protocol):
    def hash(self, password: str) -> str:
        """A salted, slow hash of ``password`` that names its own algorithm and cost."""
        ...

    def verify(self, password_hash: str, password: str) -> bool:
        """Whether ``password`` is the one hashed (False for a hash it cannot read)."""
        ...


class ExclusionRegister(Protocol):
    """The national register of people barred from gambling (France: the ANJ's « fichier des
    interdits de jeux »), by person key (:func:`grattage.service.identity.person`)."""

    def lists(self, person_key: str) -> bool: ...


class KeyStore(Protocol):
    def put(self, key_id: str, key: bytes) -> None: ...
    def get(self, key_id: str) -> bytes: ...
    def discard(self, key_id: str) -> None: ...
    def operator_key(self, key_id: str | None = None) -> bytes:
        """The operator's Ed25519 private key ``key_id`` (32 bytes); None: the first one,
        created on first use."""
        ...

    def put_operator_key(self, key_id: str, key: bytes) -> None:
        """Store a new operator key (a rotation's) durably, before the rotation commits."""
        ...

    def discard_operator_key(self, key_id: str) -> None:
        """Remove a rotation's new key whose rotation is known not to have committed."""
        ...

    def pseudonym_key(self) -> bytes:
        """The key of players' pseudonyms in receipts (32 bytes), created on first use."""
        ...


class ChartRenderer(Protocol):
    """Draws a block's charts (PNG or SVG bytes) from the exact series the service prepares."""

    def payout(self, series: PayoutSeries, fmt: Literal["png", "svg"]) -> bytes: ...
    def tiers(self, series: TierSeries, fmt: Literal["png", "svg"]) -> bytes: ...
