"""What ``grattage serve`` adds to uvicorn: a deadline to read each request, a bound on its
head, and workers that die with their master.

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``), but waits forever for a
request that is sent slowly or never finished: a connection that sends nothing, half a head,
or a body a byte a minute stayed open (4 000 of them, all still open after 30 s).
:class:`DeadlineHttpToolsProtocol` gives each request ``request_read_timeout_seconds`` from
its first byte (or from the connection's opening) to arrive whole, head and body, and
closes the connection otherwise; a head over :data:`MAX_HEAD_BYTES` is cut off the same way.
The time the app then takes to answer is not counted. Behind a proxy, the proxy should cut
slow clients first (docs/deploy.md: nginx ``client_header_timeout``, ``client_body_timeout``).

uvicorn's workers are child processes of its master; SIGKILLed, the master cannot stop them,
and they went on serving as orphans, holding the port. :func:`die_with_master` asks the kernel
(``prctl(PR_SET_PDEATHSIG)``, Linux) to send each worker SIGTERM when its master dies.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import os
import signal
import sys

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MASTER_PID_VARIABLE = "GRATTAGE_SERVE_MASTER_PID"
"""Set by ``serve`` for its workers: the pid of the master they must not outlive."""
MAX_HEAD_BYTES = 64 * 1024
"""Request line and headers; nginx's default ``large_client_header_buffers`` is 4 × 8 KiB."""
PR_SET_PDEATHSIG = 1


@functools.cache
def _read_timeout() -> float:
    # Read in the worker (uvicorn builds the protocol there, from its import path).
    from grattage.settings import Settings

    return Settings().request_read_timeout_seconds


class DeadlineHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline to read each request and a bounded head."""

    _deadline: asyncio.TimerHandle | None = None
    _head_bytes: int | None = None
    """Bytes of the head received so far; None once the head is complete."""
    _tail: bytes = b""
    """The last bytes of the head seen, where its ending blank line may have begun."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._request_starts()

    def _request_starts(self) -> None:
        self._head_bytes = 0
        self._tail = b""
        self._deadline = self.loop.call_later(_read_timeout(), self._too_slow)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None:  # a byte after a whole request: the next request begins
            self._request_starts()
        if self._head_bytes is not None:
            # One read often holds the head and the start of the body: only the bytes up to
            # the blank line that ends the head count against its bound.
            seen = self._tail + data
            end = seen.find(b"\r\n\r\n")
            self._head_bytes += len(data) if end < 0 else end + 4 - len(self._tail)
            self._tail = seen[-3:]
            if self._head_bytes > MAX_HEAD_BYTES:
                self._cut_off()
                return
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._head_bytes = None
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._stop_deadline()
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        super().connection_lost(exc)

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        self._cut_off()

    def _cut_off(self) -> None:
        # The app, if it was reading the body, hears http.disconnect (connection_lost).
        self._stop_deadline()
        if not self.transport.is_closing():
            self.transport.close()


def die_with_master() -> None:
    """In a worker of ``serve --workers N``: be sent SIGTERM when the master dies.

    Does nothing outside such a worker (``serve --workers 1`` runs in the master itself).
    Should the master already be gone by the time this runs, the worker leaves at once."""
    master = os.environ.get(MASTER_PID_VARIABLE)
    if master is None or not sys.platform.startswith("linux"):
        return
    if str(os.getpid()) == master:
        return  # the master itself
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if str(os.getppid()) != master:  # the master died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)
