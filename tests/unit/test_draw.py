"""The draw of docs/draw.md: its bytes (golden vectors), its exactness and its uniformity.

Uniformity is checked by Pearson's chi-square on draws from FIXED inputs (deterministic, never
flaky) at significance 0.001, and each chi-square test is shown to reject a biased draw.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
from collections import Counter
from itertools import permutations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grattage.blocks.draw import (
    Resolution,
    SparsePermutation,
    choose_block,
    draw_index,
    draw_key,
    replay,
)
from grattage.errors import InvalidInput, VerificationFailed

GOLDEN = Path(__file__).parents[1] / "fixtures" / "golden"
VECTORS = json.loads((GOLDEN / "draw_vectors.json").read_text("ascii"))
CRITICAL_AT_0_001 = {2: 13.816, 6: 22.458, 23: 49.728}
BLOCK = bytes(range(16))


def _word(key: bytes, message: bytes) -> int:
    return int.from_bytes(hmac.new(key, message, hashlib.sha256).digest()[:8], "big")


def outsider_draw(w_r: bytes, d_next: bytes, block_id: bytes, n: int, size: int, h: bytes) -> int:
    """docs/draw.md read by someone who never saw grattage's code."""
    key = hashlib.sha256(w_r + d_next).digest()
    bound, c = size - n, 0
    while True:
        msg = b"grattage/draw/1\x00" + block_id + n.to_bytes(8, "big") + h + c.to_bytes(4, "big")
        x = _word(key, msg)
        if x < 2**64 - 2**64 % bound:
            return n + x % bound
        c += 1


def chi_square(counts: Counter[object], expected: dict[object, float]) -> float:
    assert set(counts) <= set(expected)
    return sum((counts.get(k, 0) - e) ** 2 / e for k, e in expected.items())


def test_the_golden_vectors_are_what_the_script_makes():
    spec = importlib.util.spec_from_file_location("draw_vectors", GOLDEN / "draw_vectors.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.vectors() == VECTORS


@pytest.mark.parametrize("vector", VECTORS["unit_draws"], ids=lambda v: f"n={v['n']}")
def test_each_unit_vector_is_recomputed_from_its_bytes(vector):
    w_r, d_next = bytes.fromhex(vector["w_r"]), bytes.fromhex(vector["d_next"])
    block_id, n, size = bytes.fromhex(vector["block_id"]), vector["n"], int(vector["size"])
    receipt_hash = hashlib.sha256(vector["receipt_canonical_json"].encode("ascii")).digest()
    assert receipt_hash.hex() == vector["receipt_hash"]
    assert draw_key(w_r, d_next).hex() == vector["K"]
    key = hashlib.sha256(w_r + d_next).digest()
    for attempt in vector["attempts"]:
        message = (
            b"grattage/draw/1\x00" + block_id + n.to_bytes(8, "big") + receipt_hash
        ) + attempt["c"].to_bytes(4, "big")
        assert hmac.new(key, message, hashlib.sha256).hexdigest() == attempt["U"]
    j = int(vector["j"])
    assert draw_index(w_r, d_next, block_id, n, size, receipt_hash) == j
    assert outsider_draw(w_r, d_next, block_id, n, size, receipt_hash) == j


def test_the_vectors_include_a_rejected_attempt():
    assert any(not v["attempts"][0]["accepted"] for v in VECTORS["unit_draws"])
    assert any(len(v["words"]) > 1 for v in VECTORS["block_choices"])


@pytest.mark.parametrize("vector", VECTORS["block_choices"])
def test_each_block_choice_vector_is_recomputed(vector):
    remaining = [(bytes.fromhex(b), int(left)) for b, left in vector["remaining"]]
    w_r, h = bytes.fromhex(vector["w_r"]), bytes.fromhex(vector["receipt_hash"])
    assert choose_block(w_r, h, remaining).hex() == vector["chosen"]
    assert choose_block(w_r, h, list(reversed(remaining))).hex() == vector["chosen"]


def test_the_replay_vector_rebuilds_its_block():
    vector = VECTORS["block_replay"]
    size, permutation = vector["size"], SparsePermutation(vector["size"])
    block_id = bytes.fromhex(vector["block_id"])
    resolutions = []
    for sale, stored in zip(vector["sales"], vector["stored_after_each_sale"], strict=True):
        n, link = sale["n"], bytes.fromhex(sale["d_next"])
        j = outsider_draw(
            bytes.fromhex(sale["w_r"]),
            link,
            block_id,
            n,
            size,
            bytes.fromhex(sale["receipt_hash"]),
        )
        assert j == sale["j"]
        assert permutation.draw(n, j) == sale["unit"]
        assert permutation.to_bytes().hex() == stored
        resolutions.append(Resolution(n, j, sale["unit"], link))
    dense = replay(resolutions, size, chain_head=bytes.fromhex(vector["d_0"]))
    assert list(dense) == vector["final_permutation"]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.data())
