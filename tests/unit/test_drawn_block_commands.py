"""``verify-block``, ``verify-ticket`` and ``monitor`` on a drawn block (docs/draw.md): the
draws replayed from a draws file or from the log, each ticket's draw recomputed, the monitor
naming the entry of a forgery — exit 0 when all holds, 1 naming what does not."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drawn_log import DrawnLog
from drawn_log_server import serving, serving_witness
from grattage.entrypoints.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def ended() -> DrawnLog:
    log = DrawnLog(size=200)
    log.run(rounds=10, per_round=12)
    log.end()
    return log


def files(log: DrawnLog, tmp_path: Path) -> tuple[Path, Path]:
    disclosure, draws = tmp_path / "disclosure.json", tmp_path / "draws.gdrw"
    disclosure.write_text(json.dumps(log.disclosure()))
    draws.write_bytes(log.draws_file())
    return disclosure, draws


def test_a_drawn_block_s_draws_replay_from_its_file(ended, tmp_path):
    disclosure, draws = files(ended, tmp_path)
    result = run("verify-block", str(disclosure), "--draws", str(draws))
    assert result.exit_code == 0, result.output
    assert "120 draws replayed" in result.stdout and "80 units never reached" in result.stdout
    logged = ended.entries[-1]["prizes_never_sold"]
    for row in logged:
        assert f"{row['count']:>10,} ×" in result.stdout
    assert "UNPINNED" in result.stdout


def test_without_its_draws_a_drawn_block_says_they_were_not_replayed(ended, tmp_path):
    disclosure, _ = files(ended, tmp_path)
    result = run("verify-block", str(disclosure))
    assert result.exit_code == 0, result.output
    assert "its draws NOT REPLAYED" in result.stdout


def test_a_draws_file_with_a_forged_draw_exits_1_naming_it(ended, tmp_path):
    forged = copy.deepcopy(ended)
    entry = forged.entries[forged.sales[33].drawn_index]
    entry["slot"] = entry["slot"] + 1 if entry["slot"] + 1 < forged.size else 33
    disclosure, draws = files(forged, tmp_path)
    result = run("verify-block", str(disclosure), "--draws", str(draws))
    assert result.exit_code == 1
    assert "draw 33: the slot re-derived" in result.stderr


def test_the_draws_replay_from_the_log_and_a_file_must_be_the_log_s(ended, tmp_path):
    disclosure, draws = files(ended, tmp_path)
    with serving(ended) as url:
        from_log = run("verify-block", str(disclosure), "--log", url)
        assert from_log.exit_code == 0, from_log.output
        assert "120 draws replayed" in from_log.stdout
        assert "120 receipts are in the log" in from_log.stdout
        both = run("verify-block", str(disclosure), "--log", url, "--draws", str(draws))
        assert both.exit_code == 0, both.output
        other = copy.deepcopy(ended)
        other.entries[other.sales[0].drawn_index]["unit"] = 199
        draws.write_bytes(other.draws_file())
        refused = run("verify-block", str(disclosure), "--log", url, "--draws", str(draws))
    assert refused.exit_code == 1
    assert "is not the draws the log holds" in refused.stderr


def test_a_drawn_ticket_s_proof_prints_its_recomputed_draw(ended, tmp_path):
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(ended.proof(17)))
    result = run("verify-ticket", str(proof))
    assert result.exit_code == 0, result.output
    sale = ended.sales[17]
    assert f"slot {sale.slot:,} recomputed, unit {sale.unit:,}" in result.stdout
    with serving(ended) as url:
        pinned = run("verify-ticket", str(proof), "--log", url)
    assert pinned.exit_code == 0, pinned.output
    assert "PINNED" in pinned.stdout


def test_the_monitor_passes_a_drawn_log_and_names_a_forged_draw(ended, tmp_path):
    state = tmp_path / "monitor.json"
    with serving(ended) as url:
        clean = run("monitor", url, "--state", str(state))
    assert clean.exit_code == 0, clean.output
    forged = copy.deepcopy(ended)
    at = forged.sales[50].drawn_index
    forged.entries[at]["link"] = forged.chain.link(50).hex()
    with serving(forged) as url:
        caught = run("monitor", url, "--state", str(tmp_path / "fresh.json"))
    assert caught.exit_code == 1
    assert f"entry {at}: draw 50: the link does not hash" in caught.stderr


def test_the_monitor_names_a_cosigned_head_of_another_log(tmp_path):
    log = DrawnLog(size=60)
    log.run(rounds=3, per_round=4)
    fork = copy.deepcopy(log)
    fork.sell(6, 6, seed="ab")  # the witness is shown this history...
    pair = fork.cosign(6)
    log.sell(9, 6)  # ...the monitors another one, longer
    log.cosigned[6] = [pair]
    log.publish(6)
    with serving(log) as url:
        result = run("monitor", url, "--state", str(tmp_path / "state.json"))
    assert result.exit_code == 1
    assert "the witness was shown another log" in result.stderr


def test_a_late_draw_that_skipped_a_covered_round_is_caught_with_the_witness(tmp_path):
    """Round 4 covered the sale, but its value was bad for the operator: it logged no round 4
    and drew the sale 'late' with round 5. The log alone cannot tell (a round that draws
    nothing is not logged); the witness's list of heads cosigned for round 4 can."""
    log = DrawnLog(size=60)
    log.run(rounds=2, per_round=3)
    log.sell(1, 4)
    log.cosign(4)  # the head covering the sale, cosigned for round 4...
    log.cosign(5)
    log.publish(5)  # ...which the operator never logs: drawn with 5
    assert log.entries[log.sales[-1].drawn_index]["beacon"]["round"] == 5
    with serving(log) as url:
        unchecked = run("monitor", url, "--state", str(tmp_path / "a.json"))
        assert unchecked.exit_code == 0, unchecked.output
        assert "1 late draws NOT CHECKED against the witness" in unchecked.stdout
        with serving_witness(log) as witness:
            caught = run("monitor", url, "--state", str(tmp_path / "a.json"), "--witness", witness)
    assert caught.exit_code == 1
    assert "the witness cosigned for round 4 a head covering its receipt" in caught.stderr


