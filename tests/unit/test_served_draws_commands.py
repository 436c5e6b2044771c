"""``verify-block --draws FILE|URL`` against the draws file's SHA-256 logged at the block's
publication (``draws_sha256`` of ``disclosure.published``, docs/fairness.md), and the monitor
on that member's shape: a tampered or substituted file is refused in one line."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drawn_log import DrawnLog
from drawn_log_server import serving
from grattage.blocks.log_audit import LogAuditor
from grattage.blocks.signing import canonical_json
from grattage.entrypoints.cli import cli
from grattage.errors import VerificationFailed

DRAWS = "/api/blocks/1/draws"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def published_log(draws: bytes | None = None) -> tuple[DrawnLog, bytes, bytes]:
    """An ended drawn block whose disclosure and draws files are published and logged (the
    draws' SHA-256 logged: that of ``draws`` when given, else of the block's true draws)."""
    log = DrawnLog(size=200)
    log.run(rounds=6, per_round=10)
    log.end()
    disclosure = json.dumps(log.disclosure()).encode()
    true_draws = log.draws_file()
    log.disclosed(disclosure, true_draws if draws is None else draws)
    return log, disclosure, true_draws


@pytest.fixture(scope="module")
def published() -> tuple[DrawnLog, bytes, bytes]:
    return published_log()


def _one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_served_draws_file_with_the_logged_sha256_replays(published, tmp_path: Path) -> None:
    log, disclosure, draws = published
    path = tmp_path / "disclosure.json"
    path.write_bytes(disclosure)
    with serving(log, {DRAWS: draws}) as url:
        result = run("verify-block", str(path), "--log", url, "--draws", url + DRAWS)
    assert result.exit_code == 0, result.output
    assert "60 draws replayed" in result.stdout
    assert "the draws file is the one logged" in result.stdout


def test_a_draws_file_given_as_a_file_is_checked_against_the_log_too(
    published, tmp_path: Path
) -> None:
    log, disclosure, draws = published
    path, draws_path = tmp_path / "disclosure.json", tmp_path / "draws.gdrw"
    path.write_bytes(disclosure)
    draws_path.write_bytes(draws)
    with serving(log) as url:
        result = run("verify-block", str(path), "--log", url, "--draws", str(draws_path))
    assert result.exit_code == 0, result.output
    assert "the draws file is the one logged" in result.stdout


def test_a_tampered_served_draws_file_is_refused_in_one_line(published, tmp_path: Path) -> None:
    log, disclosure, draws = published
    path = tmp_path / "disclosure.json"
    path.write_bytes(disclosure)
    tampered = bytearray(draws)
    tampered[-1] ^= 1  # the last sale's unit
    with serving(log, {DRAWS: bytes(tampered)}) as url:
        result = run("verify-block", str(path), "--log", url, "--draws", url + DRAWS)
    line = _one_line_error(result)
    assert f"{url}{DRAWS}: its SHA-256" in line
    assert "is not the draws_sha256 logged at the block's publication" in line


def test_a_logged_draws_sha256_that_is_not_the_log_s_draws_is_refused(tmp_path: Path) -> None:
    log, disclosure, _ = published_log(draws=b"GDRW another file")
    path = tmp_path / "disclosure.json"
    path.write_bytes(disclosure)
    with serving(log) as url:
        result = run("verify-block", str(path), "--log", url)
    line = _one_line_error(result)
    assert "is not the SHA-256 of the draws the log holds" in line


def test_a_draws_url_that_does_not_answer_the_file_is_refused(published, tmp_path: Path) -> None:
    log, disclosure, _ = published
    path = tmp_path / "disclosure.json"
    path.write_bytes(disclosure)
    with serving(log) as url:
        result = run("verify-block", str(path), "--log", url, "--draws", url + DRAWS)
    assert f"{url}{DRAWS} answered 404" in _one_line_error(result)


def _audit(log: DrawnLog) -> None:
    auditor = LogAuditor(log.operator.public_key)
    for index, entry in enumerate(log.entries):
        auditor.feed(index, entry)


@pytest.mark.parametrize("value", [None, "AB" * 32, "ab" * 31, 7])
def test_the_monitor_refuses_a_drawn_block_s_publication_without_a_draws_sha256(
    published, value: object
) -> None:
    log = copy.deepcopy(published[0])
    entry = log.entries[-1]
    assert entry["kind"] == "disclosure.published"
    _audit(log)  # as published: clean
    if value is None:
        del entry["draws_sha256"]
    else:
        entry["draws_sha256"] = value
    at = len(log.entries) - 1
    with pytest.raises(VerificationFailed, match=rf"^entry {at}: .*draws_sha256"):
        _audit(log)


def test_the_vector_s_entry_binds_the_vector_s_draws_file_in_canonical_json() -> None:
    golden = Path(__file__).parents[1] / "fixtures" / "golden" / "draws_file_vectors.json"
    vectors = json.loads(golden.read_text("ascii"))
    text = vectors["disclosure_published_entry"]
    entry = json.loads(text)
    assert canonical_json(entry).decode("ascii") == text
    assert entry["draws_sha256"] == vectors["file_sha256"]
    assert list(entry) == [
        "block_id", "commitment_index", "draws_sha256", "key", "kind", "sha256", "time", "v",
    ]  # fmt: skip
