"""``grattage monitor URL --state FILE``: watch an operator's transparency log, as anyone can
(from cron, say); ``grattage monitor compare STH1 STH2``: catch a split view.

The checks are :class:`grattage.blocks.log_audit.LogAuditor`'s (standard library and
``cryptography``); this module only fetches (``urllib``), keeps the state file and speaks.
Exit codes as every command: 0 clean, 1 an inconsistency (named: the entry and the rule),
5 the log could not be reached.
"""

from __future__ import annotations

import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import click

from grattage.adapters.witness_client import WitnessClient
from grattage.blocks.key_history import KeyChain, KeyPeriod
from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.signing import STH_FORMAT, TreeHead, key_id
from grattage.blocks.tlog import verify_consistency
from grattage.entrypoints.cli.files import parse_json, read_document, read_text
from grattage.errors import InvalidInput, Unavailable, VerificationFailed

PAGE = 1000
TIMEOUT_SECONDS = 30.0


class LogClient:
    """The log's public routes (docs/api.md), over plain HTTP(S)."""

    def __init__(self, url: str, timeout: float = TIMEOUT_SECONDS) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise InvalidInput(f"a log URL is http(s)://host[:port], got {url!r}")
        self.base = url.rstrip("/")
        self.timeout = timeout

    def get(self, path: str, **params: int) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        address = f"{self.base}/api/log/{path}{query}"
        try:
            with urllib.request.urlopen(address, timeout=self.timeout) as answer:
                body = answer.read(64 * 1024 * 1024)
        except urllib.error.HTTPError as error:
            raise VerificationFailed(
                f"the log answered {error.code} to GET /api/log/{path}{query}"
            ) from None
        except (OSError, urllib.error.URLError) as error:
            raise Unavailable(f"the log at {self.base} cannot be reached: {error}") from None
        try:
            return json.loads(body)
        except ValueError:
            raise VerificationFailed(f"the log's answer to {path} is not JSON") from None

    def key_history(self) -> list[KeyPeriod]:
        """``GET /api/log/key``'s history, each key checked to be the one its id names (a log
        from before rotations answers its one key)."""
        answer = self.get("key")
        if not isinstance(answer, dict):
            raise VerificationFailed("the log's key answer is not a JSON object")
        listed = answer.get("keys") or [{**answer, "from_index": 0, "change_index": None}]
        if not isinstance(listed, list):
            raise VerificationFailed("the log's key history is not a list")
        history = [KeyPeriod.from_json(item) for item in listed]
        if history[-1].public_key.hex() != answer.get("public_key"):
            raise VerificationFailed("the log's key in force is not the last of its history")
        return history

    def first_key(self) -> bytes:
        """The log's first key: what a monitor trusts on first use."""
        return self.key_history()[0].public_key

    def key_chain(self, head: TreeHead) -> KeyChain:
        """The log's key history up to ``head``, verified: each ``key.change`` entry fetched
        with its inclusion proof in ``head`` and checked as a monitor checks it; then ``head``
        is checked with the key in force at its size."""
        history = self.key_history()
        if history[0].from_index != 0:  # the first key signs from the log's first entry
            raise VerificationFailed(
                f"the log's key history starts at entry {history[0].from_index}, not 0"
            )
        chain = KeyChain(history[0].public_key)
        for period in history[1:]:
            index = period.change_index
            if index is None or index >= head.tree_size:
                break
            entries = self.entries(index, index)
            inclusion = self.get("proof", index=index, tree_size=head.tree_size)
            path = inclusion.get("path") if isinstance(inclusion, dict) else None
            if not entries or entries[0][0] != index:
                raise VerificationFailed(f"the log serves no key change at index {index}")
            chain.follow_logged([{"index": index, "entry": entries[0][1], "path": path}], head)
            if chain.current != period:
                raise VerificationFailed(
                    f"the log's key history says another key than its entry {index}"
                )
        chain.check_head(head)
        return chain

    def head(self) -> TreeHead:
        return TreeHead.from_json(self.get("sth"))

    def consistency(self, first: int, second: int) -> list[bytes]:
        answer = self.get("consistency", first=first, second=second)
        try:
            return [bytes.fromhex(node) for node in answer["proof"]]
        except (KeyError, TypeError, ValueError):
            raise VerificationFailed("the log's consistency proof is malformed") from None

    def entries(self, start: int, end: int) -> list[tuple[int, Any]]:
        answer = self.get("entries", start=start, end=end)
        try:
            return [(item["index"], item["entry"]) for item in answer["entries"]]
        except (KeyError, TypeError):
            raise VerificationFailed("the log's entries are malformed") from None


def _load_state(path: Path) -> LogAuditor | None:
    if not path.exists():
        return None
    data = parse_json(read_text(path), repr(str(path)))
    try:
        return LogAuditor.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"{path}: not a monitor state file ({exc})") from None


