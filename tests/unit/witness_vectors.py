"""The witness's test vectors (docs/witness.md, tests/fixtures/golden/witness_vectors.json):
`python tests/unit/witness_vectors.py > tests/fixtures/golden/witness_vectors.json`."""

from __future__ import annotations

import json
from typing import Any

from grattage.blocks.beacon import BeaconChain, BeaconRound, Cosignature, chain_id_of
from grattage.blocks.hashchain import HashChain
from grattage.blocks.signing import Signer, document_message

WITNESS_PRIVATE_KEY = bytes(range(32, 64))
OPERATOR_PRIVATE_KEY = bytes(range(64, 96))
SEED = bytes(range(32))


def vectors() -> dict[str, Any]:
    witness = Signer(WITNESS_PRIVATE_KEY)
    operator = Signer(OPERATOR_PRIVATE_KEY)
    chain, head = HashChain.create(3, SEED)
    beacon = BeaconChain(chain_id_of(head), head, 3, 1_800_000_000_000, 1000)
    chain_document = witness.sign_document("beacon-chain", beacon.unsigned_document(witness.key_id))
    rounds = [
        witness.sign_document(
            "beacon-round",
            BeaconRound(
                beacon.chain_id, r, chain.link(r), beacon.round_time_ms(r)
            ).unsigned_document(witness.key_id),
        )
        for r in (1, 2, 3)
    ]
    sth = operator.sign_tree_head(5, 1_799_999_999_000, bytes.fromhex("ab" * 32))
    cosignature = witness.sign_document(
        "cosignature",
        Cosignature(
            beacon.chain_id, 2, 5, sth.root_hash, sth.timestamp_ms, 1_800_000_000_500
        ).unsigned_document(witness.key_id),
    )
    return {
        "witness_private_key": WITNESS_PRIVATE_KEY.hex(),
        "witness_public_key": witness.public_key.hex(),
        "operator_public_key": operator.public_key.hex(),
        "seed": SEED.hex(),
        "links": [chain.link(i).hex() for i in range(4)],
        "chain": chain_document,
        "chain_signed_message": document_message("beacon-chain", chain_document).decode(),
        "rounds": rounds,
        "sth": sth.to_json(),
        "cosignature": cosignature,
    }


if __name__ == "__main__":
    print(json.dumps(vectors(), indent=2))
