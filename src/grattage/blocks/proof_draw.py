"""The draw in a drawn ticket's proof (docs/fairness.md, "A drawn ticket's proof"): the checks
``verify-ticket`` makes to recompute which unit the sale got — standard library and
``cryptography`` only.

The proof's ``draw`` member carries log entries, each ``{"index", "entry", "path"}`` with its
inclusion path in the proof's head: the sale's ``sale.drawn`` (``drawn_entry``); the block's
receipt before this one (``previous_entry``, null for sale 0); the ``sale.drawn`` entries that
last set slots n and j (``n_set_entry``, ``j_set_entry``, null when no draw did, or when j = n).
And the witness's own signed documents, which need no log to prove themselves: the round's
``chain`` and ``round``, and ``cosigned``, a head the witness cosigned for the round that covers
the receipt (``{"sth", "cosignature"}``), with ``consistency``, the RFC 9162 proof from that head
to the proof's head.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from grattage.blocks.beacon import check_chain, check_cosignature, check_round
from grattage.blocks.draw import draw_index
from grattage.blocks.hashchain import hash_times
from grattage.blocks.key_history import KeyChain
from grattage.blocks.replay import swap_and_check
from grattage.blocks.signing import TreeHead, canonical_json
from grattage.blocks.tlog import entry_leaf_hash, verify_consistency, verify_inclusion
from grattage.errors import VerificationFailed

DRAW_VERSION = "grattage-draw/1"
RECEIPT_V2_FORMAT = "grattage-receipt/2"


@dataclass(frozen=True)
class DrawnSale:
    n: int
    slot: int
    unit: int
    chain_id: str
    round: int
    late: bool
    """Drawn with a later round than its receipt names: the proof shows a head cosigned for the
    round drawn with covers the receipt, not that no earlier round's did (the witness can)."""
    leaf: str
    """The unit's leaf as the draw logged it (hex): the proof's unit must hash to it."""
    receipt_round: int = 0
    """The round the receipt names (of chain ``receipt_chain_id``)."""
    receipt_chain_id: str = ""
    receipt_index: int = 0
    """The receipt's index in the log: a head of a larger size covers it."""


def _included(part: Any, kind: str, head: TreeHead, what: str) -> tuple[int, Mapping[str, Any]]:
    if not isinstance(part, Mapping):
        raise VerificationFailed(f"the proof's draw has no {what}")
    index, entry, path = part.get("index"), part.get("entry"), part.get("path")
    if not isinstance(index, int) or not isinstance(entry, Mapping) or not isinstance(path, list):
        raise VerificationFailed(f"the proof's {what} is malformed")
    if entry.get("kind") != kind:
        raise VerificationFailed(f"the proof's {what} is a {entry.get('kind')!r} entry, not {kind}")
    leaf = entry_leaf_hash(canonical_json(entry))
    if not verify_inclusion(
        leaf, index, head.tree_size, [bytes.fromhex(p) for p in path], head.root_hash
    ):
        raise VerificationFailed(
            f"the {what} is not included in the signed tree head of size {head.tree_size}"
        )
    return index, entry


def _unit_before(
    draw: Mapping[str, Any], member: str, setter: Any, slot: int, n: int, block: str, head: TreeHead
) -> int:
    """The unit slot ``slot`` held before sale n's swap: its own, or the one the draw that
    last set it put there."""
    if setter is None:
        if draw.get(member) is not None:
            raise VerificationFailed(f"the draw names no setter of slot {slot}, the proof one")
        return slot
    _, entry = _included(draw.get(member), "sale.drawn", head, f"draw that set slot {slot}")
    if entry.get("block_id") != block or entry.get("sequence") != setter or not setter < n:
        raise VerificationFailed(f"the draw that set slot {slot} is not sale {setter!r}'s")
    if entry.get("slot") != slot:
        raise VerificationFailed(f"sale {setter}'s draw did not set slot {slot}")
    return int(entry["slot_unit"])