def test_replaying_any_draws_yields_a_permutation_of_the_units(size, data):
    sold = data.draw(st.integers(0, size))
    permutation, resolutions = SparsePermutation(size), []
    for n in range(sold):
        j = data.draw(st.integers(n, size - 1))
        resolutions.append(Resolution(n, j, permutation.draw(n, j)))
    dense = replay(resolutions, size)
    assert sorted(dense) == list(range(size))
    assert [permutation.unit_at(slot) for slot in range(size)] == list(dense)
    assert SparsePermutation.from_bytes(permutation.to_bytes()) == permutation


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=120))
def test_stored_bytes_are_a_permutation_or_refused(data):
    try:
        permutation = SparsePermutation.from_bytes(data)
    except InvalidInput:
        return
    units = [permutation.unit_at(slot) for slot in range(min(permutation.size, 1000))]
    assert len(set(units)) == len(units)


def test_a_stored_permutation_with_a_unit_twice_is_refused():
    good = SparsePermutation(10)
    good.swap(1, 2)
    good.swap(1, 3)  # slots 1, 2, 3 hold units 3, 1, 2
    assert SparsePermutation.from_bytes(good.to_bytes()) == good
    header = good.to_bytes()[:22]
    twice = header + bytes.fromhex("000000010000000200000003000000030000000300000001")
    with pytest.raises(InvalidInput):
        SparsePermutation.from_bytes(twice)


def test_a_block_choice_recomputed_by_an_outsider_agrees():
    for vector in VECTORS["block_choices"]:
        total, limit = int(vector["total"]), 0
        limit = 2**64 - 2**64 % total
        x = next(int(word[:16], 16) for word in vector["words"] if int(word[:16], 16) < limit)
        t = x % total
        for block, left in sorted((b, int(n)) for b, n in vector["remaining"]):
            if t < left:
                assert block == vector["chosen"]
                break
            t -= left


def _resolutions(size: int, sold: int) -> list[Resolution]:
    permutation, found = SparsePermutation(size), []
    for n in range(sold):
        j = outsider_draw(bytes(32), bytes(32), BLOCK, n, size, hashlib.sha256(bytes([n])).digest())
        found.append(Resolution(n, j, permutation.draw(n, j)))
    return found


@pytest.mark.parametrize(
    "tamper",
    [
        lambda r: [r[1], r[0], *r[2:]],  # out of order
        lambda r: r[:2] + r[3:],  # a gap
        lambda r: [*r[:3], r[2], *r[3:]],  # a sale drawn twice
        lambda r: [*r[:2], r[2]._replace(slot=1), *r[3:]],  # j below n
        lambda r: [*r[:2], r[2]._replace(slot=20), *r[3:]],  # j beyond the block
        lambda r: [*r[:2], r[2]._replace(unit=(r[2].unit + 1) % 20), *r[3:]],  # wrong unit
    ],
    ids=["out-of-order", "gap", "twice", "j-below-n", "j-beyond", "wrong-unit"],
)
def test_replay_refuses_a_resolution_that_breaks_a_rule(tamper):
    resolutions = _resolutions(20, 8)
    replay(resolutions, 20)
    with pytest.raises(VerificationFailed):
        replay(tamper(resolutions), 20)