def _save_state(path: Path, auditor: LogAuditor) -> None:
    """Write the state atomically: a crash leaves the old state or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(auditor.to_json(), handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def watch(
    client: LogClient, auditor: LogAuditor | None, draw_margin_ms: int | None = None
) -> tuple[LogAuditor, int]:
    """Bring ``auditor`` up to the log's current head; the entries checked."""
    if auditor is None:
        auditor = LogAuditor(client.first_key())  # trust on first use, as a CT monitor does
    auditor.draws.record_timing = True  # recorded and reported, and the check goes on
    auditor.draws.margin_ms = draw_margin_ms  # a run's option, not kept in the state
    head = client.head()
    last = auditor.head
    if last is not None:
        if head.tree_size < last.tree_size:
            raise VerificationFailed(
                f"the log shrank: its head has {head.tree_size} entries, {last.tree_size} seen"
            )
        if head.tree_size == last.tree_size and head.root_hash != last.root_hash:
            raise VerificationFailed(
                f"two heads of size {head.tree_size} with different roots: the log was forked"
            )
        if head.tree_size > last.tree_size:
            auditor.check_consistency(head, client.consistency(last.tree_size, head.tree_size))
    checked = 0
    while auditor.frontier.size < head.tree_size:
        start = auditor.frontier.size
        page = client.entries(start, min(head.tree_size, start + PAGE) - 1)
        if not page:
            raise VerificationFailed(f"the log serves no entry {start} below its head")
        for index, entry in page:
            auditor.feed(index, entry)
            checked += 1
    cosigned = auditor.draws.largest_cosigned
    if cosigned is not None and 0 < cosigned.tree_size < head.tree_size:
        auditor.check_cosigned(head, client.consistency(cosigned.tree_size, head.tree_size))
    _check_served_history(client, auditor, head)
    auditor.accept_head(head)
    return auditor, checked


def _check_served_history(client: LogClient, auditor: LogAuditor, head: TreeHead) -> None:
    """``GET /api/log/key`` must list exactly the keys the log's own ``key.change`` entries
    brought in up to ``head`` (verifiers and the page trust that list): a history edited in
    the database — a backdated rotation, a key left out — is named here."""

    def periods(keys: list[KeyPeriod]) -> list[tuple[str, int, int | None]]:
        return [(p.public_key.hex(), p.from_index, p.change_index) for p in keys]

    served = [
        period
        for period in client.key_history()
        if period.change_index is None or period.change_index < head.tree_size
    ]
    if periods(served) != periods(auditor.keys.changes_before(head.tree_size)):
        raise VerificationFailed(
            "GET /api/log/key lists another key history than the log's key.change entries "
            f"up to its head of size {head.tree_size}"
        )


class _CheckUnlessCompare(click.Group):
    """``monitor URL …`` checks the log; ``monitor compare …`` compares heads."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group("monitor", cls=_CheckUnlessCompare)
def monitor_command() -> None:
    """Watch an operator's transparency log: ``monitor URL --state FILE`` checks every new
    entry and that the log only grew; ``monitor compare STH1 STH2`` catches a split view."""


@monitor_command.command("check")
@click.argument("url")
@click.option(
    "--state",
    "state_file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the monitor keeps the last head it checked and what it must remember.",
)
@click.option(
    "--witness",
    "witness_url",
    help="The witness of the drawn blocks (its URL): late draws are checked against its lists.",
)
@click.option(
    "--draw-margin-ms",
    type=click.IntRange(0, 60_000),
    help="The server's GRATTAGE_DRAW_MARGIN_MS: each receipt's round is then checked exactly. "
    "By default the margin the server publishes (GET /api/log/draw-rule); a server that "
    "publishes none is checked as what holds for any margin up to a period (docs/draw.md).",
)
def check_command(
    url: str, state_file: Path, witness_url: str | None, draw_margin_ms: int | None
) -> None:
    """Check every new entry of the log at URL, and that it only grew since the last run."""
    state = _load_state(state_file)
    known = 0 if state is None else len(state.keys.periods)
    known_violations = set() if state is None else set(state.draws.timing_violations)
    client = LogClient(url)
    margin_said = "given"
    if draw_margin_ms is None:
        draw_margin_ms, margin_said = _published_margin(client), "published"
    try:
        auditor, checked = watch(client, state, draw_margin_ms)
        late = _check_late_draws(auditor, witness_url)
    except VerificationFailed:  # it stops there; what was recorded before is still named
        if state is not None:
            _echo_timing_violations(state)
        raise
    _save_state(state_file, auditor)
    assert auditor.head is not None
    for period in auditor.keys.periods[max(known, 1) :]:
        click.echo(
            f"the operator key changed at entry {period.change_index:,}: key "
            f"{period.key_id} signs from entry {period.from_index:,}"
        )
    violations = auditor.draws.timing_violations
    click.echo(
        f"{url}: {'clean — ' if not violations else ''}{checked:,} new entries checked, head "
        f"of size {auditor.head.tree_size:,} (root {auditor.head.root_hash.hex()[:16]}…) "
        f"consistent with every head seen before{late}; drawn receipts' rounds checked "
        + (
            f"exactly, with the {margin_said} draw margin of {draw_margin_ms} ms"
            if draw_margin_ms is not None
            else "as what holds for any margin (none published: give --draw-margin-ms)"
        )
    )
    if violations:
        _echo_timing_violations(auditor)
        new = len(set(violations) - known_violations)
        # Exit 1 for what this run found, once: a monitor that failed on every later run for a
        # violation already reported (an outage's late draws) left its alert red for good, and
        # a new violation could no longer be told from an old one. The state keeps them all,
        # and every run names them.
        if new:
            raise VerificationFailed(
                f"{len(violations):,} timing violations of the draw recorded in {state_file}, "
                f"{new:,} of them new (each checked past: the monitor goes on; the state keeps "
                "them)"
            )
        click.echo(
            f"no new timing violation; the {len(violations):,} above were reported by an earlier"
            f" run (kept in {state_file})"
        )


def _published_margin(client: LogClient) -> int | None:
    """The server's draw margin (``GET /api/log/draw-rule``); None from a server without it."""
    try:
        answer = client.get("draw-rule")
    except VerificationFailed:  # a 404 from a server before the route: the lenient check
        return None
    margin = answer.get("draw_margin_ms") if isinstance(answer, dict) else None
    if not isinstance(margin, int) or isinstance(margin, bool) or not 0 <= margin <= 60_000:
        raise VerificationFailed("the log's draw rule names no draw margin (0 to 60 000 ms)")
    return margin


