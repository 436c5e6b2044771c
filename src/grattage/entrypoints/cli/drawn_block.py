"""The draws of a drawn block for ``verify-block`` and ``verify-ticket`` (docs/draw.md,
"Replaying a block"): replayed from a draws file, or from the log's entries, or both compared.
Standard library, click and ``cryptography`` only, as every verifying command."""

from __future__ import annotations

import hashlib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grattage.blocks.draw_file import draw_file_from_log, read_draw_file
from grattage.blocks.proof_draw import DrawnSale
from grattage.blocks.proofs_v2 import VerifiedDisclosureV2
from grattage.blocks.replay import ReplayedBlock, replay_disclosed, unsold_prizes
from grattage.errors import InvalidInput, Unavailable, VerificationFailed

DOWNLOAD_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class Draws:
    """A draws file as given to ``--draws``: its name (the path or URL) and its bytes."""

    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def is_drawn(verified: VerifiedDisclosureV2) -> bool:
    return verified.block.commitment.get("draw") is not None


def keeps(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """What ``verify-block --log`` keeps of an entry of no block for a drawn block's replay: the
    witness's chains, and of each round only its signed round document (not its heads)."""
    if entry.get("kind") == "beacon.chain":
        return entry
    if entry.get("kind") == "draw.round":
        return {"kind": "draw.round", "round": entry.get("round")}
    return None


def read_draws(source: str) -> Draws:
    """``--draws``: a file, or an http(s) URL fetched as the log is (e.g. the operator's
    ``GET /api/blocks/{id}/draws``)."""
    if urllib.parse.urlsplit(source).scheme in ("http", "https"):
        try:
            with urllib.request.urlopen(source, timeout=DOWNLOAD_TIMEOUT_SECONDS) as answer:
                return Draws(source, answer.read())
        except urllib.error.HTTPError as error:
            raise VerificationFailed(f"{source} answered {error.code}") from None
        except (OSError, urllib.error.URLError) as error:
            raise Unavailable(f"{source} cannot be reached: {error}") from None
    try:
        return Draws(source, Path(source).read_bytes())
    except OSError as error:
        raise InvalidInput(f"{source}: cannot be read ({error.strerror})") from None


def logged_sha256(entries: Sequence[Mapping[str, Any]]) -> str | None:
    """The draws file's SHA-256 in the block's ``disclosure.published`` entry, if logged."""
    published = [e for e in entries if e.get("kind") == "disclosure.published"]
    value = published[0].get("draws_sha256") if published else None
    return value if isinstance(value, str) else None


def replay(
    verified: VerifiedDisclosureV2,
    disclosure: Mapping[str, Any],
    draws: Draws | None,
    entries: Sequence[Mapping[str, Any]] | None,
) -> ReplayedBlock:
    """Replay every draw of the block: from the log's entries when given (then the file, if
    given too, must first hash to the ``draws_sha256`` logged at the block's publication,
    then be the log's draws byte for byte — as must the log's own draws), else from the
    file."""
    commitment = verified.block.commitment
    data = None if draws is None else draws.data
    if entries is not None:
        logged = logged_sha256(entries)
        if draws is not None and logged is not None and draws.sha256 != logged:
            raise VerificationFailed(
                f"{draws.name}: its SHA-256 {draws.sha256} is not the draws_sha256 logged at "
                f"the block's publication ({logged}): not the draws file everyone was given"
            )
        from_log = draw_file_from_log(commitment["block_id"], verified.block.size, entries)
        if logged is not None and hashlib.sha256(from_log).hexdigest() != logged:
            raise VerificationFailed(
                "the draws_sha256 logged at the block's publication is not the SHA-256 of the "
                "draws the log holds for the block"
            )
        if draws is not None and data != from_log:
            raise VerificationFailed(f"{draws.name} is not the draws the log holds for the block")
        data = from_log
    if data is None:
        raise InvalidInput("a drawn block's draws come from --draws FILE or --log URL")
    return replay_disclosed(commitment, bytes.fromhex(disclosure["key"]), read_draw_file(data))


def replay_logged(
    verified: VerifiedDisclosureV2,
    disclosure: Mapping[str, Any],
    draws: Draws | None,
    entries: Sequence[Mapping[str, Any]],
    receipts: int,
) -> tuple[list[tuple[int, int]], str]:
    """``verify-block --log`` on a drawn block: every draw replayed (from the log, the file
    given checked against it), one per receipt; the prizes never sold, and what to say."""
    replayed = replay(verified, disclosure, draws, entries)
    if replayed.sales != receipts:
        raise VerificationFailed(
            f"{receipts:,} receipts but {replayed.sales:,} draws: a sale was never drawn"
        )
    note = replay_line(replayed, verified.block.size) + "; "
    if draws is not None and (logged := logged_sha256(entries)) is not None:
        note += f"the draws file is the one logged (SHA-256 {logged[:16]}…); "
    return never_sold(verified, replayed), note


def never_sold(verified: VerifiedDisclosureV2, replayed: ReplayedBlock) -> list[tuple[int, int]]:
    return unsold_prizes(verified.block.table.prize_of_tier, verified.tiers, replayed)


def replay_line(replayed: ReplayedBlock, size: int, *, tied: bool = True) -> str:
    """What the replay showed. ``tied``: the draws are the log's, each checked against its
    logged receipt and round as a monitor does; a draws file alone holds no receipt, so
    nothing ties its rounds and receipt hashes to the sales."""
    done = f"{replayed.sales:,} draws replayed"
    never = f"{size - replayed.sales:,} units never reached"
    if tied:
        return (
            f"{done} (each slot re-derived from its round, its link and its receipt, each "
            f"receipt and round checked in the log as a monitor does; each unit the swap "
            f"gives), {never}"
        )
    return (
        f"{done} (each slot re-derived from the round, the link and the receipt hash the draws "
        f"file gives it, the rounds signed by the witness, the links the block key's chain; "
        f"each unit the swap gives), {never}; the rounds and receipt hashes NOT TIED to the "
        "receipts (a draws file holds none: give --log URL)"
    )


def ticket_line(drawn: DrawnSale) -> str:
    late = (
        f" — LATE: drawn with round {drawn.round}, later than round {drawn.receipt_round} its "
        f"receipt names; the proof shows a head the witness cosigned for round {drawn.round} "
        "covers the receipt, NOT that no head cosigned for an earlier round did (then the sale "
        "had to be drawn with that one): only the witness can tell whether the lateness was "
        "forced (give --witness WITNESS_URL)"
        if drawn.late
        else ""
    )
    return (
        f"drawn with round {drawn.round} of witness chain {drawn.chain_id[:16]}…: slot "
        f"{drawn.slot:,} recomputed, unit {drawn.unit:,}{late}"
    )
