"""drand (the League of Entropy's public beacon) behind the :class:`grattage.blocks.beacon.Beacon`
port: the production alternative to the witness's own beacon (docs/witness.md, "drand").

A drand round is a BLS12-381 threshold signature by the League's group key; its randomness
is ``SHA-256(signature)``. Two of its networks are known here:

* **quicknet** (scheme ``bls-unchained-g1-rfc9380``, 3 s): the signature is on G1 (48 bytes),
  the key on G2 (96 bytes), over ``SHA-256(round as u64 BE)``, with the hash-to-curve suite
  ``BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_``;
* **default** (scheme ``pedersen-bls-chained``, 30 s): the signature on G2 (96 bytes), the key
  on G1, over ``SHA-256(previous_signature || round as u64 BE)``, suite
  ``BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_``.

Verification uses ``py_ecc`` (the Ethereum Foundation's BLS12-381, pure Python: about 2 s a
round on this machine — enough for a monitor or a verifier, not for checking every sale at
1 000 plays/s, where rounds are checked once and shared). The round's value for the draw is
the randomness; its time is ``genesis_time + (round - 1) * period``. drand cannot be reached
from this project's machines: the adapter is tested on rounds recorded from drand's network.
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from grattage.blocks.beacon import BeaconRound
from grattage.errors import NotFound, Unavailable, VerificationFailed

G1_DST = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"
G2_DST = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_"


@dataclass(frozen=True)
class DrandNetwork:
    chain_hash: str
    public_key: bytes
    scheme: str
    genesis_time: int
    period_seconds: int

    def round_time_ms(self, round_number: int) -> int:
        return (self.genesis_time + (round_number - 1) * self.period_seconds) * 1000


QUICKNET = DrandNetwork(
    chain_hash="52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971",
    public_key=bytes.fromhex(
        "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a"
        "2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76"
        "eae8991ef5ece45a"
    ),
    scheme="bls-unchained-g1-rfc9380",
    genesis_time=1692803367,
    period_seconds=3,
)
DEFAULT = DrandNetwork(
    chain_hash="8990e7a9aaed2ffed73dbd7092123d6f289930540d7651336225dc172e51b2ce",
    public_key=bytes.fromhex(
        "868f005eb8e6e4ca0a47c8a77ceaa5309a47978a7c71bc5cce96366b5d7a569937c529eeda66c7293784a940"
        "2801af31"
    ),
    scheme="pedersen-bls-chained",
    genesis_time=1595431050,
    period_seconds=30,
)


def _verify_signature_on_g1(public_key: bytes, message: bytes, signature: bytes) -> bool:
    """e(signature, g2) == e(H(message), public_key), signature in G1, key in G2."""
    from py_ecc.bls.hash_to_curve import hash_to_G1
    from py_ecc.bls.point_compression import decompress_G1, decompress_G2
    from py_ecc.bls.typing import G1Compressed, G2Compressed
    from py_ecc.fields import optimized_bls12_381_FQ12 as FQ12
    from py_ecc.optimized_bls12_381.optimized_curve import G2, curve_order, is_inf, multiply, neg
    from py_ecc.optimized_bls12_381.optimized_pairing import final_exponentiate, pairing

    if len(public_key) != 96 or len(signature) != 48:
        return False
    try:
        point = decompress_G1(G1Compressed(int.from_bytes(signature, "big")))
        key = decompress_G2(
            G2Compressed(
                (int.from_bytes(public_key[:48], "big"), int.from_bytes(public_key[48:], "big"))
            )
        )
    except (ValueError, AssertionError):
        return False
    if is_inf(point) or not is_inf(multiply(point, curve_order)):
        return False  # not in the prime-order subgroup
    if is_inf(key) or not is_inf(multiply(key, curve_order)):
        return False
    hashed = hash_to_G1(message, G1_DST, hashlib.sha256)  # type: ignore[arg-type]
    product = pairing(G2, point, final_exponentiate=False) * pairing(
        neg(key), hashed, final_exponentiate=False
    )
    return bool(final_exponentiate(product) == FQ12.one())


def _verify_signature_on_g2(public_key: bytes, message: bytes, signature: bytes) -> bool:
    from eth_typing import BLSPubkey, BLSSignature
    from py_ecc.bls.ciphersuites import G2Basic

    if len(public_key) != 48 or len(signature) != 96:
        return False
    try:
        return bool(G2Basic.Verify(BLSPubkey(public_key), message, BLSSignature(signature)))
    except (ValueError, AssertionError):
        return False


def _hex(document: Mapping[str, Any], name: str) -> bytes:
    value = document.get(name)
    try:
        return bytes.fromhex(value) if isinstance(value, str) else b""
    except ValueError:
        return b""


def check_drand_round(document: object, network: DrandNetwork) -> BeaconRound:
    """A drand round's JSON (``/public/{round}``) checked: BLS signature and randomness."""
    if not isinstance(document, Mapping):
        raise VerificationFailed("a drand round is a JSON object")
    number = document.get("round")
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number < 2**63:
        raise VerificationFailed("a drand round's number is a positive integer")
    signature = _hex(document, "signature")
    round_bytes = number.to_bytes(8, "big")
    if network.scheme == "bls-unchained-g1-rfc9380":
        message = hashlib.sha256(round_bytes).digest()
        valid = _verify_signature_on_g1(network.public_key, message, signature)
    elif network.scheme == "pedersen-bls-chained":
        previous = _hex(document, "previous_signature")
        message = hashlib.sha256(previous + round_bytes).digest()
        valid = _verify_signature_on_g2(network.public_key, message, signature)
    else:
        raise VerificationFailed(f"no verifier for the drand scheme {network.scheme!r}")
    if not valid:
        raise VerificationFailed(f"drand round {number}'s signature does not verify")
    randomness = hashlib.sha256(signature).digest()
    if "randomness" in document and _hex(document, "randomness") != randomness:
        raise VerificationFailed(f"drand round {number}'s randomness is not SHA-256(signature)")
    return BeaconRound(network.chain_hash, number, randomness, network.round_time_ms(number))


def _http_get(url: str) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return json.loads(answer.read(64 * 1024))
    except urllib.error.HTTPError as error:
        if error.code in {404, 425}:
            raise NotFound(f"drand has no such round yet: {url}") from None
        raise Unavailable(f"drand answered {error.code}: {url}") from None
    except (OSError, ValueError) as error:
        raise Unavailable(f"drand cannot be reached at {url}: {error}") from None


class DrandBeacon:
    """drand over its HTTP API (``{relay}/{chain_hash}/public/{round|latest}``)."""

    def __init__(
        self,
        relay: str,
        network: DrandNetwork = QUICKNET,
        fetch: Callable[[str], Any] = _http_get,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base = f"{relay.rstrip('/')}/{network.chain_hash}/public"
        self.network = network
        self._fetch = fetch
        self._clock = clock

    def latest(self) -> BeaconRound:
        return check_drand_round(self._fetch(f"{self.base}/latest"), self.network)

    def round(self, round_number: int, wait: bool = False) -> BeaconRound:
        if wait:
            delay = self.network.round_time_ms(round_number) / 1000 - self._clock()
            if delay > 2 * self.network.period_seconds:
                raise NotFound(f"drand round {round_number} is not published yet")
            time.sleep(max(0.0, delay))
        checked = check_drand_round(self._fetch(f"{self.base}/{round_number}"), self.network)
        if checked.round != round_number:
            raise VerificationFailed(f"drand answered round {checked.round} for {round_number}")
        return checked
