"""The operator's side of the witness (docs/witness.md), over plain HTTP (``urllib``): the
:class:`grattage.blocks.beacon.Beacon` port, and cosigning.

Every document is checked before it is returned: signed by the witness key the client was
given (pinned), a round's link hashed down to the last round checked of its chain (or to the
head), a cosignature of exactly the head sent, made before its round. A witness that cannot
be reached (refused, timed out, a 5xx) is :class:`grattage.errors.WitnessUnavailable` (a kind
of :class:`~grattage.errors.Unavailable`) — the sale is
then not taken; the witness's refusals keep their branch of the error tree (409 →
:class:`Conflict` …).
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from grattage.blocks.beacon import (
    BeaconChain,
    BeaconRound,
    Cosignature,
    check_chain,
    check_cosignature,
    check_round,
)
from grattage.blocks.signing import TreeHead
from grattage.errors import (
    Conflict,
    GrattageError,
    InconsistentHead,
    InvalidInput,
    NotFound,
    RoundClosed,
    VerificationFailed,
    WitnessUnavailable,
)

TIMEOUT_SECONDS = 5.0
MAX_ANSWER_BYTES = 1024 * 1024
_ERROR_BY_CODE: dict[str, type[GrattageError]] = {
    RoundClosed.code: RoundClosed,
    InconsistentHead.code: InconsistentHead,
}
_ERROR_BY_STATUS: dict[int, type[GrattageError]] = {
    404: NotFound,
    409: Conflict,
    422: InvalidInput,
}


class WitnessClient:
    """A witness at ``url`` whose Ed25519 public key is ``witness_key`` (pinned)."""

    def __init__(self, url: str, witness_key: bytes, timeout: float = TIMEOUT_SECONDS) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InvalidInput(f"a witness URL is http(s)://host[:port], got {url!r}")
        self.base = url.rstrip("/")
        self.witness_key = witness_key
        self.timeout = timeout
        self._lock = threading.Lock()
        self._chains: dict[str, BeaconChain] = {}
        self._known: dict[str, tuple[int, bytes]] = {}
        """Per chain, the highest round checked: later rounds hash down to it, not the head."""

    def _call(self, method: str, path: str, body: object = None, timeout: float = 0) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"} if data else {},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout) as answer:
                raw = answer.read(MAX_ANSWER_BYTES)
        except urllib.error.HTTPError as error:
            raise self._refusal(error, path) from None
        except (OSError, urllib.error.URLError) as error:
            raise WitnessUnavailable(
                f"the witness at {self.base} cannot be reached: {error}"
            ) from None
        try:
            return json.loads(raw)
        except ValueError:
            raise VerificationFailed(f"the witness's answer to {path} is not JSON") from None

    def _refusal(self, error: urllib.error.HTTPError, path: str) -> GrattageError:
        try:
            answer = json.loads(error.read(64 * 1024))
            code, message = str(answer["error"]), str(answer["message"])
        except (ValueError, KeyError, TypeError, OSError):
            code, message = "", f"the witness answered {error.code} to {path}"
        if error.code >= 500 or error.code == 429:
            return WitnessUnavailable(f"the witness is unavailable ({error.code}): {message}")
        kind = _ERROR_BY_CODE.get(code) or _ERROR_BY_STATUS.get(error.code, VerificationFailed)
        return kind(f"the witness: {message}")

    # -- the Beacon port -----------------------------------------------------------------

    def chain(self, chain_id: str | None = None) -> BeaconChain:
        if chain_id is not None and chain_id in self._chains:
            return self._chains[chain_id]
        query = "" if chain_id is None else f"?chain_id={chain_id}"
        chain = check_chain(self._call("GET", f"/witness/chain{query}"), self.witness_key)
        if chain_id is not None and chain.chain_id != chain_id:
            raise VerificationFailed("the witness answered another chain than the one asked")
        with self._lock:
            self._chains.setdefault(chain.chain_id, chain)
        return chain

    def round(
        self, round_number: int, wait: bool = False, chain_id: str | None = None
    ) -> BeaconRound:
        return self.round_with_document(round_number, wait, chain_id)[1]

    def round_with_document(
        self, round_number: int, wait: bool = False, chain_id: str | None = None
    ) -> tuple[dict[str, Any], BeaconRound]:
        """The round as the witness signed it (what the log keeps), and what it says."""
        chain = self.chain(chain_id)
        query = urllib.parse.urlencode(
            {"chain_id": chain.chain_id, **({"wait": "1"} if wait else {})}
        )
        document = self._call(
            "GET",
            f"/witness/rounds/{round_number}?{query}",
            timeout=self.timeout + (3 * chain.period_ms / 1000 if wait else 0),
        )
        return document, self._checked_round(document, chain)

    def chains(self) -> list[tuple[dict[str, Any], BeaconChain]]:
        """Every chain of the witness, oldest first, each checked."""
        answer = self._call("GET", "/witness/chains")
        documents = answer.get("chains") if isinstance(answer, dict) else None
        if not isinstance(documents, list):
            raise VerificationFailed("the witness's list of chains is malformed")
        found = [(document, check_chain(document, self.witness_key)) for document in documents]
        with self._lock:
            for _, chain in found:
                self._chains.setdefault(chain.chain_id, chain)
        return found

    def latest(self) -> BeaconRound:
        document = self._call("GET", "/witness/rounds/latest")
        chain_id = document.get("chain_id") if isinstance(document, dict) else None
        return self._checked_round(document, self.chain(str(chain_id)))

    def _checked_round(self, document: object, chain: BeaconChain) -> BeaconRound:
        known = self._known.get(chain.chain_id)
        if isinstance(document, dict) and known is not None:
            asked = document.get("round")
            if isinstance(asked, int) and asked < known[0]:
                known = None  # an older round: checked against the head
        checked = check_round(document, chain, self.witness_key, known)
        if checked.round != (document.get("round") if isinstance(document, dict) else None):
            raise VerificationFailed("the witness answered another round")
        with self._lock:
            if known is None or checked.round > known[0]:
                self._known[chain.chain_id] = (checked.round, checked.value)
        return checked

    # -- cosigning -----------------------------------------------------------------------

    def last_cosigned_head(self) -> TreeHead | None:
        """The last head the witness cosigned (the next consistency proof starts from it)."""
        try:
            answer = self._call("GET", "/witness/cosigned/last")
        except NotFound:
            return None
        if not isinstance(answer, dict):
            raise VerificationFailed("the witness's last cosigned head is malformed")
        head = TreeHead.from_json(answer.get("sth"))
        check_cosignature(answer.get("cosignature"), self.witness_key, head)
        return head

    def cosigned(self, round_number: int, chain_id: str) -> list[dict[str, Any]]:
        """Every head the witness cosigned for the round, oldest first, each checked: the
        operator's head (signature left to the caller, who holds the key) and the
        cosignature, of that head, for that round, made before it."""
        chain = self.chain(chain_id)
        query = urllib.parse.urlencode({"round": round_number, "chain_id": chain.chain_id})
        answer = self._call("GET", f"/witness/cosigned?{query}")
        heads = answer.get("heads") if isinstance(answer, dict) else None
        if not isinstance(heads, list):
            raise VerificationFailed("the witness's list of cosigned heads is malformed")
        for pair in heads:
            if not isinstance(pair, dict):
                raise VerificationFailed("a cosigned head of the witness is malformed")
            head = TreeHead.from_json(pair.get("sth"))
            checked = check_cosignature(pair.get("cosignature"), self.witness_key, head, chain)
            if checked.round != round_number:
                raise VerificationFailed("the witness listed a head cosigned for another round")
        return [dict(pair) for pair in heads]

    def cosign(
        self,
        head: TreeHead,
        round_number: int,
        consistency: Sequence[bytes],
        chain_id: str | None = None,
    ) -> tuple[dict[str, Any], Cosignature]:
        """The witness's signed cosignature of ``head`` for the round (checked), and what it
        says."""
        chain = self.chain(chain_id)
        body = {
            "sth": head.to_json(),
            "round": round_number,
            "consistency": [node.hex() for node in consistency],
            "chain_id": chain.chain_id,
        }
        document = self._call("POST", "/witness/cosign", body)
        checked = check_cosignature(document, self.witness_key, head, chain)
        if checked.round != round_number:
            raise VerificationFailed("the witness cosigned the head for another round")
        return document, checked
