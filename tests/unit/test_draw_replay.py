"""The draws file (GDRW) and the fast replay of a drawn block (docs/draw.md, "Replaying a
block", "The draws file"): its bytes (a golden vector), its structure refused when broken, and
the replay agreeing with the draw one sale at a time — or naming the first draw that is wrong."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from array import array
from pathlib import Path

import pytest

from drawn_log import BLOCK_KEY, DrawnLog
from grattage.blocks import replay as replay_module
from grattage.blocks.draw import Resolution, draw_index, replay
from grattage.blocks.draw_file import HEADER, DrawRecord, encode_draw_file, read_draw_file
from grattage.blocks.replay import replay_draws
from grattage.errors import VerificationFailed

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden"
VECTOR = json.loads((GOLDEN / "draws_file_vectors.json").read_text("ascii"))


@pytest.fixture(scope="module")
def drawn() -> DrawnLog:
    log = DrawnLog(size=300)
    log.run(rounds=12, per_round=17)  # 204 sales of 300
    return log


def replayed(log: DrawnLog, data: bytes, workers: int = 1, **changes: bytes):
    arguments = {
        "block_key": BLOCK_KEY,
        "chain_head": log.chain_head,
        "witness_key": log.witness.public_key,
        **changes,
    }
    return replay_draws(read_draw_file(data), workers=workers, **arguments)


def test_the_golden_vector_is_what_the_script_makes():
    spec = importlib.util.spec_from_file_location("dfv", GOLDEN / "draws_file_vectors.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.vectors() == VECTOR


def test_the_golden_file_reads_and_replays_to_its_permutation():
    data = bytes.fromhex(
        VECTOR["header"]
        + len(VECTOR["chain_document"]).to_bytes(4, "big").hex()
        + VECTOR["chain_document"].encode("ascii").hex()
        + VECTOR["rounds"]
        + VECTOR["receipt_hashes"]
        + VECTOR["round_ordinals"]
        + VECTOR["slots"]
        + VECTOR["units"]
    )
    assert hashlib.sha256(data).hexdigest() == VECTOR["file_sha256"]
    draws = read_draw_file(data)
    assert [draws.record(n).slot for n in range(draws.sales)] == [
        d["slot"] for d in VECTOR["draws"]
    ]
    done = replay_draws(
        draws,
        block_key=bytes.fromhex(VECTOR["block_key"]),
        chain_head=bytes.fromhex(VECTOR["chain_head"]),
        witness_key=bytes.fromhex(VECTOR["witness_public_key"]),
        workers=1,
    )
    assert list(done.permutation) == VECTOR["final_permutation"]


def test_the_header_is_the_documented_bytes():
    header = bytes.fromhex(VECTOR["header"])
    assert header[:4] == b"GDRW" and header[4] == 1 and header[5] == 4
    assert int.from_bytes(header[22:30], "big") == 10  # N
    assert int.from_bytes(header[30:38], "big") == 6  # m
    assert int.from_bytes(header[38:42], "big") == 1  # chains
    assert int.from_bytes(header[42:50], "big") == 3  # rounds
    assert len(header) == HEADER.size == 50


@pytest.mark.parametrize("workers", [1, 2])
def test_the_replay_is_the_draw_sale_by_sale(drawn, workers, monkeypatch):
    monkeypatch.setattr(replay_module, "RUN", 50)  # several runs, so two workers share them
    done = replayed(drawn, drawn.draws_file(), workers=workers)
    assert list(done.permutation) == drawn.permutation
    assert done.sales == len(drawn.sales)
    slow = replay(
        [
            Resolution(s.n, s.slot, s.unit, drawn.chain.link(s.n + 1))
            for s in drawn.sales
            if s.slot is not None and s.unit is not None
        ],
        drawn.size,
        chain_head=drawn.chain_head,
    )
    assert list(slow) == drawn.permutation


def test_a_file_written_again_from_what_it_reads_is_the_same_bytes(drawn):
    data = drawn.draws_file()
    draws = read_draw_file(data)
    records = [draws.record(n) for n in range(draws.sales)]
    values = {
        (chain_id, number): drawn.beacon.link(number)
        for chain_id, number in {(r.chain_id, r.round) for r in records}
    }
    again = encode_draw_file(draws.block_id, draws.size, draws.chains, values, records)
    assert again == data


def _with_record(log: DrawnLog, n: int, **change: object) -> bytes:
    records = log.records()
    fields = {**records[n].__dict__, **change}
    records[n] = DrawRecord(**fields)  # type: ignore[arg-type]
    values = {(r.chain_id, r.round): log.beacon.link(r.round) for r in records}
    return encode_draw_file(
        bytes.fromhex(log.commitment["block_id"]), log.size, [log.chain_document], values, records
    )


def test_a_slot_that_is_not_the_re_derived_one_is_named(drawn):
    wrong = (drawn.sales[57].slot + 1) % drawn.size or 57
    with pytest.raises(VerificationFailed, match="draw 57: the slot re-derived"):
        replayed(drawn, _with_record(drawn, 57, slot=max(wrong, 57)), workers=2)


def test_a_draw_recomputed_with_another_round_is_named(drawn):
    with pytest.raises(VerificationFailed, match="draw 30: the slot re-derived"):
        replayed(drawn, _with_record(drawn, 30, round=drawn.sales[30].round + 1))


def test_a_receipt_hash_that_is_not_the_drawn_one_is_named(drawn):
    with pytest.raises(VerificationFailed, match="draw 3: the slot re-derived"):
        replayed(drawn, _with_record(drawn, 3, receipt_sha256=bytes(32)))


def test_a_unit_drawn_twice_is_named(drawn):
    twice = drawn.sales[10].unit
    with pytest.raises(
        VerificationFailed, match=f"unit {twice} sold twice: to sale 10, then to sale 11"
    ):
        replayed(drawn, _with_record(drawn, 11, unit=twice))


def test_a_draw_with_another_chain_link_is_refused(drawn):
    """The links come from the disclosed block key: another key, another chain, refused."""
    with pytest.raises(VerificationFailed, match="chain_head"):
        replayed(drawn, drawn.draws_file(), block_key=bytes(32))


def test_a_round_value_that_is_not_the_witness_s_is_refused(drawn):
    data = bytearray(drawn.draws_file())
    draws = read_draw_file(bytes(data))
    chain_bytes = len(json.dumps(draws.chains[0], sort_keys=True, separators=(",", ":")))
    offset = HEADER.size + 4 + chain_bytes + 12  # the first round's value
    data[offset] ^= 1
    with pytest.raises(VerificationFailed, match="is not that chain's"):
        replayed(drawn, bytes(data))


def test_a_chain_the_witness_did_not_sign_is_refused(drawn):
    with pytest.raises(VerificationFailed, match="witness"):
        replayed(drawn, drawn.draws_file(), witness_key=drawn.operator.public_key)


@pytest.mark.parametrize(
    "cut",
    [
        lambda data: data[:-1],
        lambda data: data + b"\x00",
        lambda data: b"GDRX" + data[4:],
        lambda data: data[:4] + b"\x02" + data[5:],
        lambda data: data[:5] + b"\x08" + data[6:],  # width 8 for a block of 300 units
        lambda data: data[:10],
    ],
    ids=["short", "long", "magic", "version", "width", "header"],
)
def test_a_file_with_the_wrong_structure_is_refused(drawn, cut):
    with pytest.raises(VerificationFailed):
        read_draw_file(cut(drawn.draws_file()))


def test_a_chain_document_that_is_not_canonical_is_refused(drawn):
    data = drawn.draws_file()
    start = HEADER.size + 4
    assert data[start : start + 1] == b"{"
    spaced = data[:start] + b" " + data[start + 1 :]  # same length, no longer canonical JSON
    with pytest.raises(VerificationFailed, match="chain"):
        read_draw_file(spaced)


def test_rounds_out_of_order_are_refused(drawn):
    records = drawn.records()
    values = {(r.chain_id, r.round): drawn.beacon.link(r.round) for r in records}
    data = bytearray(
        encode_draw_file(
            bytes.fromhex(drawn.commitment["block_id"]),
            drawn.size,
            [drawn.chain_document],
            values,
            records,
        )
    )
    draws = read_draw_file(bytes(data))
    start = len(data) - draws.sales * (32 + 4 + 8) - len(draws.rounds) * 44
    first, second = data[start : start + 44], data[start + 44 : start + 88]
    data[start : start + 88] = second + first
    with pytest.raises(VerificationFailed, match="sorted"):
        read_draw_file(bytes(data))


def test_docs_quote_the_vector_s_bytes():
    docs = (Path(__file__).parents[2] / "docs" / "draw.md").read_text("utf-8")
    flat = " ".join(docs.split()).replace(" ", "")
    assert VECTOR["header"] in flat
    for value in (VECTOR["file_sha256"], VECTOR["block_key"], VECTOR["chain_head"]):
        assert value in docs
    slots = [int(VECTOR["slots"][i : i + 8], 16) for i in range(0, len(VECTOR["slots"]), 8)]
    units = [int(VECTOR["units"][i : i + 8], 16) for i in range(0, len(VECTOR["units"]), 8)]
    assert (
        f"the slots `{' '.join(map(str, slots))}`, the units `{' '.join(map(str, units))}`" in docs
    )


def test_the_fast_derivation_takes_the_exact_path_when_a_word_may_be_rejected():
    """A block of 2^63 + 100 units: for its first sales about half the words fall in the
    rejection zone, where the fast test defers to draw_index's exact loop; every slot is still
    draw_index's."""
    size, block_id = 2**63 + 100, bytes(range(16))
    values = [hashlib.sha256(b"round %d" % r).digest() for r in range(4)]
    hashes = [hashlib.sha256(b"receipt %d" % n).digest() for n in range(64)]
    links = [hashlib.sha256(b"link %d" % n).digest() for n in range(64)]
    ordinals = array("I", (n % 4 for n in range(64)))
    replay_module._start_worker(block_id, size, b"".join(values))
    first, slots = replay_module.derive_slots((0, b"".join(hashes), ordinals, b"".join(links)))
    assert first == 0
    expected = [
        draw_index(values[n % 4], links[n], block_id, n, size, hashes[n]) for n in range(64)
    ]
    assert list(slots) == expected
