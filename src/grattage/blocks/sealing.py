"""Sealing: what a block's secret key derives, so that a ticket can be re-derived and proven.

* ``unit_salt`` and ``ticket_seed`` live in :mod:`grattage.blocks.salts` (standard library only).
* The ticket a unit shows is ``game.design(prize, SeededRandomness(salt || choice))`` where
  ``choice`` is the UTF-8 of the player's pick (Astro's sign) or empty: the visible design is a
  pure function of salt, prize and choice, so a commitment to the salt fixes it.
* Tier indexes are stored encrypted with AES-256-CTR under
  HMAC-SHA256(key, "grattage/tiers/v1"), so the database alone does not tell an unsold unit's
  prize; any one unit decrypts alone (CTR is seekable).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from grattage.blocks.salts import ticket_seed, unit_salt
from grattage.games.base import Game, TicketDocument
from grattage.games.randomness import SeededRandomness

KEY_BYTES = 32
_TIERS_DOMAIN = b"grattage/tiers/v1"
__all__ = ["design_unit", "new_block_key", "seal_tiers", "ticket_seed", "unit_salt", "unseal_tiers"]
_AES_BLOCK = 16


def new_block_key() -> bytes:
    return os.urandom(KEY_BYTES)


def design_unit(game: Game, salt: bytes, prize_cents: int, choice: str | None) -> TicketDocument:
    """The one ticket that unit shows to a player who picked ``choice``."""
    return game.design(prize_cents, SeededRandomness(ticket_seed(salt, choice)), choice)


def _tiers_cipher(key: bytes, counter_block: int) -> Any:
    tiers_key = hmac.new(key, _TIERS_DOMAIN, hashlib.sha256).digest()
    nonce = counter_block.to_bytes(16, "big")
    return Cipher(algorithms.AES(tiers_key), modes.CTR(nonce))


def seal_tiers(key: bytes, tiers: bytes) -> bytes:
    """Encrypt a block's tier bytes (one byte per unit, in sale order)."""
    encryptor = _tiers_cipher(key, 0).encryptor()
    return bytes(encryptor.update(tiers) + encryptor.finalize())


def unseal_tiers(key: bytes, sealed: bytes, first_position: int = 0) -> bytes:
    """Decrypt ``sealed``, the tier bytes of the units from ``first_position`` on."""
    start_block, skip = divmod(first_position, _AES_BLOCK)
    decryptor = _tiers_cipher(key, start_block).decryptor()
    plain = decryptor.update(bytes(skip) + sealed) + decryptor.finalize()
    return bytes(plain[skip:])
