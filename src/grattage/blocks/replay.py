"""Replaying every draw of a drawn block, at full size (docs/draw.md, "Replaying a block").

The work is what :func:`grattage.blocks.draw.draw_index` and :func:`~grattage.blocks.draw.replay`
do for each sale, split so that a 12 000 000-unit block replays in well under a minute:

* **the beacon's rounds**: every round value the draws used hashes down, round after round, to
  the head of its witness chain, whose signed document names it (``check_chain``);
* **the operator chain**, from the disclosed block key: ``d_N = HMAC-SHA256(key,
  "grattage/chain/1")`` walked down to ``d_0``, which must be the commitment's ``chain_head``
  — one process, sequential by nature, handing out each run of links as it is walked;
* **re-deriving j**, independent per sale: runs of sales go to worker processes (one per
  core), each re-deriving its runs' slots with the cheapest standard-library calls (HMAC
  written out over OpenSSL's one-shot SHA-256: a quarter less than ``hmac.digest``) and naming
  the first sale whose slot differs from the file's;
* **the swaps**, sequential and cheap: a dense array of the block's units, slot n swapped with
  slot j for n = 0, 1, 2, …; slot n is final once sale n is drawn, so the first m slots are
  then the m units sold, compared with the file's in one array comparison.

Standard library only (and the draws file's format, :mod:`grattage.blocks.draw_file`).
"""

from __future__ import annotations

import hashlib
import hmac
import multiprocessing
import os
import struct
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from grattage.blocks.beacon import BeaconChain, check_chain
from grattage.blocks.draw import DRAW_CONTEXT, draw_index
from grattage.blocks.draw_file import DrawFile
from grattage.blocks.hashchain import hash_times, sha256_32
from grattage.errors import VerificationFailed

RUN = 1 << 16
"""Sales re-derived per task: 2 MB of hashes and links, ~0.1 s of work."""
CHAIN_CONTEXT = b"grattage/chain/1"
_TWO_64 = 1 << 64
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_KEY_PAD = bytes(32)
_ATTEMPT_0 = bytes(4)
_HASH = struct.Struct("32s")
_U64 = struct.Struct(">Q")


def chain_seed(block_key: bytes) -> bytes:
    """``d_N`` of a drawn block (docs/fairness.md, "The commitment of a drawn block")."""
    return hmac.digest(block_key, CHAIN_CONTEXT, "sha256")


def check_round_values(draws: DrawFile, witness_key: bytes) -> list[BeaconChain]:
    """Every round value of the file is its chain's: signed chain documents, and each value
    hashed down to the one of the round before it (the chain's head before the first)."""
    chains = [check_chain(document, witness_key) for document in draws.chains]
    if len({chain.chain_id for chain in chains}) != len(chains):
        raise VerificationFailed("the draws file lists a witness chain twice")
    known = {ordinal: (0, chain.head) for ordinal, chain in enumerate(chains)}
    for ordinal, number, value in draws.rounds:
        below, below_value = known[ordinal]
        if number > chains[ordinal].length or hash_times(value, number - below) != below_value:
            raise VerificationFailed(
                f"round {number} of chain {chains[ordinal].chain_id[:16]}… is not that chain's"
            )
        known[ordinal] = (number, value)
    return chains


# -- the worker's half ---------------------------------------------------------------------
_context: dict[str, Any] = {}


def _start_worker(block_id: bytes, size: int, values: bytes) -> None:
    _context.update(
        prefix=DRAW_CONTEXT + block_id,
        block_id=block_id,
        size=size,
        values=[values[i : i + 32] for i in range(0, len(values), 32)],
    )


Task = tuple[int, bytes, "array[int]", bytes]


