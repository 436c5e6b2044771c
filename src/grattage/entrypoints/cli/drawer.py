"""``grattage draw``: the drawer as a process of its own (docs/draw.md, "The draw in the
platform") — it has the log's heads cosigned before the rounds its receipts name and draws
each published round, while it holds the lease (one drawer leads; start several for standby).

``grattage serve`` starts one beside its workers when a witness is set, starts it again
whenever it exits, and stops it with them, so that cosigning and drawing never wait for a
request thread's turn at the GIL: in a worker, the cosigner waited hundreds of milliseconds
per turn behind the purchases, and rounds passed before their heads were cosigned
(PostgreSQL, 2 workers, measured).
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
from types import FrameType

import click

from grattage.errors import InvalidInput
from grattage.settings import Settings

DRAWER_MASTER_VARIABLE = "GRATTAGE_DRAWER_MASTER_PID"


@click.command("draw")
def draw() -> None:
    """Cosign and draw, as the leader, until stopped (SIGTERM, Ctrl-C)."""
    stopped = threading.Event()

    def stop(_signal: int, _frame: FrameType | None) -> None:
        stopped.set()

    # First of all: a SIGTERM while the platform is being built stops it cleanly too.
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    from grattage.adapters.database import describe_database
    from grattage.entrypoints.bootstrap import build_platform
    from grattage.entrypoints.draw_loop import DrawLoop

    _die_with_serve()
    settings = Settings.from_environment()
    platform = build_platform(settings, run_migrations=False, create_database=False)
    if platform.witness is None:
        raise InvalidInput("grattage draw needs a witness: set GRATTAGE_WITNESS_URL and _KEY")
    # Its lines on stderr, one each (``serve``'s drawer writes into the server's log).
    logging.basicConfig(level=logging.INFO, format="%(asctime)s grattage draw: %(message)s")
    loop = DrawLoop(platform, lead=True)
    logging.getLogger("grattage.drawer").info(
        "drawing the sales of %s with the witness at %s (holder %s)",
        describe_database(settings.database_url),
        settings.witness_url,
        loop.drawer.holder,
    )
    loop.start()
    stopped.wait()
    loop.stop()


def _die_with_serve() -> None:
    """Started by ``serve``: be sent SIGTERM when it dies (even by SIGKILL)."""
    master = os.environ.get(DRAWER_MASTER_VARIABLE)
    if master is None:
        return
    from grattage.entrypoints import serving

    os.environ[serving.MASTER_PID_VARIABLE] = master
    serving.die_with_master()


RESTART_FIRST_SECONDS = 0.5
RESTART_AT_MOST_SECONDS = 10.0
RAN_LONG_SECONDS = 30.0
"""A drawer that ran this long before it exited is restarted after the first pause again."""

log = logging.getLogger("grattage.drawer")


class DrawerBeside:
    """``serve``'s drawer process, restarted whenever it exits (killed, crashed) until
    ``serve`` stops it: while none runs, no drawer holds the lease and drawn sales are refused
    (service/drawer_seen.py), so a dead drawer must not stay dead. One line per exit, and a
    pause that doubles (up to ``RESTART_AT_MOST_SECONDS``) while it keeps exiting at once."""

    def __init__(self, command: list[str], environment: dict[str, str]) -> None:
        self.command, self.environment = command, environment
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._watcher = threading.Thread(target=self._watch, name="grattage-drawer-watch")
        self._watcher.daemon = True

    def start(self) -> None:
        with self._lock:
            self.process = self._popen()
        self._watcher.start()

    def _popen(self) -> subprocess.Popen[bytes]:
        # A session of its own: a Ctrl-C at the terminal reaches serve, which stops the drawer
        # itself (stop()); had the drawer got it too, it would have exited first and been
        # restarted during the shutdown. serve's death still reaches it (_die_with_serve).
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
                "the drawer (pid %d) exited with code %d; starting another in %.1f s",
                process.pid,
                code,
                pause,
            )
            if self._stopped.wait(pause):
                return
            # Started from this thread, which lives until stop(): the drawer's death signal
            # (PR_SET_PDEATHSIG) fires when the thread that started it ends, not the process.
            with self._lock:  # never a drawer started after stop()
                if self._stopped.is_set():
                    return
                self.restarts += 1
                self.process = self._popen()
            pause = min(pause * 2, RESTART_AT_MOST_SECONDS)

    def stop(self, timeout: float = 30) -> None:
        """Stop the drawer with the server (SIGTERM, then wait), and restart it no more."""
        with self._lock:
            self._stopped.set()
            process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            process.wait(timeout=timeout)


def start_beside_serve(settings: Settings) -> DrawerBeside | None:
    """``serve``'s drawer process, when a witness is set and the drawer runs; the workers then
    only keep the witness's health for their own sales."""
    if settings.witness_url is None or not settings.run_drawer:
        return None
    environment = {**os.environ, DRAWER_MASTER_VARIABLE: str(os.getpid())}
    grattage = str(Path(sys.executable).parent / "grattage")
    drawer = DrawerBeside([grattage, "draw"], environment)
    drawer.start()
    os.environ["GRATTAGE_RUN_DRAWER"] = "0"  # the workers: health only
    return drawer


def register(cli: click.Group) -> None:
    cli.add_command(draw)
