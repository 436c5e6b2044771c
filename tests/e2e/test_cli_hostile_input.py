"""What an outsider's hostile files and values did to the CLI (issue 11's review): each is now
one line on stderr and exit 2 (bad input), never a traceback, a hang or the kernel's OOM kill."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GRATTAGE = str(Path(sys.executable).parent / "grattage")
DEEP_JSON = "[" * 2000 + "]" * 2000
DEEP_TOML = "x = " + "[" * 5000 + "]" * 5000
LONG_INTEGER_PROOF = '{"format":"grattage-ticket-proof/1","position":' + "9" * 5000 + "}"
HUGE_TABLE = (
    'game = "cash"\nblock_size = 99999999999999999999\n[[tiers]]\nprize_cents = 500\ncount = 1\n'
)


def grattage(tmp_path: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    env = {"GRATTAGE_DATABASE_URL": f"sqlite:///{tmp_path}/none.db", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [GRATTAGE, *args], cwd=tmp_path, env=env, input=stdin, capture_output=True, timeout=60,
        check=False,
    )  # fmt: skip
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def file(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return name


CASES = {
    "a proof nested 2 000 deep": lambda t: ["verify-ticket", file(t, "deep.json", DEEP_JSON)],
    "a disclosure nested 2 000 deep": lambda t: ["verify-block", file(t, "deep.json", DEEP_JSON)],
    "a ticket nested 2 000 deep": lambda t: ["ticket", "check", file(t, "deep.json", DEEP_JSON)],
    "a table nested 5 000 deep": lambda t: [
        "ticket", "design", "cash", "--prize", "0", "--prize-table", file(t, "deep.toml", DEEP_TOML)
    ],
    "a 5 000-digit integer in a proof": lambda t: [
        "verify-ticket", file(t, "long.json", LONG_INTEGER_PROOF)
    ],
    "a 5 000-digit prize": lambda t: ["ticket", "design", "cash", "--prize", "9" * 5000],
    "a prize with an exponent": lambda t: ["ticket", "design", "cash", "--prize", "1e3"],
    "an endless proof (/dev/zero)": lambda t: ["verify-ticket", "/dev/zero"],
    "an endless table (/dev/zero)": lambda t: [
        "ticket", "design", "cash", "--prize", "0", "--prize-table", "/dev/zero"
    ],
    "a block id past 64 bits": lambda t: ["block", "close", "99999999999999999999"],
    "a block id that is not a number": lambda t: ["block", "close", "abc"],
    "a million Astro blocks in one file": lambda t: [
        "block", "generate", "astro", "--blocks", "100000000", "--out", "x.block"
    ],
    "a table of 10^20 units": lambda t: [
        "block", "generate", "cash", "--prize-table", file(t, "huge.toml", HUGE_TABLE),
        "--out", "x.block",
    ],
    "an unknown command": lambda t: ["no-such-command"],
    # a file that is not the document at all is bad input; one that claims it and fails, exit 1
    "an array for a proof": lambda t: ["verify-ticket", file(t, "a.json", "[1, 2]")],
    "a disclosure for a proof": lambda t: [
        "verify-ticket", file(t, "d.json", '{"format": "grattage-disclosure/2"}')
    ],
    "a proof for a disclosure": lambda t: [
        "verify-block", file(t, "p.json", '{"format": "grattage-ticket-proof/2"}')
    ],
    "an array for the pinned head": lambda t: [
        "verify-ticket", file(t, "p.json", '{"format": "grattage-ticket-proof/2"}'),
        "--sth", file(t, "a.json", "[]"),
    ],
    "heads without a format to compare": lambda t: [
        "monitor", "compare", file(t, "a.json", '{"tree_size": 1}'), file(t, "b.json", "{}")
    ],
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_hostile_input_is_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    done = grattage(tmp_path, *CASES[case](tmp_path))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grattage: error: "), done.stderr
    assert not (tmp_path / "x.block").exists()


def test_an_endless_standard_input_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        f"{GRATTAGE} ticket check - < /dev/zero", shell=True, cwd=tmp_path, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("grattage: error: a line is longer")


def test_a_password_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    done = grattage(
        tmp_path, "operator", "create", "o@example.org", "--password-stdin", stdin=b"\xff\xfe\n"
    )
    assert (done.returncode, done.stderr) == (
        2,
        "grattage: error: the password is not UTF-8 text (byte 0: b'\\xff')\n",
    )
