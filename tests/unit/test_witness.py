"""The witness (grattage.service.witness over its SQLite store): rounds, chains, cosigning."""

from __future__ import annotations

import base64

import pytest

from grattage.adapters.witness_store import SqliteWitnessStore
from grattage.blocks.beacon import check_chain, check_cosignature, check_round
from grattage.blocks.signing import Signer
from grattage.errors import (
    InconsistentHead,
    InvalidInput,
    NotFound,
    RoundClosed,
    VerificationFailed,
)
from grattage.service.witness import Witness, initialise
from operator_log import OperatorLog

PERIOD = 1000
LENGTH = 50
START = 1_800_000_000_000


class FakeClock:
    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


@pytest.fixture
def clock():
    return FakeClock(START - PERIOD)  # init at this time: round 1 at START


@pytest.fixture
def operator():
    return OperatorLog()


def make_witness(tmp_path, clock, operator, length=LENGTH):
    store = SqliteWitnessStore(tmp_path / "witness", create=True)
    if not store.chains():
        initialise(store, clock(), PERIOD, length)
    return Witness(store, clock, operator.signer.public_key, PERIOD, length)


@pytest.fixture
def witness(tmp_path, clock, operator):
    return make_witness(tmp_path, clock, operator)


def witness_key(witness):
    return bytes.fromhex(witness.key()["public_key"])


def test_each_round_is_the_next_link_down_the_published_chain(witness, clock):
    chain = check_chain(witness.chain_document(), witness_key(witness))
    assert chain.start_ms == START and chain.period_ms == PERIOD and chain.length == LENGTH
    known = None
    for r in range(1, 6):
        clock.now_ms = START + (r - 1) * PERIOD
        checked = check_round(witness.round_document(r), chain, witness_key(witness), known)
        assert checked.round == r and checked.time_ms == clock.now_ms
        assert check_round(witness.latest_round_document(), chain, witness_key(witness)) == checked
        known = (r, checked.value)


def test_a_round_is_not_published_one_millisecond_before_its_time(witness, clock):
    clock.now_ms = START + 2 * PERIOD - 1
    witness.round_document(2)
    with pytest.raises(NotFound):
        witness.round_document(3)


def test_no_round_is_published_before_the_chain_starts(witness, clock):
    with pytest.raises(NotFound):
        witness.latest_round_document()


@pytest.mark.parametrize("round_number", [0, LENGTH + 1])
def test_a_round_outside_the_chain_is_bad_input(witness, clock, round_number):
    with pytest.raises(InvalidInput):
        witness.round_document(round_number)


def test_a_round_whose_value_does_not_hash_down_to_the_head_is_refused(witness, clock):
    clock.now_ms = START + 4 * PERIOD
    key = witness_key(witness)
    chain = check_chain(witness.chain_document(), key)
    round_five = witness.round_document(5)
    forged = Signer(witness._store.signing_key()).sign_document(
        "beacon-round", {**round_five, "value": witness.round_document(4)["value"]}
    )
    with pytest.raises(VerificationFailed, match="does not hash down"):
        check_round(forged, chain, key)


def test_a_round_signed_by_another_key_is_refused(witness, clock):
    clock.now_ms = START
    key = witness_key(witness)
    chain = check_chain(witness.chain_document(), key)
    round_one = witness.round_document(1)
    other = Signer(Signer.new_private_key())
    forged = other.sign_document("beacon-round", {**round_one, "key_id": other.key_id})
    with pytest.raises(VerificationFailed):
        check_round(forged, chain, key)
    tampered = {**round_one, "time_ms": round_one["time_ms"] + 1}
    with pytest.raises(VerificationFailed):
        check_round(tampered, chain, key)


def test_a_round_a_period_late_or_early_breaks_the_schedule(witness, clock):
    clock.now_ms = START
    chain = check_chain(witness.chain_document(), witness_key(witness))
    signer = Signer(witness._store.signing_key())
    early = signer.sign_document("beacon-round", {**witness.round_document(1), "time_ms": 1})
    with pytest.raises(VerificationFailed, match="schedule"):
        check_round(early, chain, witness_key(witness))


def test_a_chain_document_whose_id_is_not_its_head_hash_is_refused(witness):
    signer = Signer(witness._store.signing_key())
    document = signer.sign_document("beacon-chain", {**witness.chain_document(), "head": "00" * 32})
    with pytest.raises(VerificationFailed, match="chain_id"):
        check_chain(document, witness_key(witness))


def test_a_head_cosigned_before_its_round_carries_a_checkable_cosignature(witness, clock, operator):
    operator.append(3)
    head = operator.head()
    clock.now_ms = START + 500
    document = witness.cosign(head.to_json(), 2, [])
    chain = check_chain(witness.chain_document(), witness_key(witness))
    checked = check_cosignature(document, witness_key(witness), head, chain)
    assert (checked.round, checked.tree_size, checked.time_ms) == (2, 3, START + 500)
    assert witness.cosigned(2) == [{"sth": head.to_json(), "cosignature": document}]
    assert witness.last_cosigned()["cosignature"] == document


