"""The national exclusion register's file: read once at start, re-read when it changes, and
a hostile file is a clear error at start, never a failure per request."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from grattage.adapters import exclusion_register
from grattage.adapters.exclusion_register import FileExclusionRegister
from grattage.errors import InvalidInput
from grattage.service.identity import person

LISTED = person("Inès", "Interdite", date(1970, 3, 4)).key


def register_file(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "interdits.csv"
    path.write_bytes(content)
    return path


def test_a_listed_person_is_found_whatever_the_spelling(tmp_path: Path) -> None:
    path = register_file(
        tmp_path, "\ufefflast_name,first_name,birth_date\nINTERDITE , ines,1970-03-04\n\n".encode()
    )
    register = FileExclusionRegister(path)
    assert register.lists(LISTED)
    assert not register.lists(person("Inès", "Interdite", date(1970, 3, 5)).key)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"Interdite,In\xe8s,1970-03-04\n", "not UTF-8"),
        (b"Interdite,Ines\n", "expected last_name,first_name,birth_date"),
        (b"Interdite,Ines,04/03/1970\n", "is not YYYY-MM-DD"),
        (b"Interdite,Ines,1970-02-30\n", "is not YYYY-MM-DD"),
        (b"Interdite,Ines,631152000\n", "is not YYYY-MM-DD"),
        (b"R2D2,Ines,1970-03-04\n", "row 1: a name is 1 to 100 letters"),
        (b'"Interdite,Ines,1970-03-04\n' + b"x" * 200_000, "not CSV"),
    ],
)
def test_a_hostile_register_is_refused_at_start_with_its_reason(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    with pytest.raises(InvalidInput, match=reason):
        FileExclusionRegister(register_file(tmp_path, content))


def test_a_register_too_big_is_refused_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exclusion_register, "MAX_BYTES", 100)
    with pytest.raises(InvalidInput, match="over 100 bytes"):
        FileExclusionRegister(register_file(tmp_path, b"Interdite,Ines,1970-03-04\n" * 10))


def test_a_missing_register_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read the exclusion register"):
        FileExclusionRegister(tmp_path / "absent.csv")


def test_the_register_is_re_read_when_it_changes(tmp_path: Path) -> None:
    path = register_file(tmp_path, b"")
    register = FileExclusionRegister(path)
    assert not register.lists(LISTED)
    path.write_bytes(b"Interdite,Ines,1970-03-04\n")
    os.utime(path, ns=(1, 10**18))  # a new mtime even on a coarse clock
    assert register.lists(LISTED)


def test_a_change_that_cannot_be_read_keeps_the_list_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = register_file(tmp_path, b"Interdite,Ines,1970-03-04\n")
    register = FileExclusionRegister(path)
    path.write_bytes(b"\xff broken")
    for _ in range(3):
        assert register.lists(LISTED)
    assert [record.levelname for record in caplog.records].count("ERROR") == 1
