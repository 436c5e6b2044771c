"""How long-running block work reports progress without knowing who listens (a rich bar, a test)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def __call__(self, phase: str, done: int, total: int) -> None: ...


def silent(phase: str, done: int, total: int) -> None:
    """A :class:`Progress` that reports nothing."""
