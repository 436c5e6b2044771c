"""What a monitor keeps of the draw between runs (blocks/draw_audit.py): the witness's chains
with their last rounds, and per drawn block its chain tips, its receipts not drawn yet and its
permutation with who set each slot — two arrays of 4 bytes a unit, little-endian, Base64."""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grattage.blocks.beacon import BeaconChain
from grattage.errors import VerificationFailed

NONE = 0xFFFFFFFF
"""No draw set the slot (the setters' sentinel; blocks of fewer than 2^32 - 1 units)."""
_LITTLE = sys.byteorder == "little"


def _code(size: int) -> str:
    if size >= NONE:
        raise VerificationFailed(f"a drawn block of {size} units is beyond what a monitor keeps")
    return "I"


def _packed(values: array[int]) -> str:
    copy = array(values.typecode, values)
    if not _LITTLE:
        copy.byteswap()
    return base64.b64encode(copy.tobytes()).decode("ascii")


def _unpacked(code: str, text: str) -> array[int]:
    values = array(code)
    values.frombytes(base64.b64decode(text))
    if not _LITTLE:
        values.byteswap()
    return values


@dataclass
class ChainSeen:
    chain: BeaconChain
    witness_key: bytes
    last_round: int = 0
    last_value: bytes = b""
    rounds: dict[int, tuple[bytes, int]] = field(default_factory=dict)
    """round -> (w_r, the largest tree size cosigned for it)."""


@dataclass
class DrawnBlock:
    size: int
    chain_head: bytes
    witness_key: bytes
    last_receipt: bytes
    last_link: bytes
    last_beacon: tuple[str, int] | None = None
    drawn_beacon: tuple[str, int] | None = None
    """The round named by the receipt of the last sale drawn (the round rule's previous)."""
    pending: dict[int, tuple[int, bytes, str, int, int]] = field(default_factory=dict)
    """sequence -> (receipt index, H, chain id, round, receipt time in ms): not drawn yet."""
    next_drawn: int = 0
    units: array[int] | None = None
    setters: array[int] | None = None

    def permutation(self) -> tuple[array[int], array[int]]:
        if self.units is None or self.setters is None:
            self.units = array(_code(self.size), range(self.size))
            self.setters = array(self.units.typecode, [NONE]) * self.size
        return self.units, self.setters


def chains_json(chains: Mapping[str, ChainSeen]) -> list[dict[str, Any]]:
    return [
        {
            "chain": {
                "chain_id": s.chain.chain_id,
                "head": s.chain.head.hex(),
                "length": s.chain.length,
                "start_ms": s.chain.start_ms,
                "period_ms": s.chain.period_ms,
            },
            "witness_key": s.witness_key.hex(),
            "last_round": s.last_round,
            "last_value": s.last_value.hex(),
            "rounds": [[r, v.hex(), c] for r, (v, c) in sorted(s.rounds.items())],
        }
        for s in chains.values()
    ]


def chains_of(data: list[Mapping[str, Any]]) -> dict[str, ChainSeen]:
    chains = {}
    for item in data:
        c = item["chain"]
        chain = BeaconChain(
            c["chain_id"], bytes.fromhex(c["head"]), c["length"], c["start_ms"], c["period_ms"]
        )
        chains[chain.chain_id] = ChainSeen(
            chain,
            bytes.fromhex(item["witness_key"]),
            item["last_round"],
            bytes.fromhex(item["last_value"]),
            {r: (bytes.fromhex(v), size) for r, v, size in item["rounds"]},
        )
    return chains


def block_json(block: DrawnBlock) -> dict[str, Any]:
    return {
        "size": block.size,
        "chain_head": block.chain_head.hex(),
        "witness_key": block.witness_key.hex(),
        "last_receipt": block.last_receipt.hex(),
        "last_link": block.last_link.hex(),
        "last_beacon": block.last_beacon,
        "drawn_beacon": block.drawn_beacon,
        "pending": [[n, i, h.hex(), c, r, t] for n, (i, h, c, r, t) in block.pending.items()],
        "next_drawn": block.next_drawn,
        "units": None if block.units is None else _packed(block.units),
        "setters": None if block.setters is None else _packed(block.setters),
    }


def block_of(data: Mapping[str, Any]) -> DrawnBlock:
    code = _code(data["size"])
    beacon = data["last_beacon"]
    drawn = data.get("drawn_beacon")  # absent from the state of a monitor before 2026-12-02
    return DrawnBlock(
        size=data["size"],
        chain_head=bytes.fromhex(data["chain_head"]),
        witness_key=bytes.fromhex(data["witness_key"]),
        last_receipt=bytes.fromhex(data["last_receipt"]),
        last_link=bytes.fromhex(data["last_link"]),
        last_beacon=None if beacon is None else (beacon[0], beacon[1]),
        drawn_beacon=None if drawn is None else (drawn[0], drawn[1]),
        pending={n: (i, bytes.fromhex(h), c, r, t) for n, i, h, c, r, t in data["pending"]},
        next_drawn=data["next_drawn"],
        units=None if data["units"] is None else _unpacked(code, data["units"]),
        setters=None if data["setters"] is None else _unpacked(code, data["setters"]),
    )
