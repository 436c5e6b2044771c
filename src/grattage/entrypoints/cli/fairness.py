"""Fairness commands: ``verify-ticket PROOF.json`` and ``verify-block DISCLOSURE``.

Version-1 documents (blocks committed before the transparency log) are checked as they always
were; version-2 documents are checked against the log: with ``--sth`` (a head you pinned, e.g.
from your monitor) or ``--log URL`` (the log's current head, fetched), else UNPINNED.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import click

from grattage.blocks import proofs, proofs_v2
from grattage.blocks.key_history import KeyChain
from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.signing import STH_FORMAT, TreeHead
from grattage.blocks.tlog import verify_consistency
from grattage.entrypoints.cli import drawn_block, drawn_history
from grattage.entrypoints.cli.files import read_document
from grattage.entrypoints.cli.monitor import LogClient, watch
from grattage.errors import InvalidInput, VerificationFailed
from grattage.games.money import format_euros

PIN_HELP = "A signed tree head you trust (JSON, e.g. kept by your monitor)."
LOG_HELP = "The operator's log, e.g. https://grattage.example: its current head is fetched."
KEY_HELP = (
    "An operator public key you trust (hex; any key of the log's history, e.g. the one in its "
    "docs); by default the log's first key, or the proof's own."
)


def _pinned_head(path: Path) -> TreeHead:
    return TreeHead.from_json(read_document(path, "a signed tree head", STH_FORMAT))


def _key(key_hex: str | None, client: LogClient | None) -> bytes | None:
    """The key the checker pins: ``--key``, else the log's first key, else none."""
    if key_hex is not None:
        try:
            return bytes.fromhex(key_hex)
        except ValueError:
            raise InvalidInput("--key is the operator's public key in hex") from None
    return client.first_key() if client is not None else None


def _extends(head: TreeHead, client: LogClient, current: TreeHead) -> None:
    """The log's current head (already checked) extends ``head``: it is in the public log."""
    if current.tree_size < head.tree_size:
        raise VerificationFailed("the proof's head is larger than the log's current head")
    if current.tree_size == head.tree_size:
        if current.root_hash != head.root_hash:
            raise VerificationFailed("the proof's head is not the log's: a split view")
        return
    proof = client.consistency(head.tree_size, current.tree_size)
    if not verify_consistency(
        head.tree_size, current.tree_size, head.root_hash, current.root_hash, proof
    ):
        raise VerificationFailed("the log's current head does not extend the proof's head")