def test_a_cosignature_is_refused_for_a_round_already_published(witness, clock, operator):
    operator.append(3)
    clock.now_ms = START + PERIOD  # round 2's time: published
    with pytest.raises(RoundClosed, match="already published"):
        witness.cosign(operator.head().to_json(), 2, [])
    assert witness.cosigned(2) == []


def test_a_cosignature_is_refused_for_a_round_more_than_two_periods_ahead(witness, clock, operator):
    operator.append(1)
    clock.now_ms = START
    witness.cosign(operator.head().to_json(), 3, [])  # two periods ahead: fine
    with pytest.raises(RoundClosed, match="ahead"):
        witness.cosign(operator.head().to_json(), 4, [])


def test_a_head_that_extends_the_last_cosigned_is_cosigned(witness, clock, operator):
    clock.now_ms = START
    operator.append(5)
    witness.cosign(operator.head().to_json(), 2, [])
    operator.append(7)
    witness.cosign(operator.head().to_json(), 2, [n.hex() for n in operator.consistency(5)])
    assert [h["sth"]["tree_size"] for h in witness.cosigned(2)] == [5, 12]


def test_a_head_with_a_consistency_proof_that_fails_is_refused(witness, clock, operator):
    clock.now_ms = START
    operator.append(5)
    witness.cosign(operator.head().to_json(), 2, [])
    rewritten = OperatorLog(operator.signer, history="rewritten")
    rewritten.append(12)  # other entries: the first five no longer the ones cosigned
    proof = [n.hex() for n in rewritten.consistency(5)]
    with pytest.raises(InconsistentHead, match="does not extend"):
        witness.cosign(rewritten.head().to_json(), 2, proof)
    assert [h["sth"]["tree_size"] for h in witness.cosigned(2)] == [5]


def test_a_split_view_same_size_another_root_is_refused(witness, clock, operator):
    clock.now_ms = START
    operator.append(5)
    witness.cosign(operator.head().to_json(), 2, [])
    witness.cosign(operator.head().to_json(), 2, [])  # the same head again: fine
    other = OperatorLog(operator.signer, history="shown to someone else")
    other.append(5)
    with pytest.raises(InconsistentHead, match="split view"):
        witness.cosign(other.head().to_json(), 2, [])


def test_a_head_older_than_the_last_cosigned_is_refused(witness, clock, operator):
    clock.now_ms = START
    operator.append(5)
    older = operator.head()
    operator.append(5)
    witness.cosign(operator.head().to_json(), 2, [])
    with pytest.raises(InconsistentHead, match="older"):
        witness.cosign(older.to_json(), 2, [])


def test_a_head_not_signed_by_the_pinned_operator_key_is_refused(witness, clock):
    clock.now_ms = START
    impostor = OperatorLog()
    impostor.append(2)
    with pytest.raises(VerificationFailed):
        witness.cosign(impostor.head().to_json(), 2, [])
    assert witness.cosigned(2) == []


@pytest.mark.parametrize("proof", [["zz"], ["00" * 31], [7]])
def test_a_malformed_consistency_proof_is_bad_input(witness, clock, operator, proof):
    clock.now_ms = START
    operator.append(2)
    with pytest.raises(InvalidInput):
        witness.cosign(operator.head().to_json(), 2, proof)


def test_a_cosignature_does_not_verify_for_another_head_or_after_its_round(
    witness, clock, operator
):
    clock.now_ms = START
    operator.append(2)
    head = operator.head()
    document = witness.cosign(head.to_json(), 2, [])
    key = witness_key(witness)
    chain = check_chain(witness.chain_document(), key)
    operator.append(1)
    with pytest.raises(VerificationFailed, match="another tree head"):
        check_cosignature(document, key, operator.head(), chain)
    signer = Signer(witness._store.signing_key())
    late = signer.sign_document("cosignature", {**document, "time_ms": START + PERIOD})
    with pytest.raises(VerificationFailed, match="after round 2"):
        check_cosignature(late, key, head, chain)
    bad = {**document, "signature": base64.b64encode(bytes(64)).decode()}
    with pytest.raises(VerificationFailed):
        check_cosignature(bad, key, head)


def test_a_restarted_witness_keeps_its_chain_and_its_last_cosigned_head(tmp_path, clock, operator):
    first = make_witness(tmp_path, clock, operator)
    clock.now_ms = START
    operator.append(4)
    first.cosign(operator.head().to_json(), 2, [])
    round_one = first.round_document(1)
    again = make_witness(tmp_path, clock, operator)
    assert again.chain_document() == first.chain_document()
    assert again.round_document(1) == round_one
    assert again.last_cosigned()["sth"]["tree_size"] == 4
    operator.append(1)
    with pytest.raises(InconsistentHead):
        again.cosign(operator.head().to_json(), 2, [])  # the proof from 4 is missing


