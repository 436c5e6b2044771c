"""The drawer's thread in a server process (docs/draw.md, "The draw in the platform"): it
keeps the witness's health fresh for this process's sales and, when this process holds the
lease, has the heads cosigned and draws each published round. A turn that fails (the witness
or the database unreachable for a moment, a row it cannot write) is logged in one line and
tried again after a pause that doubles, from half a second up to ``RETRY_AT_MOST_SECONDS``:
a fault that lasts writes a line every few seconds, not a traceback ten times a second."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from grattage.errors import WitnessUnavailable
from grattage.service.context import Platform
from grattage.service.drawer import Drawer

log = logging.getLogger("grattage.drawer")
RETRY_SECONDS = 0.5
RETRY_AT_MOST_SECONDS = 5.0


class DrawLoop:
    """Two threads: the cosigning half (and the witness's health), the drawing half."""

    def __init__(self, platform: Platform, lead: bool = True) -> None:
        self.drawer = Drawer(platform)
        self._stop = threading.Event()
        turns: list[Callable[[], float]] = [self.drawer.cosign_turn, self.drawer.draw_turn]
        if not lead:
            turns = [self.drawer.poll_only]
        self._threads = [
            threading.Thread(target=self._run, args=(turn,), name=f"grattage-{name}", daemon=True)
            for turn, name in zip(turns, ("cosigner", "drawer"), strict=False)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def _run(self, turn: Callable[[], float]) -> None:
        pause = RETRY_SECONDS
        while not self._stop.is_set():
            try:
                delay = turn()
            except WitnessUnavailable as error:  # said once for the outage, not every turn
                self.drawer.witness_unavailable(error)
                delay = RETRY_SECONDS
            except Exception as error:  # the loop must outlive a bad moment of the witness or
                # the database; the error's first line says which, its traceback is noise
                first_line = (str(error).strip().splitlines() or [""])[0][:300]
                log.warning(
                    "a turn of the %s failed (%s: %s); trying again in %.1f s",
                    threading.current_thread().name.removeprefix("grattage-"),
                    type(error).__name__,
                    first_line,
                    pause,
                )
                delay, pause = pause, min(pause * 2, RETRY_AT_MOST_SECONDS)
            else:
                pause = RETRY_SECONDS
            self._stop.wait(delay)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=10)
