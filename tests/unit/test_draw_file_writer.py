"""The streamed writer of the draws file (grattage/blocks/draw_file_writer.py): the same bytes
as the reference encoder (docs/draw.md, "The draws file") whatever the order in which the
sales name their rounds and chains, over more than one buffer of sales, at both widths."""

from __future__ import annotations

import hashlib
import io
import random
from pathlib import Path

import pytest

from grattage.blocks import draw_file_writer
from grattage.blocks.draw_file import DrawRecord, encode_draw_file
from grattage.blocks.draw_file_writer import DrawFileWriter
from grattage.errors import VerificationFailed

BLOCK = bytes(range(16))


def _chain(name: str) -> dict[str, object]:
    return {"chain_id": hashlib.sha256(name.encode()).hexdigest(), "format": "test", "n": name}


def _records(count: int, size: int, seed: int) -> tuple[list[dict[str, object]], list[DrawRecord]]:
    chosen = random.Random(seed)
    chains = [_chain("first"), _chain("second")]
    records = [
        DrawRecord(
            chosen.randbytes(32),
            str(chains[chosen.randrange(2)]["chain_id"]),
            chosen.randrange(1, 40),  # rounds named out of order, as late draws do
            chosen.randrange(size),
            chosen.randrange(size),
        )
        for _ in range(count)
    ]
    return chains, records


@pytest.mark.parametrize("size", [1000, (1 << 32) + 5])
def test_the_streamed_file_is_the_reference_encoder_s_bytes(
    size: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(draw_file_writer, "FLUSH_SALES", 7)  # many buffers, one partial
    chains, records = _records(100, size, seed=size)
    values = {(r.chain_id, r.round): hashlib.sha256(b"%d" % r.round).digest() for r in records}
    values[str(chains[0]["chain_id"]), 999] = bytes(32)  # a round no sale used: not written
    expected = encode_draw_file(BLOCK, size, chains, values, records)
    out = io.BytesIO()
    with DrawFileWriter(BLOCK, size, tmp_path) as writer:
        for r in records:
            writer.add(r.receipt_sha256, r.chain_id, r.round, r.slot, r.unit)
        digest = writer.write(out, chains, values)
    assert out.getvalue() == expected
    assert digest == hashlib.sha256(expected).hexdigest()
    assert list(tmp_path.iterdir()) == []  # its spools are anonymous


def test_a_draw_whose_round_the_log_lacks_is_refused(tmp_path: Path) -> None:
    chains, records = _records(5, 100, seed=1)
    with DrawFileWriter(BLOCK, 100, tmp_path) as writer:
        for r in records:
            writer.add(r.receipt_sha256, r.chain_id, r.round, r.slot, r.unit)
        with pytest.raises(VerificationFailed, match="a round or chain the log lacks"):
            writer.write(io.BytesIO(), chains, {})