def test_an_honest_late_draw_passes_against_the_witness(tmp_path):
    log = DrawnLog(size=60)
    log.run(rounds=2, per_round=3)
    log.sell(1, 4)  # the witness never cosigned for round 4 (it was unreachable)
    log.cosign(5)
    log.publish(5)
    with serving(log) as url, serving_witness(log) as witness:
        result = run("monitor", url, "--state", str(tmp_path / "b.json"), "--witness", witness)
    assert result.exit_code == 0, result.output
    assert "1 late draws checked against the witness" in result.stdout


def sold_twice() -> tuple[DrawnLog, int]:
    """The outsider's scenario: slots 100… forgotten, then sales drawn — the first whose unit
    was already sold, and that unit."""
    log = DrawnLog(size=200)
    log.run(rounds=8, per_round=13)
    log.forget_slots(100)
    log.run(rounds=4, per_round=5, first_round=10)
    sold: dict[int, int] = {}
    for sale in log.sales:
        assert sale.unit is not None
        if sale.unit in sold:
            return log, sale.n
        sold[sale.unit] = sale.n
    raise AssertionError("no unit sold twice: draw more sales")


def test_a_drawn_ticket_s_check_says_one_proof_cannot_show_its_unit_was_sold_once(ended, tmp_path):
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(ended.proof(17)))
    with serving(ended) as url:
        result = run("verify-ticket", str(proof), "--log", url)
    assert result.exit_code == 0, result.output
    unit = ended.sales[17].unit
    assert f"NOT CHECKED: that no other sale got unit {unit:,}" in result.stdout


def test_with_replay_a_drawn_ticket_s_unit_is_checked_sold_once(ended, tmp_path):
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(ended.proof(17, size=ended.sales[40].drawn_index + 1)))
    with serving(ended) as url:
        result = run("verify-ticket", str(proof), "--log", url, "--replay")
    assert result.exit_code == 0, result.output
    assert f"unit {ended.sales[17].unit:,} sold once" in result.stdout
    assert "the block's 41 draws in it replayed" in result.stdout
    assert "NOT CHECKED" not in result.stdout


