"""The processes ``grattage serve`` runs beside its workers — the drawer (``grattage draw``,
cli/drawer.py) when a witness is set, else the log's sequencer (``grattage sequence``,
cli/sequencer.py) — restarted whenever they exit and stopped with the server.

Each is a process of its own so that its work never waits for a request thread's turn at the
GIL: in a worker, the cosigner waited hundreds of milliseconds per turn behind the purchases
(rounds passed before their heads were cosigned), and a merge of the log held SQLite's one
write lock while it waited, every purchase of both workers waiting behind it.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from grattage.settings import Settings

BESIDE_MASTER_VARIABLE = "GRATTAGE_BESIDE_MASTER_PID"
"""Set by ``serve`` for the processes beside it: the pid they must not outlive."""


class StopRequest:
    """SIGTERM and SIGINT as a flag the main thread looks at, every ``STEP_SECONDS`` while it
    waits. Not a ``threading.Event`` set by the handler: the handler runs on the main thread,
    between two bytecodes — also inside that very Event's ``wait``, while it holds the Event's
    lock — and then waits for that lock forever (a sequencer so outlived its ``serve`` in CI,
    asleep in its own handler, three SIGTERMs deep)."""

    STEP_SECONDS = 0.05

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, _signal: int, _frame: object) -> None:
        self.requested = True

    def wait(self, seconds: float | None = None) -> bool:
        """Sleep ``seconds`` (forever: None) or until a stop is asked; whether one was."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while not self.requested:
            left = self.STEP_SECONDS if deadline is None else deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, self.STEP_SECONDS))
        return self.requested


def die_with_serve() -> None:
    """Started by ``serve``: be sent SIGTERM when it dies (even by SIGKILL)."""
    master = os.environ.get(BESIDE_MASTER_VARIABLE)
    if master is None:
        return
    from grattage.entrypoints import serving

    os.environ[serving.MASTER_PID_VARIABLE] = master
    serving.die_with_master()


RESTART_FIRST_SECONDS = 0.5
RESTART_AT_MOST_SECONDS = 10.0
RAN_LONG_SECONDS = 30.0
"""A process that ran this long before it exited is restarted after the first pause again."""

log = logging.getLogger("grattage.serve")


class ProcessBeside:
    """A process ``serve`` runs beside its workers, restarted whenever it exits (killed,
    crashed) until ``serve`` stops it: while no drawer runs, none holds the lease and drawn
    sales are refused (service/drawer_seen.py); while no sequencer runs, receipts wait for
    their place in the log — so neither may stay dead. One line per exit, and a pause that
    doubles (up to ``RESTART_AT_MOST_SECONDS``) while it keeps exiting at once."""

    def __init__(self, name: str, command: list[str], environment: dict[str, str]) -> None:
        self.name, self.command, self.environment = name, command, environment
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._watcher = threading.Thread(target=self._watch, name="grattage-beside-watch")
        self._watcher.daemon = True

    def start(self) -> None:
        with self._lock:
            self.process = self._popen()
        self._watcher.start()

    def _popen(self) -> subprocess.Popen[bytes]:
        # A session of its own: a Ctrl-C at the terminal reaches serve, which stops the process
        # itself (stop()); had the process got it too, it would have exited first and been
        # restarted during the shutdown. serve's death still reaches it (die_with_serve).
        return subprocess.Popen(self.command, env=self.environment, start_new_session=True)

    def _watch(self) -> None:
        pause = RESTART_FIRST_SECONDS
        while True:
            with self._lock:
                process = self.process
            assert process is not None
            started = time.monotonic()
            code = process.wait()
            if self._stopped.is_set():
                return
            if time.monotonic() - started >= RAN_LONG_SECONDS:
                pause = RESTART_FIRST_SECONDS
            log.warning(
                "the %s (pid %d) exited with code %d; starting another in %.1f s",
                self.name,
                process.pid,
                code,
                pause,
            )
            if self._stopped.wait(pause):
                return
            # Started from this thread, which lives until stop(): the child's death signal
            # (PR_SET_PDEATHSIG) fires when the thread that started it ends, not the process.
            with self._lock:  # never a process started after stop()
                if self._stopped.is_set():
                    return
                self.restarts += 1
                self.process = self._popen()
            pause = min(pause * 2, RESTART_AT_MOST_SECONDS)

    def stop(self, timeout: float = 30) -> None:
        """Stop the process with the server (SIGTERM, then wait), and restart it no more."""
        with self._lock:
            self._stopped.set()
            process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            process.wait(timeout=timeout)


def start_beside_serve(settings: Settings) -> ProcessBeside | None:
    """``serve``'s process beside its workers: the drawer when a witness is set (it merges the
    log too), else the log's sequencer; the workers then leave that work to it."""
    grattage = str(Path(sys.executable).parent / "grattage")
    environment = {**os.environ, BESIDE_MASTER_VARIABLE: str(os.getpid())}
    if settings.witness_url is not None:
        if not settings.run_drawer:
            return None
        beside = ProcessBeside("drawer", [grattage, "draw"], environment)
        workers_leave = "GRATTAGE_RUN_DRAWER"  # the workers: the witness's health only
    else:
        if not settings.run_sequencer:
            return None
        beside = ProcessBeside("sequencer", [grattage, "sequence"], environment)
        workers_leave = "GRATTAGE_RUN_SEQUENCER"
    beside.start()
    os.environ[workers_leave] = "0"
    return beside
