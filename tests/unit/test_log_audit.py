"""A monitor's rules over the log: a clean log passes, each way of cheating is named."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from grattage.blocks.key_history import make_key_change
from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.signing import Signer, canonical_json
from grattage.blocks.tlog import Frontier, consistency_path, entry_leaf_hash
from grattage.errors import VerificationFailed

OPERATOR = Signer(bytes(range(32)))
BLOCK = "ab" * 16
TIME = "2026-12-01T12:00:00.000000Z"


def commitment(signer: Signer = OPERATOR, block_id: str = BLOCK) -> dict[str, Any]:
    return signer.sign_document(
        "commitment",
        {
            "format": "grattage-commitment/2",
            "block_id": block_id,
            "game": "cash",
            "rules_version": "cash/2009-03-16/design-v2",
            "price_cents": 500,
            "size": 4,
            "table": {"block_size": 4, "tiers": [{"prize_cents": 1000, "count": 1}]},
            "table_sha256": "00" * 32,
            "leaf": "grattage-unit/2",
            "root": "11" * 32,
            "created_at": TIME,
            "key_id": signer.key_id,
        },
    )


def receipt(sequence: int, position: int, stake: int = 500, signer: Signer = OPERATOR) -> Any:
    return signer.sign_document(
        "receipt",
        {
            "format": "grattage-receipt/1",
            "ticket_id": 100 + sequence,
            "player": "cd" * 16,
            "block_id": BLOCK,
            "sequence": sequence,
            "position": position,
            "stake_cents": stake,
            "time": TIME,
            "commitment_index": 0,
            "key_id": signer.key_id,
        },
    )


def entry(kind: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "kind": kind, "time": TIME, **fields}


def clean_log() -> list[dict[str, Any]]:
    return [
        entry("block.commitment", commitment=commitment()),
        entry("block.opened", block_id=BLOCK, commitment_index=0),
        entry("sale.receipt", receipt=receipt(0, 0)),
        entry("sale.receipt", receipt=receipt(1, 1)),
        entry(
            "block.ended",
            block_id=BLOCK,
            commitment_index=0,
            reason="closed",
            units_sold=2,
            units_never_sold=2,
            prizes_never_sold=[{"prize_cents": 1000, "count": 1}],
        ),
    ]


class Log:
    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = entries
        self.nodes: dict[tuple[int, int], bytes] = {}
        frontier = Frontier()
        for item in entries:
            for level, index, digest in frontier.append(entry_leaf_hash(canonical_json(item))):
                self.nodes[(level, index)] = digest
        self.head = OPERATOR.sign_tree_head(len(entries), 1, frontier.root())

    def node(self, level: int, index: int) -> bytes:
        return self.nodes[(level, index)]


def audit(entries: list[dict[str, Any]], auditor: LogAuditor | None = None) -> LogAuditor:
    auditor = auditor or LogAuditor(OPERATOR.public_key)
    log = Log(entries)
    auditor.check_head(log.head)
    for index in range(auditor.frontier.size, len(entries)):
        auditor.feed(index, entries[index])
    auditor.accept_head(log.head)
    return auditor


def test_a_clean_log_passes_and_its_state_round_trips() -> None:
    auditor = audit(clean_log())
    again = LogAuditor.from_json(auditor.to_json())
    assert again.frontier.root() == auditor.frontier.root()
    assert again.blocks[BLOCK].next_sequence == 2


def broken(change: str) -> list[dict[str, Any]]:
    entries = clean_log()
    if change == "sale before opening":
        entries.insert(1, entry("sale.receipt", receipt=receipt(0, 0)))
    elif change == "sequence gap":
        entries[3] = entry("sale.receipt", receipt=receipt(2, 1))
    elif change == "position twice":
        entries[3] = entry("sale.receipt", receipt=receipt(1, 0))
    elif change == "wrong stake":
        entries[3] = entry("sale.receipt", receipt=receipt(1, 1, stake=200))
    elif change == "forged receipt":
        entries[3] = entry("sale.receipt", receipt=receipt(1, 1, signer=Signer(bytes(32))))
    elif change == "edited receipt":
        entries[3]["receipt"]["ticket_id"] = 7
    elif change == "ended count":
        entries[4]["units_sold"] = 1
    elif change == "never sold not in table":
        entries[4]["prizes_never_sold"] = [{"prize_cents": 1600000, "count": 1}]
    elif change == "block without commitment":
        entries[1] = entry("block.opened", block_id="ef" * 16, commitment_index=0)
    elif change == "committed twice":
        entries.insert(1, entry("block.commitment", commitment=commitment()))
    return entries


@pytest.mark.parametrize(
    "change",
    [
        "sale before opening",
        "sequence gap",
        "position twice",
        "wrong stake",
        "forged receipt",
        "edited receipt",
        "ended count",
        "never sold not in table",
        "block without commitment",
        "committed twice",
    ],
)
def test_the_monitor_names_the_entry_that_breaks_a_rule(change: str) -> None:
    with pytest.raises(VerificationFailed, match=r"^entry \d+: "):
        audit(broken(change))


def test_an_entry_rewritten_after_its_head_was_signed_is_caught() -> None:
    entries = clean_log()
    signed = Log(entries).head
    rewritten = copy.deepcopy(entries)
    rewritten[2]["time"] = "2026-12-01T12:00:01.000000Z"
    auditor = LogAuditor(OPERATOR.public_key)
    for index, item in enumerate(rewritten):
        auditor.feed(index, item)
    with pytest.raises(VerificationFailed, match="do not hash to the signed root"):
        auditor.accept_head(signed)


def test_a_forked_log_fails_consistency_with_the_head_seen_before() -> None:
    auditor = audit(clean_log()[:3])
    fork = clean_log()
    fork[2] = entry("sale.receipt", receipt=receipt(0, 3))
    forked = Log(fork)
    proof = consistency_path(forked.node, 3, len(fork))
    with pytest.raises(VerificationFailed, match="not consistent"):
        auditor.check_consistency(forked.head, proof)


def test_a_key_change_signed_by_the_old_key_moves_the_log_to_the_new_key() -> None:
    new = Signer(bytes(range(1, 33)))
    entries = clean_log()[:2]
    entries.append(entry("key.change", key_change=make_key_change(OPERATOR, new, 3, TIME)))
    entries.append(entry("sale.receipt", receipt=receipt(0, 0, signer=new)))
    auditor = LogAuditor(OPERATOR.public_key)
    for index, item in enumerate(entries):
        auditor.feed(index, item)
    assert auditor.public_key == new.public_key
    by_the_new_key_only = new.sign_document("key-change", entries[2]["key_change"])
    entries[2] = entry("key.change", key_change=by_the_new_key_only)
    with pytest.raises(VerificationFailed, match="entry 2: the key change is not signed by"):
        audit(entries)


def published(**fields: Any) -> dict[str, Any]:
    return entry(
        "disclosure.published",
        block_id=BLOCK,
        commitment_index=0,
        sha256="ab" * 32,
        key="cd" * 32,
        **fields,
    )


def test_a_disclosure_is_published_once_and_only_after_its_block_ended() -> None:
    audit([*clean_log(), published()])
    with pytest.raises(VerificationFailed, match=r"^entry 6: disclosure.published .* disclosed"):
        audit([*clean_log(), published(), published()])
    early = clean_log()
    early.insert(4, published())
    with pytest.raises(VerificationFailed, match=r"^entry 4: disclosure.published .* open"):
        audit(early)


def test_the_publication_of_a_block_not_drawn_names_no_draws_file() -> None:
    with pytest.raises(VerificationFailed, match=r"^entry 5: .*not drawn names draws_sha256"):
        audit([*clean_log(), published(draws_sha256="ef" * 32)])


def test_a_block_suspended_before_it_opened_and_then_resumed_is_clean() -> None:
    """The back office may suspend a pending block (committed, never opened); resuming it puts
    it on sale: the log of that is clean."""
    entries = [
        entry("block.commitment", commitment=commitment()),
        entry("block.suspended", block_id=BLOCK, commitment_index=0),
        entry("block.resumed", block_id=BLOCK, commitment_index=0),
        entry("sale.receipt", receipt=receipt(0, 0)),
    ]
    assert audit(entries).blocks[BLOCK].next_sequence == 1


def test_a_receipt_naming_another_unit_than_its_sequence_is_named_at_once() -> None:
    """The outsider of issue 14 queued a signed receipt for sale 3 of unit 777 (here: sale 1, unit 3): until the draw
    is wired, the n-th sale takes unit n, and the monitor names the forged entry itself."""
    entries = clean_log()
    entries[3] = entry("sale.receipt", receipt=receipt(1, 3))
    with pytest.raises(VerificationFailed, match=r"^entry 3: receipt 1 names unit 3"):
        audit(entries)