def verify_draw(
    draw: Any,
    *,
    commitment: Mapping[str, Any],
    receipt: Mapping[str, Any],
    receipt_index: int,
    head: TreeHead,
    keys: KeyChain,
) -> DrawnSale:
    """Recompute the draw of the sale ``receipt`` (at log index ``receipt_index``): raise
    :class:`VerificationFailed` naming the first thing that does not hold."""
    if not isinstance(draw, Mapping):
        raise VerificationFailed("the proof of a drawn block's ticket has no draw")
    try:
        return _verify(draw, commitment, receipt, receipt_index, head, keys)
    except VerificationFailed:
        raise
    except KeyError as exc:  # said in words: an exception's name means nothing to a player
        raise VerificationFailed(f"malformed draw: it has no {exc.args[0]!r} member") from None
    except (AttributeError, TypeError, ValueError):
        raise VerificationFailed(
            "malformed draw: a member of the proof's draw has the wrong type or value"
        ) from None


def _verify(
    draw: Mapping[str, Any],
    commitment: Mapping[str, Any],
    receipt: Mapping[str, Any],
    receipt_index: int,
    head: TreeHead,
    keys: KeyChain,
) -> DrawnSale:
    if commitment.get("draw") != DRAW_VERSION or receipt.get("format") != RECEIPT_V2_FORMAT:
        raise VerificationFailed(f"a drawn block's receipt is {RECEIPT_V2_FORMAT}")
    block, size = str(commitment["block_id"]), int(commitment["size"])
    if commitment["chain_length"] != size:
        raise VerificationFailed("the commitment's chain is not as long as its block")
    n = receipt["sequence"]
    if not isinstance(n, int) or not 0 <= n < size:
        raise VerificationFailed(f"sale {n!r} is not in a block of {size} units")
    receipt_hash = hashlib.sha256(canonical_json(receipt)).digest()
    _check_previous(draw, commitment, receipt, receipt_index, head, keys)
    _, drawn = _included(draw.get("drawn_entry"), "sale.drawn", head, "sale's draw")
    expected = {
        "block_id": block,
        "commitment_index": receipt["commitment_index"],
        "sequence": n,
        "receipt_index": receipt_index,
        "receipt_sha256": receipt_hash.hex(),
    }
    for name, value in expected.items():
        if drawn.get(name) != value:
            raise VerificationFailed(f"the draw's {name} is {drawn.get(name)!r}, not {value!r}")
    beacon = (drawn["beacon"]["chain_id"], drawn["beacon"]["round"])
    value = _check_round(draw, commitment, beacon, receipt_index, head, keys)
    own = (receipt["beacon"]["chain_id"], receipt["beacon"]["round"])
    if own[0] == beacon[0] and own[1] > beacon[1]:
        raise VerificationFailed(
            f"the sale of round {own[1]} was drawn with the earlier round {beacon[1]}"
        )
    # the operator's link d_{n+1}, then j, then the unit the swap gives slot n
    link = bytes.fromhex(drawn["link"])
    if len(link) != 32 or hash_times(link, n + 1) != bytes.fromhex(commitment["chain_head"]):
        raise VerificationFailed(f"the draw's link is not link {n + 1} of the committed chain")
    j = draw_index(value, link, bytes.fromhex(block), n, size, receipt_hash)
    if drawn["slot"] != j:
        raise VerificationFailed(
            f"the slot re-derived from the round, the link and the receipt is {j}, not "
            f"{drawn['slot']!r}"
        )
    unit = _check_swap(draw, drawn, n, j, block, head)
    return DrawnSale(
        n=n,
        slot=j,
        unit=unit,
        chain_id=beacon[0],
        round=beacon[1],
        late=own != beacon,
        leaf=str(drawn["leaf"]),
        receipt_round=own[1],
        receipt_chain_id=own[0],
        receipt_index=receipt_index,
    )


def _check_previous(
    draw: Mapping[str, Any],
    commitment: Mapping[str, Any],
    receipt: Mapping[str, Any],
    receipt_index: int,
    head: TreeHead,
    keys: KeyChain,
) -> None:
    """The receipt's chain link: the hash of the block's receipt before it (or of the
    commitment, for sale 0)."""
    n = receipt["sequence"]
    if n == 0:
        if draw.get("previous_entry") is not None:
            raise VerificationFailed("sale 0 has no previous receipt")
        previous = hashlib.sha256(canonical_json(commitment)).digest()
    else:
        at, entry = _included(draw.get("previous_entry"), "sale.receipt", head, "previous receipt")
        before = entry["receipt"]
        keys.check_document("receipt", before, at)
        if (
            before.get("block_id") != commitment["block_id"]
            or before.get("sequence") != n - 1
            or not at < receipt_index
        ):
            raise VerificationFailed(f"the previous receipt is not sale {n - 1}'s of this block")
        previous = hashlib.sha256(canonical_json(before)).digest()
    if bytes.fromhex(receipt["previous"]) != previous:
        raise VerificationFailed(
            "the receipt does not chain on the block's previous receipt: it was inserted or changed"
        )


