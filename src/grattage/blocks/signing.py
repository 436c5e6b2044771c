"""Signed documents of the transparency log: canonical JSON, Ed25519, signed tree heads.

Everything an outsider needs to check a signature is here and in docs/fairness.md:

* **canonical JSON** — ``json.dumps(value, sort_keys=True, separators=(",", ":"),
  ensure_ascii=True)`` encoded as ASCII: keys sorted by code point, no spaces, every non-ASCII
  character as ``\\uXXXX`` (UTF-16 surrogate pairs beyond the BMP), integers in decimal, no
  floats (refused);
* a **signed document** (commitment, receipt, key change) is a JSON object whose
  ``signature`` member is the Base64 (RFC 4648 §4, with padding) Ed25519 signature (RFC 8032)
  of ``"grattage/" || kind || "/1" || 0x00 || canonical JSON of the object without its
  signature member``;
* a **signed tree head** signs ``"grattage/sth/1" || 0x00 || tree_size (u64 BE) ||
  timestamp (u64 BE, milliseconds since 1970-01-01T00:00:00Z) || root_hash (32 bytes)``;
* a key's **key id** is the SHA-256 of its 32 raw public bytes, in hex.

The verifying half imports only the standard library and ``cryptography``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from grattage.errors import VerificationFailed

STH_FORMAT = "grattage-sth/1"
STH_CONTEXT = b"grattage/sth/1\x00"
PUBLIC_KEY_BYTES = 32
SIGNATURE_BYTES = 64


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value that is hashed or signed."""
    return json.dumps(
        _without_floats(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
        allow_nan=False,
    ).encode("ascii")


_SCALARS = (str, int, bool, type(None))
"""Exact types that need no walk (``type(x) in``: a float subclass is still refused below)."""


def _without_floats(value: Any) -> Any:
    # Walked with a stack and exact-type checks first: this runs on every sale's receipt
    # (twice), and an ABC ``isinstance`` per leaf cost more than the signature itself.
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is dict:
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            pending.extend(item)
        elif isinstance(item, float):
            raise ValueError("canonical JSON carries no floats: amounts are integers")
        elif isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return value


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()


def document_message(kind: str, document: Mapping[str, Any]) -> bytes:
    """The bytes a signed document's signature covers."""
    unsigned = {name: value for name, value in document.items() if name != "signature"}
    return _message_of_unsigned(kind, unsigned)


def _message_of_unsigned(kind: str, unsigned: Mapping[str, Any]) -> bytes:
    return f"grattage/{kind}/1".encode("ascii") + b"\x00" + canonical_json(unsigned)


def tree_head_message(tree_size: int, timestamp_ms: int, root_hash: bytes) -> bytes:
    if len(root_hash) != 32:
        raise ValueError("a root hash is 32 bytes")
    return STH_CONTEXT + tree_size.to_bytes(8, "big") + timestamp_ms.to_bytes(8, "big") + root_hash


class Signer:
    """The operator's Ed25519 key (kept by the key store, never in the database)."""

    def __init__(self, private_key: bytes) -> None:
        self._key = Ed25519PrivateKey.from_private_bytes(private_key)
        self.public_key = self._key.public_key().public_bytes_raw()
        self.key_id = key_id(self.public_key)

    @staticmethod
    def new_private_key() -> bytes:
        return Ed25519PrivateKey.generate().private_bytes_raw()

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)

    def sign_document(self, kind: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """The document with its ``signature`` member (any previous one replaced)."""
        unsigned = {name: value for name, value in document.items() if name != "signature"}
        signature = self.sign(_message_of_unsigned(kind, unsigned))
        return {**unsigned, "signature": base64.b64encode(signature).decode("ascii")}

    def sign_tree_head(self, tree_size: int, timestamp_ms: int, root_hash: bytes) -> TreeHead:
        signature = self.sign(tree_head_message(tree_size, timestamp_ms, root_hash))
        return TreeHead(tree_size, timestamp_ms, root_hash, self.key_id, signature)


def verify_signature(public_key: bytes, message: bytes, signature: bytes) -> bool:
    if len(public_key) != PUBLIC_KEY_BYTES or len(signature) != SIGNATURE_BYTES:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except InvalidSignature:
        return False
    return True


def decode_signature(text: object) -> bytes:
    if not isinstance(text, str):
        raise VerificationFailed("a signature is a Base64 string")
    try:
        signature = base64.b64decode(text, validate=True)
    except ValueError:
        raise VerificationFailed("a signature is not valid Base64") from None
    if len(signature) != SIGNATURE_BYTES:
        raise VerificationFailed(f"an Ed25519 signature is 64 bytes, got {len(signature)}")
    return signature


def check_document(kind: str, document: object, public_key: bytes) -> None:
    """Raise :class:`VerificationFailed` unless ``document`` is signed by ``public_key``."""
    if not isinstance(document, Mapping):
        raise VerificationFailed(f"a {kind} is a JSON object")
    signature = decode_signature(document.get("signature"))
    try:
        message = document_message(kind, document)
    except (TypeError, ValueError) as exc:
        raise VerificationFailed(f"the {kind} is not canonical JSON: {exc}") from None
    if not verify_signature(public_key, message, signature):
        raise VerificationFailed(f"the {kind}'s signature does not verify with the operator's key")


@dataclass(frozen=True)
class TreeHead:
    """A signed tree head (RFC 9162 §4.10 in spirit; our own byte layout, above)."""

    tree_size: int
    timestamp_ms: int
    root_hash: bytes
    key_id: str
    signature: bytes

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STH_FORMAT,
            "tree_size": self.tree_size,
            "timestamp": self.timestamp_ms,
            "root_hash": self.root_hash.hex(),
            "key_id": self.key_id,
            "signature": base64.b64encode(self.signature).decode("ascii"),
        }

    @classmethod
    def from_json(cls, data: object) -> TreeHead:
        if not isinstance(data, Mapping) or data.get("format") != STH_FORMAT:
            raise VerificationFailed(f"not a signed tree head (format {STH_FORMAT} expected)")
        size, timestamp = data.get("tree_size"), data.get("timestamp")
        for name, value in (("tree_size", size), ("timestamp", timestamp)):
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
                raise VerificationFailed(f"the tree head's {name} is not an integer")
        assert isinstance(size, int) and isinstance(timestamp, int)
        try:
            root = bytes.fromhex(str(data.get("root_hash")))
        except ValueError:
            raise VerificationFailed("the tree head's root_hash is not hex") from None
        if len(root) != 32:
            raise VerificationFailed("the tree head's root_hash is not 32 bytes")
        return cls(
            tree_size=size,
            timestamp_ms=timestamp,
            root_hash=root,
            key_id=str(data.get("key_id")),
            signature=decode_signature(data.get("signature")),
        )

    def check(self, public_key: bytes) -> None:
        message = tree_head_message(self.tree_size, self.timestamp_ms, self.root_hash)
        if not verify_signature(public_key, message, self.signature):
            raise VerificationFailed(
                f"the tree head of size {self.tree_size} is not signed by the operator's key"
            )