def derive_slots(task: Task) -> tuple[int, array[int]]:
    """Re-derive the slots j of the sales ``first, first + 1, …`` of one run.

    ``task`` = (first sale, their receipt hashes H, their round ordinals, their links d_{n+1}
    in increasing n); returns (first, their slots)."""
    first, hashes, ordinals, links = task
    prefix, size, values = _context["prefix"], _context["size"], _context["values"]
    sha256, ipad, opad, pad, attempt = hashlib.sha256, _IPAD, _OPAD, _KEY_PAD, _ATTEMPT_0
    word_of, two_64 = _U64.unpack_from, _TWO_64
    slots = array("I" if size <= 1 << 32 else "Q")
    append = slots.append
    n = first
    for (receipt_hash,), ordinal, (link,) in zip(
        _HASH.iter_unpack(hashes), ordinals, _HASH.iter_unpack(links), strict=True
    ):
        w_r = values[ordinal]
        key = sha256(w_r + link).digest() + pad  # HMAC-SHA256(K, message), written out
        inner = sha256(key.translate(ipad) + prefix + n.to_bytes(8, "big") + receipt_hash + attempt)
        (x,) = word_of(sha256(key.translate(opad) + inner.digest()).digest())
        bound = size - n
        if x < two_64 - bound:  # below the rejection limit, without computing it
            append(n + x % bound)
        else:  # the rare exact path (a chance below 2^-40 a sale in a 12 000 000-unit block)
            append(draw_index(w_r, link, _context["block_id"], n, size, receipt_hash))
        n += 1
    return first, slots


# -- the verifier's half -------------------------------------------------------------------
def _links_descending(seed: bytes, size: int, sales: int) -> Iterator[tuple[int, int, bytes]]:
    """Walk the chain from ``d_N`` down: (first, end, links d_{first+1} … d_end ascending) for
    each run of sales, the last runs first; finally check ``d_0``'s turn in the caller."""
    value = hash_times(seed, size - sales)  # d_m: the links of sales never made
    sha256 = sha256_32
    end = sales
    while end > 0:
        first = max(0, end - RUN)
        walked = [value]
        append = walked.append
        for _ in repeat(None, end - first):
            value = sha256(value).digest()
            append(value)
        walked.pop()  # d_first: the next run's top, not this run's
        walked.reverse()
        yield first, end, b"".join(walked)
        end = first
    yield 0, 0, value  # d_0


@dataclass(frozen=True)
class ReplayedBlock:
    permutation: array[int]
    """slot -> unit after the last draw: slots [0, m) hold the units sold, in sale order."""
    sales: int


def replay_draws(
    draws: DrawFile,
    *,
    block_key: bytes,
    chain_head: bytes,
    witness_key: bytes,
    workers: int | None = None,
) -> ReplayedBlock:
    """Re-derive, swap and check every draw of ``draws``; raise naming the first wrong one."""
    check_round_values(draws, witness_key)
    values = b"".join(value for _, _, value in draws.rounds)
    size, sales = draws.size, draws.sales
    derived, head = derive_all_slots(
        draws.block_id, size, draws.receipt_hashes, draws.round_ordinals, values, block_key, workers
    )
    if head != chain_head:
        raise VerificationFailed("the block key's chain does not lead to the committed chain_head")
    if derived != draws.slots:
        n = next(i for i in range(sales) if derived[i] != draws.slots[i])
        raise VerificationFailed(
            f"draw {n}: the slot re-derived from its round, link and receipt is "
            f"{derived[n]}, not the slot {draws.slots[n]} it states"
        )
    return ReplayedBlock(permutation=swap_and_check(size, draws.slots, draws.units), sales=sales)


