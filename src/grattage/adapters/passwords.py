"""Password hashing with Argon2id (argon2-cffi), the service's :class:`PasswordHasher` port.

Each computation takes ``memory_kib`` of memory and a core for a good fraction of a second,
so a process runs at most ``at_once`` of them at a time: a crowd of log-ins queues here, each
waiting at most ``wait_seconds`` for a slot before it is refused with
:class:`~grattage.errors.Busy`, instead of taking the process's memory and every core from
the players already logged in. The computations run on the process's own threads, at a
lower scheduling priority (``nice`` +``HASHING_NICENESS``, on Linux), so that whatever CPU
they take, the requests of players already logged in are served first.

In the HTTP server a request that will hash first waits for one of :class:`HashingSlots`
on the event loop, holding no thread: a waiting log-in must not take one of the threads
that every other request (a purchase) is served from.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from grattage.errors import Busy

T = TypeVar("T")

HASHING_NICENESS = 10


def _lower_priority() -> None:
    """Run this thread (and the threads argon2 starts from it) after everything else."""
    if hasattr(os, "setpriority"):
        # On Linux a thread's id names that thread alone for PRIO_PROCESS; where it is not
        # allowed, the bound alone still holds.
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HASHING_NICENESS)


def _busy() -> Busy:
    return Busy(
        "too many password checks at once right now; retry in a moment",
        retry_after_seconds=1,
    )


class HashingSlots:
    """At most ``at_once`` requests that hash at a time, the others waiting on the event loop
    (not on a thread) at most ``wait_seconds``, then refused with :class:`Busy`."""

    def __init__(self, at_once: int, wait_seconds: float) -> None:
        self._at_once = at_once
        self._wait_seconds = wait_seconds
        # An asyncio semaphore belongs to one event loop; a test client may run several.
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        slots = self._per_loop.get(loop)
        if slots is None:
            slots = self._per_loop.setdefault(loop, asyncio.Semaphore(self._at_once))
        try:
            await asyncio.wait_for(slots.acquire(), self._wait_seconds)
        except TimeoutError:
            raise _busy() from None
        try:
            yield
        finally:
            slots.release()


class Argon2Passwords:
    """Argon2id at the given cost; a hash carries its own parameters and salt."""

    def __init__(
        self, time_cost: int, memory_kib: int, at_once: int = 1, wait_seconds: float = 2.0
    ) -> None:
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib)
        self._slots = threading.BoundedSemaphore(at_once)
        self._wait_seconds = wait_seconds
        self._threads = ThreadPoolExecutor(
            at_once, thread_name_prefix="argon2", initializer=_lower_priority
        )

    def _bounded(self, compute: Callable[[], T]) -> T:
        if not self._slots.acquire(timeout=self._wait_seconds):
            raise _busy()
        try:
            return self._threads.submit(compute).result()
        finally:
            self._slots.release()

    def hash(self, password: str) -> str:
        return self._bounded(lambda: self._hasher.hash(password))

    def verify(self, password_hash: str, password: str) -> bool:
        """Whether ``password`` is the one hashed; False too for a hash that is not Argon2's."""

        def check() -> bool:
            try:
                return self._hasher.verify(password_hash, password)
            except (VerificationError, InvalidHashError):
                return False

        return self._bounded(check)
