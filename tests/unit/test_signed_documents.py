"""Signed documents and tree heads: the bytes signed are the documented ones, and any change
to a signed document, a head or the key is refused."""

from __future__ import annotations

import base64

import pytest

from grattage.blocks.signing import (
    Signer,
    TreeHead,
    canonical_json,
    check_document,
    document_message,
    tree_head_message,
)
from grattage.errors import VerificationFailed

KEY = bytes(range(32))


def test_canonical_json_sorts_keys_drops_spaces_and_escapes_non_ascii() -> None:
    value = {"b": [1, "é", None, True], "a": {"z": 0, "y": "€"}}
    assert canonical_json(value) == b'{"a":{"y":"\\u20ac","z":0},"b":[1,"\\u00e9",null,true]}'


def test_canonical_json_refuses_floats() -> None:
    with pytest.raises(ValueError):
        canonical_json({"amount": 1.5})


def test_a_documents_signature_covers_the_kind_and_every_member_but_itself() -> None:
    signer = Signer(KEY)
    document = signer.sign_document("receipt", {"ticket_id": 7, "stake_cents": 500})
    assert document_message("receipt", document) == (
        b'grattage/receipt/1\x00{"stake_cents":500,"ticket_id":7}'
    )
    check_document("receipt", document, signer.public_key)
    for changed in ({**document, "stake_cents": 501}, {**document, "extra": 1}):
        with pytest.raises(VerificationFailed):
            check_document("receipt", changed, signer.public_key)
    with pytest.raises(VerificationFailed):
        check_document("commitment", document, signer.public_key)
    with pytest.raises(VerificationFailed):
        check_document("receipt", document, Signer(bytes(32)).public_key)


def test_a_tree_head_signs_size_time_and_root_in_the_documented_layout() -> None:
    signer = Signer(KEY)
    head = signer.sign_tree_head(5, 1_764_000_000_000, bytes(range(32)))
    assert tree_head_message(5, 1_764_000_000_000, bytes(range(32))) == (
        b"grattage/sth/1\x00"
        + (5).to_bytes(8, "big")
        + (1_764_000_000_000).to_bytes(8, "big")
        + bytes(range(32))
    )
    again = TreeHead.from_json(head.to_json())
    again.check(signer.public_key)
    forged = {**head.to_json(), "tree_size": 6}
    with pytest.raises(VerificationFailed):
        TreeHead.from_json(forged).check(signer.public_key)


def test_the_test_key_gives_its_documented_public_key_and_signature() -> None:
    """Ed25519 is deterministic (RFC 8032): these bytes are the test vector of docs/fairness.md."""
    signer = Signer(KEY)
    head = signer.sign_tree_head(0, 0, bytes(32))
    assert signer.public_key.hex() == (
        "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"
    )
    assert len(base64.b64decode(head.to_json()["signature"])) == 64


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {},
        {"format": "grattage-sth/1", "tree_size": -1},
        {"format": "grattage-sth/1", "tree_size": 1, "timestamp": 0, "root_hash": "zz"},
        {
            "format": "grattage-sth/1",
            "tree_size": 1,
            "timestamp": 0,
            "root_hash": "00" * 32,
            "signature": "!!",
        },
    ],
)
def test_a_malformed_tree_head_is_refused_in_words(bad: object) -> None:
    with pytest.raises(VerificationFailed):
        TreeHead.from_json(bad)