def test_a_ticket_whose_unit_was_already_sold_passes_alone_and_is_refused_with_replay(tmp_path):
    log, n = sold_twice()
    unit = log.sales[n].unit
    first = next(sale.n for sale in log.sales if sale.unit == unit)
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(log.proof(n)))
    with serving(log) as url:
        alone = run("verify-ticket", str(proof), "--log", url)
        replayed = run("verify-ticket", str(proof), "--log", url, "--replay")
    assert alone.exit_code == 0, alone.output  # one proof cannot show it...
    assert f"NOT CHECKED: that no other sale got unit {unit:,}" in alone.stdout
    assert replayed.exit_code == 1, replayed.output  # ...the block's draws can
    assert f"unit {unit} sold twice: to sale {first}, then to sale {n}" in replayed.stderr


def test_replay_needs_the_log(ended, tmp_path):
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(ended.proof(3)))
    result = run("verify-ticket", str(proof), "--replay")
    assert result.exit_code == 2
    assert "--replay needs --log URL" in result.stderr


def test_a_draws_file_alone_says_its_rounds_are_not_tied_to_the_receipts(tmp_path):
    """The outsider's forged file: sale 0 drawn with round 1, earlier than its receipt's round
    2 (round 1 was out before the block existed), the rest drawn consistently after it. The
    file holds no receipts: alone, the replay holds and must say what it did not tie; the log
    refuses it."""
    forged = DrawnLog(size=60)
    (first,) = forged.sell(1, 2)
    first.round = 1  # the drawer's books only: the receipt still names round 2
    forged.cosign(1)
    forged.publish(1)  # the sale of round 2 drawn with round 1
    assert forged.entries[first.drawn_index]["beacon"]["round"] == 1
    forged.run(rounds=3, per_round=4, first_round=3)
    disclosure, draws = files(forged, tmp_path)
    alone = run("verify-block", str(disclosure), "--draws", str(draws))
    assert alone.exit_code == 0, alone.output  # UNPINNED, as verify-ticket without a pin
    assert "13 draws replayed" in alone.stdout
    assert "its round, its link and its receipt" not in alone.stdout
    assert "the rounds and receipt hashes NOT TIED to the receipts" in alone.stdout
    assert "UNPINNED" in alone.stdout
    with serving(forged) as url:
        logged = run("verify-block", str(disclosure), "--log", url)
    assert logged.exit_code == 1
    assert "draw 0 is late with a round that is not later" in logged.stderr


def late_log() -> DrawnLog:
    """Round 4 covered the last sale, but the operator logged no round 4 and drew it with 5."""
    log = DrawnLog(size=60)
    log.run(rounds=2, per_round=3)
    log.sell(1, 4)
    log.cosign(4)
    log.cosign(5)
    log.publish(5)
    log.end()
    return log


def test_a_late_draw_s_ticket_says_only_the_witness_can_tell_it_was_forced(tmp_path):
    log = late_log()
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(log.proof(6)))
    with serving(log) as url:
        result = run("verify-ticket", str(proof), "--log", url)
    assert result.exit_code == 0, result.output
    assert "LATE: drawn with round 5, later than round 4 its receipt names" in result.stdout
    assert "NOT that no head cosigned for an earlier round did" in result.stdout
    assert "--witness" in result.stdout
    assert "published before a head covering it was cosigned" not in result.stdout


def test_verify_block_lists_late_draws_unchecked_unless_given_the_witness(tmp_path):
    log = late_log()
    disclosure, _ = files(log, tmp_path)
    with serving(log) as url:
        unchecked = run("verify-block", str(disclosure), "--log", url)
        with serving_witness(log) as witness:
            caught = run("verify-block", str(disclosure), "--log", url, "--witness", witness)
    assert unchecked.exit_code == 0, unchecked.output
    assert "late: sale 6 (receipt at entry" in unchecked.stdout
    assert "names round 4, drawn with round 5" in unchecked.stdout
    assert "1 late draws NOT CHECKED against the witness" in unchecked.stdout
    assert caught.exit_code == 1, caught.output
    assert "the witness cosigned for round 4 a head covering its receipt" in caught.stderr