def derive_all_slots(
    block_id: bytes,
    size: int,
    receipt_hashes: bytes | memoryview,
    round_ordinals: array[int],
    round_values: bytes,
    block_key: bytes,
    workers: int | None = None,
) -> tuple[array[int], bytes]:
    """The slot j of every sale (H of sale n at ``receipt_hashes[32n:32n+32]``, its round's
    value at ``round_values[32o:32o+32]`` for ``o = round_ordinals[n]``), and ``d_0`` of the
    block key's chain; worker processes (one per core) unless the block is small."""
    sales = len(round_ordinals)
    derived = array("I" if size <= 1 << 32 else "Q", bytes((4 if size <= 1 << 32 else 8) * sales))
    walked: list[bytes] = []  # d_0, once the walk is done
    tasks = _tasks(receipt_hashes, round_ordinals, size, chain_seed(block_key), walked)
    workers = workers or os.cpu_count() or 1
    if workers == 1 or sales <= RUN:
        _start_worker(block_id, size, round_values)
        for first, slots in map(derive_slots, tasks):
            derived[first : first + len(slots)] = slots
    else:
        context = multiprocessing.get_context("spawn")
        with context.Pool(workers, _start_worker, (block_id, size, round_values)) as pool:
            for first, slots in pool.imap_unordered(derive_slots, tasks):
                derived[first : first + len(slots)] = slots
    return derived, walked[0]


def _tasks(
    hashes: bytes | memoryview,
    ordinals: array[int],
    size: int,
    seed: bytes,
    walked: list[bytes],
) -> Iterator[Task]:
    """The runs of sales to re-derive, as the chain is walked down; ``walked`` gets d_0."""
    for first, end, links in _links_descending(seed, size, len(ordinals)):
        if end == 0:
            walked.append(links)
            return
        yield (first, bytes(hashes[32 * first : 32 * end]), ordinals[first:end], links)


def _swap_all(size: int, slots: array[int]) -> array[int]:
    permutation = array("I" if size <= 1 << 32 else "Q", range(size))
    for n, j in enumerate(slots):
        permutation[n], permutation[j] = permutation[j], permutation[n]
    return permutation


def swap_and_check(size: int, slots: array[int], units: array[int]) -> array[int]:
    """The swaps in order (slot n with slot ``slots[n]``, each in ``[n, size)``), and each
    sale's claimed unit against the unit its swap puts in slot n: raise naming the first that
    differs — a unit sold twice (slots 0 … n−1 hold the units sold before) with the sale that
    got it first, or another unit. The permutation, slot -> unit."""
    permutation = _swap_all(size, slots)
    sales = len(slots)
    if permutation[:sales] != units:
        n = next(i for i in range(sales) if permutation[i] != units[i])
        claimed, before = units[n], permutation[:n]
        if claimed in before:
            raise VerificationFailed(
                f"unit {claimed} sold twice: to sale {before.index(claimed)}, then to sale {n} "
                f"(its swap puts unit {permutation[n]} in slot {n})"
            )
        raise VerificationFailed(
            f"draw {n} claims unit {claimed}; its swap puts unit {permutation[n]} in slot {n}"
        )
    return permutation


def replay_disclosed(
    commitment: Mapping[str, Any], block_key: bytes, draws: DrawFile, workers: int | None = None
) -> ReplayedBlock:
    """Replay the draws of a disclosed drawn block: the file must be this block's, its chain
    the commitment's ``chain_head`` from the disclosed key, its rounds its witness's."""
    if draws.block_id.hex() != commitment["block_id"] or draws.size != commitment["size"]:
        raise VerificationFailed("the draws file is of another block, or another size")
    return replay_draws(
        draws,
        block_key=block_key,
        chain_head=bytes.fromhex(commitment["chain_head"]),
        witness_key=bytes.fromhex(commitment["witness_key"]),
        workers=workers,
    )


def unsold_prizes(
    prize_of_tier: Callable[[int], int], tiers: bytes, replayed: ReplayedBlock
) -> list[tuple[int, int]]:
    """(prize in cents, count) of the winning units left in the slots no sale reached,
    largest prize first."""
    left = Counter(tiers[unit] for unit in replayed.permutation[replayed.sales :])
    never: Counter[int] = Counter()
    for tier, count in left.items():
        if tier:
            never[prize_of_tier(tier)] += count
    return sorted(never.items(), reverse=True)