def test_replay_refuses_a_chain_link_that_does_not_hash_to_the_one_before():
    links = [b"\x01" * 32]
    for _ in range(5):
        links.append(hashlib.sha256(links[-1]).digest())
    links.reverse()
    resolutions = [r._replace(link=links[r.sequence + 1]) for r in _resolutions(20, 5)]
    replay(resolutions, 20, chain_head=links[0])
    forged = [*resolutions[:3], resolutions[3]._replace(link=b"\x02" * 32), resolutions[4]]
    with pytest.raises(VerificationFailed):
        replay(forged, 20, chain_head=links[0])


def _j_counts(draw, size: int, trials: int) -> Counter[object]:
    return Counter(draw(size, hashlib.sha256(t.to_bytes(4, "big")).digest()) for t in range(trials))


def test_the_drawn_slot_is_uniform_by_chi_square():
    counts = _j_counts(lambda s, h: draw_index(h, h[::-1], BLOCK, 0, s, h), 7, 70_000)
    assert chi_square(counts, {j: 10_000 for j in range(7)}) < CRITICAL_AT_0_001[6]


def test_the_slot_chi_square_rejects_a_biased_draw():
    def biased(size: int, h: bytes) -> int:  # j = x mod 8 folded onto 7 slots
        return min(_word(h, b"biased") % (size + 1), size - 1)

    counts = _j_counts(biased, 7, 70_000)
    assert chi_square(counts, {j: 10_000 for j in range(7)}) > CRITICAL_AT_0_001[6]


def test_whole_blocks_are_uniform_permutations_by_chi_square():
    seen: Counter[object] = Counter()
    for trial in range(24_000):
        permutation = SparsePermutation(4)
        for n in range(4):
            h = hashlib.sha256(trial.to_bytes(4, "big") + bytes([n])).digest()
            permutation.draw(n, draw_index(h, bytes(32), BLOCK, n, 4, h))
        seen[tuple(permutation.unit_at(s) for s in range(4))] += 1
    assert chi_square(seen, {p: 1000 for p in permutations(range(4))}) < CRITICAL_AT_0_001[23]


def test_the_block_choice_follows_the_units_left_by_chi_square():
    blocks = [(bytes([i]) * 16, left) for i, left in enumerate((1, 2, 4), start=1)]
    seen = Counter(
        choose_block(hashlib.sha256(t.to_bytes(4, "big")).digest(), bytes(32), blocks)[0]
        for t in range(70_000)
    )
    assert chi_square(seen, {1: 10_000, 2: 20_000, 3: 40_000}) < CRITICAL_AT_0_001[2]
    assert chi_square(seen, {1: 70_000 / 3, 2: 70_000 / 3, 3: 70_000 / 3}) > CRITICAL_AT_0_001[2]


def test_a_block_with_no_unit_left_is_never_chosen():
    blocks = [(b"\x01" * 16, 0), (b"\x02" * 16, 3)]
    assert {choose_block(bytes([t]) * 32, bytes(32), blocks) for t in range(200)} == {b"\x02" * 16}


@pytest.mark.parametrize(
    "call",
    [
        lambda: draw_index(bytes(31), bytes(32), BLOCK, 0, 5, bytes(32)),
        lambda: draw_index(bytes(32), bytes(32), BLOCK[:15], 0, 5, bytes(32)),
        lambda: draw_index(bytes(32), bytes(32), BLOCK, 5, 5, bytes(32)),
        lambda: choose_block(bytes(32), bytes(32), [(BLOCK, 0)]),
        lambda: choose_block(bytes(32), bytes(32), [(BLOCK, 1), (BLOCK, 2)]),
        lambda: SparsePermutation(10).draw(3, 2),
    ],
)
def test_impossible_draw_inputs_are_refused(call):
    with pytest.raises(ValueError):
        call()