def _echo_timing_violations(auditor: LogAuditor) -> None:
    """Each timing violation recorded, once: the receipt's entry and the rule it broke."""
    for index, reason in sorted(auditor.draws.timing_violations.items()):
        click.echo(f"timing violation at entry {index:,}: {reason}")


def _check_late_draws(auditor: LogAuditor, witness_url: str | None) -> str:
    """Late draws against the witness's lists of cosigned heads (``--witness``); else say how
    many wait for that check (they stay in the state until a run with ``--witness``)."""
    waiting = len(auditor.draws.late)
    if not waiting:
        return ""
    if witness_url is None:
        return (
            f"; {waiting:,} late draws NOT CHECKED against the witness (give --witness URL: "
            "only it can tell that no earlier round covered them)"
        )
    keys = {block.witness_key for block in auditor.draws.blocks.values()}
    if len(keys) != 1:
        raise InvalidInput("--witness checks the draws of one witness: the log names several")
    client = WitnessClient(witness_url, keys.pop())
    checked = auditor.draws.check_late_draws(client.cosigned, client.chain)
    return f"; {checked:,} late draws checked against the witness"


def _head_of(path: Path) -> TreeHead:
    data = read_document(path, "a signed tree head", STH_FORMAT, "grattage-monitor-state/1")
    return TreeHead.from_json(data.get("head") if data["format"] != STH_FORMAT else data)


@monitor_command.command("compare")
@click.argument("first", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("second", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--log", "url", help="The log's URL, to fetch a consistency proof between them.")
@click.option("--key", "key_hex", help="The operator's public key (hex), if not from --log.")
def compare_command(first: Path, second: Path, url: str | None, key_hex: str | None) -> None:
    """Compare two signed tree heads (or monitor state files) seen by two monitors."""
    one, two = sorted((_head_of(first), _head_of(second)), key=lambda head: head.tree_size)
    client = LogClient(url) if url else None
    if key_hex is not None:
        try:
            key = bytes.fromhex(key_hex)
        except ValueError:
            raise InvalidInput("--key is the operator's public key in hex") from None
        for head in (one, two):
            try:
                head.check(key)
            except VerificationFailed:
                if head.key_id == key_id(key):
                    raise
                raise VerificationFailed(  # a rotation between them? the history tells
                    f"the head of size {head.tree_size:,} is signed by key {head.key_id[:16]}…, "
                    f"not the key you gave ({key_id(key)[:16]}…): if the operator rotated its "
                    "key, give --log, to check each head with the key in force at its size"
                ) from None
    elif client is not None:
        # Each head with the key in force at its size: the log's history, verified in its head.
        chain = client.key_chain(client.head())
        for head in (one, two):
            chain.check_head(head)
    else:
        raise InvalidInput("give the operator's key (--key) or the log (--log)")
    if one.tree_size == two.tree_size:
        if one.root_hash != two.root_hash:
            raise VerificationFailed(
                f"split view: two heads of size {one.tree_size:,}, both signed by the operator, "
                "with different roots"
            )
        click.echo(f"the heads agree: size {one.tree_size:,}, root {one.root_hash.hex()}")
        return
    if client is None:
        raise InvalidInput("heads of different sizes: give --log to fetch their consistency proof")
    proof = client.consistency(one.tree_size, two.tree_size)
    if not verify_consistency(one.tree_size, two.tree_size, one.root_hash, two.root_hash, proof):
        raise VerificationFailed(
            f"split view: the head of size {two.tree_size:,} does not extend the head of size "
            f"{one.tree_size:,}"
        )
    click.echo(f"consistent: the head of size {two.tree_size:,} extends {one.tree_size:,}")


def register(group: click.Group) -> None:
    group.add_command(monitor_command)
