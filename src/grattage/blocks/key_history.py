"""The operator key's history: which key signs at which index of the log, and the ``key.change``
documents that move it on — standard library and ``cryptography`` only (docs/fairness.md,
"Key rotation").

**The rule.** The log's first key is in force from index 0. A ``key.change`` entry at index
*c* names ``from_index`` = *c* + 1: the entries from *c* + 1 on are signed by the new key, the
ones before by the old. The ``key.change`` itself is signed by the key in force at *c* (the
old one) and countersigned by the new key (proof of possession). A tree head of size *n* counts
as index *n*: it is signed by the key in force after its last entry, so the first head that
contains a ``key.change`` is the new key's. A key never comes back once replaced.

:class:`KeyChain` replays that rule: fed the ``key.change`` entries in index order (a monitor
feeds them as it reads the log, a verifier from a proof's inclusion-proven entries), it
answers the key in force at any index and names a document or head signed by a retired key,
or by one the history never had.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grattage.blocks.signing import (
    Signer,
    TreeHead,
    canonical_json,
    check_document,
    decode_signature,
    document_message,
    key_id,
    verify_signature,
)
from grattage.blocks.tlog import entry_leaf_hash, verify_inclusion
from grattage.errors import VerificationFailed

KEY_CHANGE_FORMAT = "grattage-key-change/1"
KEY_CHANGE_KIND = "key-change"
"""The old key's signature: ``"grattage/key-change/1" || 0x00 || canonical JSON without
"signature"`` (so it covers the new key's countersignature too)."""
POSSESSION_KIND = "key-possession"
"""The new key's countersignature: ``"grattage/key-possession/1" || 0x00 || canonical JSON
without "signature" and "new_key_signature"``."""
COUNTERSIGNATURE = "new_key_signature"


def _short(identifier: str) -> str:
    return f"{identifier[:16]}…"


def possession_message(change: Mapping[str, Any]) -> bytes:
    """What the new key signs: the key change without either signature."""
    bare = {name: value for name, value in change.items() if name != COUNTERSIGNATURE}
    return document_message(POSSESSION_KIND, bare)


def make_key_change(old: Signer, new: Signer, from_index: int, time: str) -> dict[str, Any]:
    """The ``key.change`` document: countersigned by the new key, then signed by the old."""
    unsigned: dict[str, Any] = {
        "format": KEY_CHANGE_FORMAT,
        "old_key_id": old.key_id,
        "new_public_key": new.public_key.hex(),
        "new_key_id": new.key_id,
        "from_index": from_index,
        "time": time,
    }
    countersignature = new.sign(possession_message(unsigned))
    unsigned[COUNTERSIGNATURE] = base64.b64encode(countersignature).decode("ascii")
    return old.sign_document(KEY_CHANGE_KIND, unsigned)


@dataclass(frozen=True)
class KeyPeriod:
    """One key of the history and the indexes it rules: from ``from_index`` until the next
    period's (the last one rules on)."""

    public_key: bytes
    from_index: int
    change_index: int | None
    """The index of the ``key.change`` entry that brought it in; None for the first key."""

    @property
    def key_id(self) -> str:
        return key_id(self.public_key)

    def to_json(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "public_key": self.public_key.hex(),
            "from_index": self.from_index,
            "change_index": self.change_index,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KeyPeriod:
        try:
            public_key = bytes.fromhex(data["public_key"])
            from_index, change_index = data["from_index"], data.get("change_index")
        except (KeyError, TypeError, ValueError) as exc:
            raise VerificationFailed(f"malformed key history: {exc!r}") from None
        if len(public_key) != 32 or data.get("key_id", key_id(public_key)) != key_id(public_key):
            raise VerificationFailed("a key of the history is not the key its key_id names")
        if not isinstance(from_index, int) or (
            change_index is not None and not isinstance(change_index, int)
        ):
            raise VerificationFailed("malformed key history: its indexes are integers")
        return cls(public_key, from_index, change_index)


class KeyChain:
    """The operator's keys in force, in order, from the log's first key."""

    def __init__(self, first_key: bytes) -> None:
        if len(first_key) != 32:
            raise VerificationFailed("an Ed25519 public key is 32 bytes")
        self.periods: list[KeyPeriod] = [KeyPeriod(first_key, 0, None)]

    @property
    def current(self) -> KeyPeriod:
        return self.periods[-1]

    def at(self, index: int) -> KeyPeriod:
        """The key in force at ``index`` (a head of size *n* is at index *n*)."""
        found = self.periods[0]
        for period in self.periods:
            if period.from_index <= index:
                found = period
        return found

    def period_of(self, identifier: object) -> KeyPeriod | None:
        return next((p for p in self.periods if p.key_id == identifier), None)

    def knows(self, public_key: bytes) -> bool:
        return self.period_of(key_id(public_key)) is not None

    def changes_before(self, size: int) -> list[KeyPeriod]:
        """The periods a tree of ``size`` entries has seen begin (the first key's included)."""
        return [p for p in self.periods if p.change_index is None or p.change_index < size]

    def _where(self, period: KeyPeriod) -> str:
        later = [p.from_index for p in self.periods if p.from_index > period.from_index]
        until = f"until index {later[0] - 1}" if later else "on"
        return f"key {_short(period.key_id)} rules from index {period.from_index} {until}"

    def _wrong_key(self, what: str, named: object, index: int, ruling: KeyPeriod) -> str:
        other = self.period_of(named)
        if other is None:
            return (
                f"{what} names the key {named!r}, which is not in the log's key history "
                f"(as far as it was read: key {_short(ruling.key_id)} rules at index {index})"
            )
        state = "not yet in force" if other.from_index > index else "retired"
        return (
            f"{what} is signed by the {state} key {_short(other.key_id)} (it rules from index "
            f"{other.from_index}); {self._where(ruling)}"
        )

    def check_document(self, kind: str, document: Any, index: int) -> None:
        """A signed document of entry ``index``: naming and signed by the key in force there."""
        ruling = self.at(index)
        named = document.get("key_id") if isinstance(document, Mapping) else None
        if named != ruling.key_id:
            raise VerificationFailed(
                self._wrong_key(f"the {kind} at index {index}", named, index, ruling)
            )
        try:
            check_document(kind, document, ruling.public_key)
        except VerificationFailed:
            for other in self.periods:
                if other is not ruling and _signs(kind, document, other.public_key):
                    raise VerificationFailed(
                        self._wrong_key(f"the {kind} at index {index}", other.key_id, index, ruling)
                    ) from None
            raise

    def check_head(self, head: TreeHead) -> None:
        """A head of size *n*: naming and signed by the key in force at index *n*."""
        ruling = self.at(head.tree_size)
        what = f"the tree head of size {head.tree_size} (a head of size n is at index n)"
        if head.key_id != ruling.key_id:
            raise VerificationFailed(self._wrong_key(what, head.key_id, head.tree_size, ruling))
        try:
            head.check(ruling.public_key)
        except VerificationFailed:
            for other in self.periods:
                if other is not ruling:
                    try:
                        head.check(other.public_key)
                    except VerificationFailed:
                        continue
                    raise VerificationFailed(
                        self._wrong_key(what, other.key_id, head.tree_size, ruling)
                    ) from None
            raise

    def follow(self, index: int, change: Any) -> KeyPeriod:
        """The ``key.change`` document of entry ``index``: checked, its new key put in force."""
        ruling = self.at(index)
        if index < self.current.from_index:
            raise VerificationFailed(
                f"a key change at index {index}, before the last one (at "
                f"{self.current.change_index}): key changes are read in index order"
            )
        if not isinstance(change, Mapping) or change.get("format") != KEY_CHANGE_FORMAT:
            raise VerificationFailed(f"a key change is {KEY_CHANGE_FORMAT}")
        try:
            check_document(KEY_CHANGE_KIND, change, ruling.public_key)
        except VerificationFailed:
            raise VerificationFailed(
                f"the key change is not signed by the key in force, {_short(ruling.key_id)}"
            ) from None
        if change.get("old_key_id") != ruling.key_id:
            raise VerificationFailed(
                f"the key change names {change.get('old_key_id')!r} as the old key; "
                f"{self._where(ruling)}"
            )
        try:
            new_key = bytes.fromhex(change["new_public_key"])
        except (KeyError, TypeError, ValueError):
            raise VerificationFailed("the key change's new_public_key is not hex") from None
        if len(new_key) != 32 or change.get("new_key_id") != key_id(new_key):
            raise VerificationFailed("the key change's new_key_id is not its new key's id")
        countersignature = decode_signature(change.get(COUNTERSIGNATURE))
        if not verify_signature(new_key, possession_message(change), countersignature):
            raise VerificationFailed(
                "the new key's countersignature (proof of possession) does not verify"
            )
        if change.get("from_index") != index + 1:
            raise VerificationFailed(
                f"the key change at index {index} names from_index "
                f"{change.get('from_index')!r}: the new key rules from index {index + 1}"
            )
        if self.knows(new_key):
            raise VerificationFailed(
                f"the key change brings back the key {_short(key_id(new_key))}: a key replaced "
                "never comes back"
            )
        period = KeyPeriod(new_key, index + 1, index)
        self.periods.append(period)
        return period

    def follow_logged(self, parts: Sequence[Any], head: TreeHead) -> None:
        """``key.change`` entries as a proof carries them (``{"index", "entry", "path"}``),
        each included in ``head``, in index order."""
        if not isinstance(parts, Sequence):
            raise VerificationFailed("a proof's key_changes is a list")
        for part in parts:
            try:
                index, entry = part["index"], part["entry"]
                path = [bytes.fromhex(node) for node in part["path"]]
                if entry["kind"] != "key.change":
                    raise VerificationFailed(f"the log entry {index!r} is not a key.change")
                leaf = entry_leaf_hash(canonical_json(entry))
                change = entry["key_change"]
            except VerificationFailed:
                raise
            except (KeyError, TypeError, ValueError) as exc:
                raise VerificationFailed(
                    f"malformed key change part: {exc.__class__.__name__}: {exc}"
                ) from None
            if not isinstance(index, int) or not verify_inclusion(
                leaf, index, head.tree_size, path, head.root_hash
            ):
                raise VerificationFailed(
                    f"the key change {index!r} is not included in the tree head of size "
                    f"{head.tree_size}"
                )
            try:
                self.follow(index, change)
            except VerificationFailed as exc:
                raise VerificationFailed(f"entry {index}: {exc.message}") from None

    def to_json(self) -> list[dict[str, Any]]:
        return [period.to_json() for period in self.periods]

    @classmethod
    def from_json(cls, data: Sequence[Mapping[str, Any]]) -> KeyChain:
        periods = [KeyPeriod.from_json(item) for item in data]
        if not periods or periods[0].from_index != 0 or periods[0].change_index is not None:
            raise VerificationFailed("a key history starts with the first key, from index 0")
        chain = cls(periods[0].public_key)
        chain.periods = periods
        return chain


def _signs(kind: str, document: Any, public_key: bytes) -> bool:
    try:
        check_document(kind, document, public_key)
    except VerificationFailed:
        return False
    return True


def proof_keys(
    first_key: bytes,
    changes: Any,
    head: TreeHead,
    pinned_key: bytes | None,
    log_keys: KeyChain | None,
) -> KeyChain:
    """The key history the proof carries, checked in its head, and the pinned key in it."""
    keys = KeyChain(first_key)
    keys.follow_logged(changes, head)
    if log_keys is not None and log_keys.changes_before(head.tree_size) != keys.periods:
        raise VerificationFailed(
            f"the proof's key history ({len(keys.periods)} keys) is not the log's up to its "
            f"head of size {head.tree_size}: a key change is missing or another"
        )
    anchor = log_keys if log_keys is not None else keys
    if pinned_key is not None and not anchor.knows(pinned_key):
        raise VerificationFailed(
            f"the key you pinned ({key_id(pinned_key)[:16]}…) is not in the proof's key "
            "history: it is not this log's key, or the proof is older than that key (give "
            "--log, or ask for a new proof)"
        )
    return keys