@click.command("verify-ticket")
@click.argument("proof_file", metavar="PROOF.json", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--sth", "sth_file", type=click.Path(dir_okay=False, path_type=Path), help=PIN_HELP)
@click.option("--log", "url", help=LOG_HELP)
@click.option("--key", "key_hex", help=KEY_HELP)
@click.option(
    "--replay",
    is_flag=True,
    help=(
        "With --log, a drawn ticket: read the log up to the proof's head and replay the "
        "block's draws, so that no other sale got its unit."
    ),
)
@click.option(
    "--witness",
    "witness_url",
    help="A ticket drawn late: check with its witness (URL) that no earlier round covered it.",
)
def verify_ticket_command(
    proof_file: Path,
    sth_file: Path | None,
    url: str | None,
    key_hex: str | None,
    replay: bool,
    witness_url: str | None,
) -> None:
    """Check a ticket's proof offline: its unit is in the committed block, its design
    re-derives, and (version 2) its commitment and receipt are in the operator's log."""
    if replay and url is None:
        raise InvalidInput("verify-ticket --replay needs --log URL: the draws are the log's")
    proof = read_document(proof_file, "a ticket proof", proofs_v2.PROOF_FORMAT, proofs.PROOF_FORMAT)
    if proof["format"] == proofs.PROOF_FORMAT:
        if replay or witness_url:
            raise InvalidInput(
                "--replay and --witness check a drawn ticket: a version-1 proof has none"
            )
        verified = proofs.verify_ticket_proof(proof)
        block = verified.block
        click.echo(
            f"{proof_file}: valid — unit {verified.position:,} of {block.size:,} in block "
            f"{block.block_id.hex()} (root {block.root.hex()[:16]}…), prize "
            f"{format_euros(verified.prize_cents)}; the ticket shown is the committed design "
            "(a version-1 proof: no log to pin it to)"
        )
        return
    client = LogClient(url) if url else None
    key = _key(key_hex, client)
    pinned = _pinned_head(sth_file) if sth_file is not None else None
    current, log_keys = None, None
    if client is not None and pinned is None:
        # The log's key history, each change proven in its current head (checked with it):
        # the proof's own history must be the log's up to the proof's head.
        current = client.head()
        log_keys = client.key_chain(current)
    checked = proofs_v2.verify_ticket_proof(proof, pinned=pinned, public_key=key, log_keys=log_keys)
    where = "UNPINNED: the proof is only consistent with itself — pin it with --sth or --log"
    if pinned is not None:
        where = f"PINNED to the head of size {pinned.tree_size:,} you gave"
    elif client is not None and current is not None:
        _extends(checked.head, client, current)
        where = f"PINNED to {url}: its current head of size {current.tree_size:,} includes it"
    block = checked.block
    if checked.draw is not None:
        click.echo(f"  {drawn_block.ticket_line(checked.draw)}")
        drawn = checked.draw
        sold = drawn_history.unit_not_checked_line(drawn)
        if replay and client is not None:
            sold = drawn_history.replay_to_head(client, checked.head, block.commitment, drawn)
        click.echo(f"  {sold}")
        if witness_url is not None:
            click.echo(f"  {drawn_history.late_ticket(drawn, block.commitment, witness_url)}")
    elif replay or witness_url:
        raise InvalidInput(
            "--replay and --witness check a drawn ticket: this ticket's is not drawn"
        )
    click.echo(
        f"{proof_file}: valid — sale {checked.receipt['sequence']:,} of block "
        f"{block.block_id.hex()}, unit {checked.position:,} of {block.size:,}, prize "
        f"{format_euros(checked.prize_cents)}; the commitment and the receipt are signed and "
        f"in the log; the ticket shown is the committed design. {where}"
    )


def _block_in_log(
    client: LogClient, block_id: str
) -> tuple[LogAuditor, list[tuple[int, dict[str, Any]]]]:
    """Audit the whole log (as a monitor does) and keep the entries of one block."""
    kept: list[tuple[int, dict[str, Any]]] = []

    class Keeping(LogClient):
        def entries(self, start: int, end: int) -> list[tuple[int, Any]]:
            page = client.entries(start, end)
            for index, entry in page:
                if isinstance(entry, dict) and block_id in (
                    entry.get("block_id"),
                    (entry.get("receipt") or {}).get("block_id"),
                    (entry.get("commitment") or {}).get("block_id"),
                ):
                    kept.append((index, entry))
                elif isinstance(entry, dict) and (witness := drawn_block.keeps(entry)):
                    kept.append((index, dict(witness)))
            return page

    keeping = Keeping(client.base, client.timeout)
    auditor, _ = watch(keeping, None)
    return auditor, kept


def _block_id_of(disclosure: Any) -> str:
    commitment = disclosure.get("commitment") if isinstance(disclosure, dict) else None
    block_id = commitment.get("block_id") if isinstance(commitment, dict) else None
    if not isinstance(block_id, str):
        raise VerificationFailed("malformed disclosure: its commitment names no block_id")
    return block_id


def _signing_key(keys: KeyChain, pinned: bytes | None, logged: list[tuple[int, Any]]) -> bytes:
    """The key in force where the block's commitment is logged; the pinned key in the log's
    history."""
    if pinned is not None and not keys.knows(pinned):
        raise VerificationFailed("the key you pinned is not in the log's key history")
    if len(logged) != 1:
        raise VerificationFailed("the disclosure's block has no commitment in the log")
    return keys.at(logged[0][0]).public_key


@click.command("verify-block")
@click.argument(
    "disclosure_file", metavar="DISCLOSURE", type=click.Path(dir_okay=False, path_type=Path)
)
@click.option("--sth", "sth_file", type=click.Path(dir_okay=False, path_type=Path), help=PIN_HELP)
@click.option("--log", "url", help=LOG_HELP)
@click.option(
    "--witness",
    "witness_url",
    help="With --log, a drawn block's witness (its URL): its late draws checked against it.",
)
@click.option("--key", "key_hex", help=KEY_HELP)
@click.option(
    "--draws",
    "draws_source",
    metavar="FILE|URL",
    help=(
        "A drawn block's draws file (GDRW, docs/draw.md), or its URL (GET "
        "/api/blocks/{id}/draws): replayed; with --log, its SHA-256 checked against the "
        "logged publication and its bytes against the log's draws."
    ),
)
def verify_block_command(
    disclosure_file: Path,
    sth_file: Path | None,
    url: str | None,
    witness_url: str | None,
    key_hex: str | None,
    draws_source: str | None,
) -> None:
    """Rebuild a disclosed block's tree from its key, check the root and recount every tier;
    replay a drawn block's every draw (--draws FILE, or from the log); with --log, check it
    against the logged commitment and receipts and list the prizes never sold."""
    disclosure = read_document(
        disclosure_file, "a disclosure", proofs_v2.DISCLOSURE_FORMAT, proofs.DISCLOSURE_FORMAT
    )
    draws = None if draws_source is None else drawn_block.read_draws(draws_source)
    if disclosure["format"] == proofs.DISCLOSURE_FORMAT:
        old = proofs.verify_disclosure(disclosure)
        _print_counts(old.block.table, old.counts)
        click.echo(
            f"{disclosure_file}: valid — {old.block.size:,} units rebuild the committed root "
            f"{old.block.root.hex()} and recount exactly to the prize table"
        )
        return
    _needs_log(url, sth_file, witness_url)
    client = LogClient(url) if url else None
    key = _key(key_hex, client)
    if client is None:
        verified = proofs_v2.verify_disclosure(disclosure, key)
        _print_counts(verified.block.table, verified.counts)
        drawn = drawn_block.is_drawn(verified)
        note = "its draws NOT REPLAYED (give --draws FILE or --log URL); " if drawn else ""
        if drawn and draws is not None:
            offline = drawn_block.replay(verified, disclosure, draws, None)
            for prize, count in drawn_block.never_sold(verified, offline):
                click.echo(f"  never sold: {count:>10,} × {format_euros(prize)}")
            note = drawn_block.replay_line(offline, verified.block.size, tied=False) + "; "
        click.echo(
            f"{disclosure_file}: valid — {verified.block.size:,} units rebuild the committed "
            f"root {verified.block.root.hex()} and recount exactly to the prize table; "
            f"{note}UNPINNED: give --log to check it against the logged commitment and "
            "receipts"
        )
        return
    auditor, kept = _block_in_log(client, _block_id_of(disclosure))
    assert auditor.head is not None
    if sth_file is not None:
        pinned = _pinned_head(sth_file)
        auditor.keys.check_head(pinned)
        _extends(pinned, client, auditor.head)
    logged = [(index, e["commitment"]) for index, e in kept if e.get("kind") == "block.commitment"]
    verified = proofs_v2.verify_disclosure(disclosure, _signing_key(auditor.keys, key, logged))
    _print_counts(verified.block.table, verified.counts)
    if logged[0][1] != verified.block.commitment:
        raise VerificationFailed("the disclosure's commitment is not the one logged for its block")
    entries = [entry for _index, entry in kept]
    receipts = [e["receipt"] for e in entries if e.get("kind") == "sale.receipt"]
    replay_note = ""
    if drawn_block.is_drawn(verified):
        never, replay_note = drawn_block.replay_logged(
            verified, disclosure, draws, entries, len(receipts)
        )
    else:
        never = proofs_v2.prizes_never_sold(verified, {r["position"] for r in receipts})
    late = (
        drawn_history.late_draws(auditor.draws, verified.block.commitment, witness_url)
        if drawn_block.is_drawn(verified)
        else ""
    )
    ended = [e for e in entries if e.get("kind") == "block.ended"]
    if (
        ended
        and sorted(
            ((row["prize_cents"], row["count"]) for row in ended[0]["prizes_never_sold"]),
            reverse=True,
        )
        != never
    ):
        raise VerificationFailed("the logged end of the block misstates the prizes never sold")
    published = _published(disclosure_file, disclosure, entries)
    for prize, count in never:
        click.echo(f"  never sold: {count:>10,} × {format_euros(prize)}")
    violations = _timing_violations(auditor, kept)
    verdict = "valid" if not violations else "everything else valid"
    click.echo(
        f"{disclosure_file}: {verdict} — its commitment and {len(receipts):,} receipts are in "
        f"the log (head of size {auditor.head.tree_size:,}); {replay_note}{late}"
        f"{verified.block.size - len(receipts):,} units never sold; {published}"
    )
    _fail_on_timing(violations)


def _timing_violations(
    auditor: LogAuditor, kept: list[tuple[int, dict[str, Any]]]
) -> list[tuple[int, str]]:
    """The block's receipts that broke the monitor's timing rule (drawn within LATE_ROUNDS
    rounds of their round): recorded as the log is checked, not raised, so that the rest of
    the block is still checked; the block then fails, as the monitor does."""
    receipt_indexes = {index for index, e in kept if e.get("kind") == "sale.receipt"}
    return sorted(
        (index, why)
        for index, why in auditor.draws.timing_violations.items()
        if index in receipt_indexes
    )


def _fail_on_timing(violations: list[tuple[int, str]]) -> None:
    for index, why in violations:
        click.echo(f"timing violation at entry {index:,}: {why}")
    if violations:
        raise VerificationFailed(
            f"{len(violations):,} timing violations of the draw in this block: a receipt not "
            'drawn in time (docs/fairness.md, "The monitor")'
        )


def _needs_log(url: str | None, sth_file: Path | None, witness_url: str | None) -> None:
    if url is not None:
        return
    if sth_file is not None:
        # A disclosure carries no inclusion proof: only the log can show its commitment and
        # receipts are in the pinned head (an outsider's forged disclosure passed otherwise).
        raise InvalidInput("verify-block --sth needs --log URL: the log proves the block is in it")
    if witness_url is not None:
        raise InvalidInput("verify-block --witness needs --log URL: the late draws are the log's")


def _published(path: Path, disclosure: Any, entries: list[dict[str, Any]]) -> str:
    """The file's bytes against the logged ``disclosure.published``: everyone got this file."""
    logged = [e for e in entries if e.get("kind") == "disclosure.published"]
    if not logged:
        return (
            "its publication is NOT LOGGED yet (the log merges within seconds of the file "
            "being written): check again to know everyone got these bytes"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if logged[0].get("sha256") != digest or logged[0].get("key") != disclosure.get("key"):
        raise VerificationFailed(
            f"the file's SHA-256 {digest} (or its key) is not the one logged at its publication "
            f"({logged[0].get('sha256')!r}): not the disclosure everyone was given"
        )
    return f"the file is the one whose publication is logged (SHA-256 {digest[:16]}…)"


def _print_counts(table: Any, counts: list[int]) -> None:
    for index, count in enumerate(counts):
        label = "losing" if index == 0 else format_euros(table.prize_of_tier(index))
        click.echo(f"  tier {index:>3} {label:>12}: {count:>12,} units ✓")


def register(group: click.Group) -> None:
    group.add_command(verify_ticket_command)
    group.add_command(verify_block_command)
