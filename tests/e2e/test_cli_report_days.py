"""`grattage report` with days outside 2000..2100 or a period over 366 days: one line on
stderr and exit 2, never a traceback (it printed an OverflowError's and exited 0)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GRATTAGE = str(Path(sys.executable).parent / "grattage")


def grattage(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "GRATTAGE_DATABASE_URL": f"sqlite:///{tmp_path}/report.db",
        "GRATTAGE_KEY_DIR": str(tmp_path / "keys"),
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [GRATTAGE, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    assert grattage(folder, "migrate").returncode == 0
    return folder


@pytest.mark.parametrize(
    "dates",
    [
        ["--to", "9999-12-31"],
        ["--from", "0001-01-01"],
        ["--from", "2024-01-01", "--to", "2025-06-01"],
        ["--from", "2025-01-02", "--to", "2025-01-01"],
        ["--to", "20250101"],
    ],
)
def test_a_report_day_out_of_bounds_is_one_line_and_exit_2(
    migrated: Path, dates: list[str]
) -> None:
    done = grattage(migrated, "report", "days", *dates)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_report_of_one_year_is_printed(migrated: Path) -> None:
    done = grattage(migrated, "report", "days", "--from", "2024-01-01", "--to", "2024-12-31")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("day,game,units_sold")
