"""How long-running block work reports progress without knowing who listens (a rich bar, a test).

The one progress type of the code base: the blocks report through it and the service passes it
on (``service.emissions``). Its parameters are positional-only, so any function taking
``(str, int, int)`` is one, whatever it names them.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def __call__(self, phase: str, done: int, total: int, /) -> None:
        """``done`` of ``total`` units of ``phase`` (``"shuffling"``, ``"committing"``…)."""


def silent(phase: str, done: int, total: int) -> None:
    """A :class:`Progress` that reports nothing."""
