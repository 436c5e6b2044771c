"""Terminal output helpers shared by the commands: rich progress bars and tables."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from grattage.blocks.progress import Progress as ProgressCallback

stderr_console = Console(stderr=True)


@contextmanager
def progress_bars(label: str) -> Iterator[ProgressCallback]:
    """A progress callback drawing one bar per phase on stderr (hidden when not a terminal)."""
    bars = Progress(
        TextColumn(f"{label} [bold]{{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr_console,
        transient=False,
        disable=not stderr_console.is_terminal,
    )
    tasks: dict[str, TaskID] = {}

    def report(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bars.add_task(phase, total=total)
        bars.update(tasks[phase], completed=done, total=total)

    with bars:
        yield report