def test_verify_block_passes_an_honest_late_draw_against_the_witness(tmp_path):
    log = DrawnLog(size=60)
    log.run(rounds=2, per_round=3)
    log.sell(1, 4)  # the witness never cosigned for round 4
    log.cosign(5)
    log.publish(5)
    log.end()
    disclosure, _ = files(log, tmp_path)
    with serving(log) as url, serving_witness(log) as witness:
        result = run("verify-block", str(disclosure), "--log", url, "--witness", witness)
    assert result.exit_code == 0, result.output
    assert "1 late draws checked against the witness" in result.stdout


def test_verify_block_witness_needs_the_log(ended, tmp_path):
    disclosure, _ = files(ended, tmp_path)
    result = run("verify-block", str(disclosure), "--witness", "http://127.0.0.1:9")
    assert result.exit_code == 2
    assert "--witness needs --log URL" in result.stderr


@pytest.mark.parametrize(
    ("forge", "named"),
    [
        (lambda e: e.update(slot="x"), "the log's draw 30 names slot 'x'"),
        (lambda e: e.update(slot=29), "the log's draw 30 names slot 29"),
        (lambda e: e.update(sequence=31), "the log's draw 31 of the block comes where draw 30"),
    ],
    ids=["slot not a number", "slot below n", "a draw left out"],
)
def test_replay_names_a_malformed_draw_of_the_block_in_one_line(ended, tmp_path, forge, named):
    forged = copy.deepcopy(ended)
    forge(forged.entries[forged.sales[30].drawn_index])
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(forged.proof(17)))
    with serving(forged) as url:
        result = run("verify-ticket", str(proof), "--log", url, "--replay")
    assert result.exit_code == 1, result.output
    assert named in result.stderr


def _outage(log: DrawnLog, number: int, comes_back: int) -> int:
    """A sale for round ``number``; the drawer is down until round ``comes_back`` (more than
    10 rounds on), when it draws it, honestly, late. The sale's receipt entry."""
    sale = log.sell(1, number)[0]
    log.cosign(comes_back)
    log.publish(comes_back)
    assert log.entries[sale.drawn_index]["beacon"]["round"] == comes_back
    return sale.receipt_index


def test_the_monitor_records_an_honest_late_draw_checks_on_and_names_a_later_forgery(tmp_path):
    state = tmp_path / "monitor.json"
    log = DrawnLog(size=80)
    log.run(rounds=2, per_round=3)
    first_late = _outage(log, 4, 16)
    log.run(rounds=2, per_round=3, first_round=17)
    with serving(log) as url:
        first = run("monitor", url, "--state", str(state))
    assert first.exit_code == 1
    named = f"timing violation at entry {first_late:,}: the receipt at entry {first_late}"
    assert first.output.count(named) == 1 and "has no resolution 10 rounds" in first.output
    assert "1 timing violations of the draw recorded" in first.stderr
    size = json.loads(state.read_text())["head"]["tree_size"]
    assert size == len(log.entries)  # it checked on past the violation, to the head

    # Clean entries: the violation named again, but exit 0 — it was reported, and an alert on
    # the monitor must tell a new violation from an old one (the cluster outsider's finding).
    log.run(rounds=2, per_round=3, first_round=19)
    with serving(log) as url:
        again = run("monitor", url, "--state", str(state))
    assert again.exit_code == 0 and again.output.count(named) == 1
    assert "clean" not in again.output and "no new timing violation" in again.output
    assert json.loads(state.read_text())["head"]["tree_size"] == len(log.entries)

    second_late = _outage(log, 22, 34)  # a second outage, later: named too
    log.run(rounds=2, per_round=3, first_round=35)
    with serving(log) as url:
        both = run("monitor", url, "--state", str(state))
    assert both.exit_code == 1 and both.output.count(named) == 1
    assert both.output.count(f"timing violation at entry {second_late:,}:") == 1
    assert "2 timing violations of the draw recorded" in both.stderr
    assert "1 of them new" in both.stderr

    log.run(rounds=2, per_round=3, first_round=37)
    forged = copy.deepcopy(log)
    at = forged.sales[-2].drawn_index
    forged.entries[at]["link"] = forged.chain.link(3).hex()
    with serving(forged) as url:
        caught = run("monitor", url, "--state", str(state))
    assert caught.exit_code == 1
    assert f"entry {at}: draw {forged.sales[-2].n}: the link does not hash" in caught.stderr
    assert caught.output.count(named) == 1  # what was recorded is still named
    assert json.loads(state.read_text())["head"]["tree_size"] < len(forged.entries)  # stopped