def test_a_witness_whose_clock_went_back_still_refuses_a_round_it_published(
    tmp_path, clock, operator
):
    witness = make_witness(tmp_path, clock, operator)
    clock.now_ms = START + 5 * PERIOD
    witness.tick()
    clock.now_ms = START  # the machine's clock set back, the witness restarted
    again = make_witness(tmp_path, clock, operator)
    operator.append(1)
    with pytest.raises(RoundClosed):
        again.cosign(operator.head().to_json(), 3, [])
    again.round_document(6)


def test_the_next_chain_is_published_before_the_current_one_runs_out(tmp_path, operator):
    clock = FakeClock(START - PERIOD)
    witness = make_witness(tmp_path, clock, operator, length=10)
    key = witness_key(witness)
    first = check_chain(witness.chain_document(), key)
    clock.now_ms = START + 7 * PERIOD
    witness.tick()
    assert len(witness.chain_documents()) == 1
    clock.now_ms = START + 8 * PERIOD
    witness.tick()
    second = check_chain(witness.chain_documents()[1], key)
    assert second.start_ms == first.end_ms() and second.head != first.head
    assert check_chain(witness.chain_document(), key) == first  # still the current one
    clock.now_ms = first.end_ms()
    assert check_chain(witness.chain_document(), key) == second
    assert check_round(witness.latest_round_document(), second, key).round == 1
    assert check_round(witness.round_document(10, first.chain_id), first, key).round == 10
    restarted = make_witness(tmp_path, clock, operator, length=10)  # the old chain loads lazily
    assert restarted.round_document(10, first.chain_id) == witness.round_document(
        10, first.chain_id
    )


def test_a_witness_without_a_chain_tells_to_run_init(tmp_path, clock, operator):
    with pytest.raises(InvalidInput, match="witness init"):
        SqliteWitnessStore(tmp_path / "nothing")
    store = SqliteWitnessStore(tmp_path / "empty", create=True)
    with pytest.raises(InvalidInput, match="witness init"):
        Witness(store, clock, operator.signer.public_key, PERIOD, LENGTH)


def test_heads_of_two_forks_cosigned_at_once_never_both_get_a_cosignature(
    tmp_path, clock, operator
):
    import copy
    from concurrent.futures import ThreadPoolExecutor

    witness = make_witness(tmp_path, clock, operator)
    clock.now_ms = START
    operator.append(5)
    witness.cosign(operator.head().to_json(), 2, [])
    forks = []
    for name in ("shown to Alice", "shown to Bob"):
        fork = copy.deepcopy(operator)
        fork.history = name
        fork.append(5)
        forks.append((fork.head().to_json(), [n.hex() for n in fork.consistency(5)]))
    # Each thread its own witness over the same files: as separate processes would be.
    witnesses = [make_witness(tmp_path, clock, operator) for _ in range(8)]

    def attempt(index):
        sth, proof = forks[index % 2]
        try:
            witnesses[index % 8].cosign(sth, 2, proof)
        except InconsistentHead:
            return None
        return sth["root_hash"]

    with ThreadPoolExecutor(16) as pool:
        roots = {root for root in pool.map(attempt, range(64)) if root is not None}
    assert len(roots) == 1
    assert {h["sth"]["root_hash"] for h in witness.cosigned(2)[1:]} == roots


def test_a_round_is_published_only_once_every_cosigning_decided_before_it_is_stored(
    tmp_path, clock, operator
):
    """CI found it: a cosigning read the clock before round 84's time and committed a moment
    after; the round was published and its list read in that moment, without that head. The
    operator then drew the head's receipts late, and the monitor named it a chosen round."""
    import threading

    decided, release = threading.Event(), threading.Event()

    class SlowToStore(SqliteWitnessStore):
        def cosign_atomically(self, decide):
            def decide_then_stall(last):
                head = decide(last)
                decided.set()
                release.wait(5)  # the signature made, not yet stored
                return head

            return super().cosign_atomically(decide_then_stall)

    store = SlowToStore(tmp_path / "witness", create=True)
    initialise(store, clock(), PERIOD, LENGTH)
    witness = Witness(store, clock, operator.signer.public_key, PERIOD, LENGTH)
    operator.append(3)
    head = operator.head().to_json()
    clock.now_ms = START + 2 * PERIOD - 1  # round 3's last millisecond
    cosigning = threading.Thread(target=witness.cosign, args=(head, 3, []))
    cosigning.start()
    assert decided.wait(5)
    clock.now_ms = START + 2 * PERIOD  # round 3's time: it may be published
    seen: dict[str, object] = {}

    def publish_and_list() -> None:
        seen["round"] = witness.round_document(3)
        seen["heads"] = witness.cosigned(3)

    reader = threading.Thread(target=publish_and_list)
    reader.start()
    reader.join(0.3)
    release.set()
    cosigning.join(5)
    reader.join(5)
    assert [h["sth"] for h in seen["heads"]] == [head]
