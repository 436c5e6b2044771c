"""Per-unit salts and design seeds — standard library only, so any checker can re-derive them.

``unit_salt(key, position)`` is BLAKE2b-256 in keyed mode (key = the block key, personalisation
``grattage/salt1``) of the position as u64 big-endian: a keyed PRF of the position, secret until
the block's key is disclosed. Keyed BLAKE2b is a PRF by design and about three times faster than
HMAC-SHA256, which matters at 12 000 000 salts per block.

A unit's design seed is its salt followed by the player's choice in UTF-8 (nothing for Cash).
"""

from __future__ import annotations

import hashlib

SALT_PERSON = b"grattage/salt1"


def unit_salt(key: bytes, position: int) -> bytes:
    return hashlib.blake2b(
        position.to_bytes(8, "big"), key=key, digest_size=32, person=SALT_PERSON
    ).digest()


def ticket_seed(salt: bytes, choice: str | None) -> bytes:
    return salt + (choice or "").encode("utf-8")
