"""The processes beside ``serve`` stop on SIGTERM, however many arrive, whenever they arrive:
a handler that set a ``threading.Event`` hung its process in 28 of 30 tries under a burst of
SIGTERMs (it ran inside the Event's own ``wait``, holding its lock, and waited for it)."""

from __future__ import annotations

import signal
import subprocess
import sys

WAITS_IN_A_LOOP = """
from grattage.entrypoints.cli.beside import StopRequest
stop = StopRequest()
print("ready", flush=True)
while not stop.wait(0.0001):
    pass
"""


def test_a_burst_of_sigterms_stops_the_process_every_time() -> None:
    for _ in range(10):
        process = subprocess.Popen([sys.executable, "-c", WAITS_IN_A_LOOP], stdout=subprocess.PIPE)
        assert process.stdout is not None
        assert process.stdout.readline() == b"ready\n"
        for _ in range(200):
            try:
                process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                break
        try:
            # 0, or -15: a SIGTERM of the burst can land after the interpreter put the
            # default handler back on its way out — stopped either way, not hung
            assert process.wait(timeout=5) in (0, -signal.SIGTERM)
        finally:
            process.kill()
            process.stdout.close()
