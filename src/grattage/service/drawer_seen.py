"""Whether a drawer is drawing, as this process last read it (docs/draw.md, "The draw in the
platform"): a drawn sale is taken only while some drawer holds a live lease — a sale no drawer
will draw would stay covered, its stake taken, for as long as none runs.

The lease's expiry is read from the database at most once a second per process, so that a
sale pays nothing measurable for it. What is kept is the expiry itself, compared with the
beacon's time at every sale: a drawer that died is seen as gone exactly when its lease ends
(at most ``LEASE_MS`` after its last renewal), and one alive, renewing at half its lease, is
never seen as gone (its expiry read a second ago is still ahead).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

READ_EVERY_SECONDS = 1.0


@dataclass
class DrawerSeen:
    """The lease's expiry as last read, and when (this process's monotonic clock)."""

    expires_ms: int = 0
    read_at: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def running(self, now_ms: int, read_expiry: Callable[[], int]) -> bool:
        """Whether a drawer holds the lease at ``now_ms`` (beacon time); ``read_expiry``
        reads the lease's expiry from the database, called at most once a second."""
        moment = time.monotonic()
        with self._lock:
            fresh = self.read_at is not None and moment - self.read_at < READ_EVERY_SECONDS
            expires_ms = self.expires_ms
        if not fresh:
            expires_ms = read_expiry()
            with self._lock:
                self.expires_ms, self.read_at = expires_ms, moment
        return now_ms <= expires_ms

    def saw(self, expires_ms: int) -> None:
        """This process's drawer holds the lease until ``expires_ms``: no need to read it."""
        with self._lock:
            self.expires_ms, self.read_at = expires_ms, time.monotonic()

    def forget(self) -> None:
        """Read the lease again at the next question (a drawer just took it, a test)."""
        with self._lock:
            self.read_at = None