def _check_round(
    draw: Mapping[str, Any],
    commitment: Mapping[str, Any],
    beacon: tuple[str, int],
    receipt_index: int,
    head: TreeHead,
    keys: KeyChain,
) -> bytes:
    """The round's value, signed by the witness on its chain, with a head it cosigned for it
    (before publishing it) that covers the receipt and that the proof's head extends. The
    witness's documents prove themselves (its key is in the signed commitment)."""
    witness_key = bytes.fromhex(commitment["witness_key"])
    chain = check_chain(draw["chain"], witness_key)
    checked = check_round(draw["round"], chain, witness_key)
    if (checked.chain_id, checked.round) != beacon:
        raise VerificationFailed(f"the round given is not round {beacon[1]} the draw names")
    pair = draw["cosigned"]
    cosigned = TreeHead.from_json(pair["sth"])
    keys.check_head(cosigned)  # the key in force at its size
    cosignature = check_cosignature(pair["cosignature"], witness_key, cosigned, chain)
    if (cosignature.chain_id, cosignature.round) != beacon:
        raise VerificationFailed("the cosigned head is for another round")
    if cosigned.tree_size <= receipt_index:
        raise VerificationFailed(
            f"the head the witness cosigned for round {beacon[1]} does not cover the receipt: "
            "it was logged after the round could be known"
        )
    consistency = [bytes.fromhex(node) for node in draw["consistency"]]
    if not verify_consistency(
        cosigned.tree_size, head.tree_size, cosigned.root_hash, head.root_hash, consistency
    ):
        raise VerificationFailed("the proof's head does not extend the head the witness cosigned")
    return checked.value


def _check_swap(
    draw: Mapping[str, Any], drawn: Mapping[str, Any], n: int, j: int, block: str, head: TreeHead
) -> int:
    """The unit the swap of slots n and j puts in slot n, from the draws that last set them."""
    unit_n = _unit_before(draw, "n_set_entry", drawn["n_set_by"], n, n, block, head)
    if j == n:
        if drawn["j_set_by"] != drawn["n_set_by"] or draw.get("j_set_entry") is not None:
            raise VerificationFailed("slot j is slot n: it has slot n's setter")
        unit_j = unit_n
    else:
        unit_j = _unit_before(draw, "j_set_entry", drawn["j_set_by"], j, n, block, head)
    if drawn["unit"] != unit_j or drawn["slot_unit"] != unit_n:
        raise VerificationFailed(
            f"the swap of slots {n} and {j} gives the sale unit {unit_j}, the draw says "
            f"{drawn['unit']!r}"
        )
    return unit_j


def check_block_draws(size: int, drawn_entries: Iterable[Mapping[str, Any]]) -> int:
    """A block's ``sale.drawn`` entries, all those of a head, in index order: sequences 0, 1,
    2, … without a gap or repeat, each slot in ``[n, size)``, and each unit the one the swap of
    the logged slots puts in slot n, as ``verify-block`` replays them — raise naming the first
    unit sold twice. The slots are not re-derived (that needs every round and link checked:
    the monitor and ``verify-block`` do). How many draws."""
    code = "I" if size <= 1 << 32 else "Q"
    slots, units = array(code), array(code)
    for entry in drawn_entries:
        n, slot, unit = entry.get("sequence"), entry.get("slot"), entry.get("unit")
        if n != len(slots):
            raise VerificationFailed(
                f"the log's draw {n!r} of the block comes where draw {len(slots)} should"
            )
        if not (isinstance(slot, int) and n <= slot < size and isinstance(unit, int)):
            raise VerificationFailed(f"the log's draw {n} names slot {slot!r}, unit {unit!r}")
        if not 0 <= unit < size:
            raise VerificationFailed(f"the log's draw {n} names unit {unit}, not of the block")
        slots.append(slot)
        units.append(unit)
    swap_and_check(size, slots, units)
    return len(slots)
