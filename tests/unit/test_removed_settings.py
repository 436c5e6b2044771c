"""A setting the platform no longer reads is refused in one line, not silently ignored."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from grattage.entrypoints.cli import cli


@pytest.mark.parametrize("command", [["serve"], ["sweep"], ["draw"], ["sequence"]])
def test_a_removed_setting_still_set_stops_the_command_in_one_line_exit_2(
    tmp_path, monkeypatch, command
):
    monkeypatch.setenv("GRATTAGE_DATABASE_URL", f"sqlite:///{tmp_path}/never-created.db")
    monkeypatch.setenv("GRATTAGE_PURCHASE_THREADS", "8")
    result = CliRunner().invoke(cli, command)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "GRATTAGE_PURCHASE_THREADS is no longer a setting" in lines[0]
    assert "unset it" in lines[0]
    assert not (tmp_path / "never-created.db").exists()
