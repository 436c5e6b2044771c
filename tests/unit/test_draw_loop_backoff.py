"""A drawer's turn that keeps failing (a corrupted row, the database away) writes one line per
failure, no traceback, and is tried again after a pause that doubles up to a few seconds."""

from __future__ import annotations

import itertools
import logging
import threading
import time

import pytest

from grattage.entrypoints import draw_loop
from grattage.entrypoints.draw_loop import DrawLoop


def test_a_failing_turn_logs_one_line_and_backs_off(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[float] = []

    def failing() -> float:
        calls.append(time.monotonic())
        raise RuntimeError("IntegrityError: duplicate key\nDETAIL: a second line")

    loop = DrawLoop.__new__(DrawLoop)
    loop._stop = threading.Event()
    thread = threading.Thread(target=loop._run, args=(failing,), name="grattage-drawer")
    with caplog.at_level(logging.WARNING, logger="grattage.drawer"):
        thread.start()
        time.sleep(2.0)
        loop._stop.set()
        thread.join(timeout=10)
    assert 2 <= len(calls) <= 3  # 0.5 s, then 1 s, then 2 s: not ten a second
    gaps = [later - earlier for earlier, later in itertools.pairwise(calls)]
    assert all(gap >= 0.45 for gap in gaps) and gaps == sorted(gaps)
    lines = [record for record in caplog.records if record.name == "grattage.drawer"]
    assert len(lines) == len(calls)
    assert all(record.exc_info is None for record in lines)
    assert "drawer failed (RuntimeError: IntegrityError: duplicate key)" in lines[0].getMessage()
    assert draw_loop.RETRY_AT_MOST_SECONDS <= 5