def test_verify_block_names_the_block_s_timing_violations_after_replaying_it_all(tmp_path):
    # A draw more than 10 rounds late breaks the rule the monitor checks: verify-block used to
    # record it (as the monitor's check does) and then say nothing, exit 0.
    log = DrawnLog(size=80)
    log.run(rounds=2, per_round=3)
    late = _outage(log, 4, 16)
    log.run(rounds=2, per_round=3, first_round=17)
    log.end()
    disclosure, _ = files(log, tmp_path)
    with serving(log) as url:
        result = run("verify-block", str(disclosure), "--log", url)
    assert result.exit_code == 1, result.output
    assert f"timing violation at entry {late:,}: the receipt at entry {late}" in result.stdout
    assert "has no resolution 10 rounds" in result.stdout
    assert "everything else valid" in result.stdout and "13 draws replayed" in result.stdout
    assert "1 timing violations of the draw" in result.stderr


def test_verify_ticket_with_the_witness_catches_a_ticket_drawn_a_second_time(tmp_path):
    # The outsider's re-roll: round 4 covered the sale, the operator drew it with round 5.
    # A player could only be told "only the witness can tell"; with --witness, they ask it.
    log = late_log()
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(log.proof(6)))
    with serving(log) as url, serving_witness(log) as witness:
        caught = run("verify-ticket", str(proof), "--log", url, "--witness", witness)
    assert caught.exit_code == 1, caught.output
    assert "the witness cosigned for round 4 a head covering its receipt" in caught.stderr


def test_verify_ticket_with_the_witness_passes_an_honest_late_draw(tmp_path):
    log = DrawnLog(size=60)
    log.run(rounds=2, per_round=3)
    log.sell(1, 4)  # the witness never cosigned for round 4
    log.cosign(5)
    log.publish(5)
    proof = tmp_path / "proof.json"
    proof.write_text(json.dumps(log.proof(6)))
    with serving(log) as url, serving_witness(log) as witness:
        result = run("verify-ticket", str(proof), "--log", url, "--witness", witness)
        on_time = tmp_path / "on_time.json"
        on_time.write_text(json.dumps(log.proof(0)))
        fine = run("verify-ticket", str(on_time), "--log", url, "--witness", witness)
    assert result.exit_code == 0, result.output
    assert "LATE draw checked against the witness" in result.stdout
    assert fine.exit_code == 0 and "no witness check needed" in fine.stdout


def test_the_monitor_checks_rounds_exactly_with_the_margin_the_server_publishes(tmp_path):
    # Outsider finding: the exact check needed a margin published nowhere, so a default run
    # accepted a receipt naming the next round but one. GET /api/log/draw-rule publishes it.
    log = DrawnLog(size=60)
    log.run(1, 2)
    log.sell(1, 4, at_ms=log.round_time(3) - 300)  # a margin of 100 ms gives round 3
    log.cosign(4)
    log.publish(4)
    with serving(log, draw_margin_ms=100) as url:
        caught = run("monitor", url, "--state", str(tmp_path / "published.json"))
    with serving(log) as url:
        lenient = run("monitor", url, "--state", str(tmp_path / "unpublished.json"))
    assert caught.exit_code == 1, caught.output
    assert "names round 4, " in caught.stderr and "give round 3" in caught.stderr
    assert lenient.exit_code == 0, lenient.output
    assert "none published: give --draw-margin-ms" in lenient.stdout


def test_a_proof_whose_draw_lacks_a_member_is_refused_in_words(ended, tmp_path):
    # Outsider finding: "malformed draw: KeyError: 'cosigned'" — a Python name, not a reason.
    proof = ended.proof(17)
    del proof["draw"]["cosigned"]
    path = tmp_path / "proof.json"
    path.write_text(json.dumps(proof))
    with serving(ended) as url:
        result = run("verify-ticket", str(path), "--log", url)
    assert result.exit_code == 1, result.output
    assert "malformed draw: it has no 'cosigned' member" in result.stderr
    assert "KeyError" not in result.stderr
