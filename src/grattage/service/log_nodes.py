"""The transparency log's node store as one transaction sees it: the nodes it has read,
remembered, and the nodes a walk of the tree will need, read in one statement."""

from __future__ import annotations

from collections.abc import Callable

from grattage.blocks.tlog import EMPTY_ROOT, NodeSource
from grattage.service.log_port import TransparencyLogRepository


class LogNodes:
    """The node store seen through one transaction, remembering what it has read."""

    def __init__(self, log: TransparencyLogRepository) -> None:
        self.log = log
        self.known: dict[tuple[int, int], bytes] = {}

    def prefetch(self, wanted: list[tuple[int, int]]) -> None:
        missing = [key for key in wanted if key not in self.known]
        if missing:
            self.known.update(self.log.nodes(missing))

    def __call__(self, level: int, index: int) -> bytes:
        key = (level, index)
        if key not in self.known:
            self.known.update(self.log.nodes([key]))
        return self.known[key]

    def prefetch_for(self, walk: Callable[[NodeSource], object]) -> None:
        """Read at once every node ``walk`` asks for: it is run first on a source that only
        notes the nodes asked for. The nodes a proof or a subtree hash asks for depend on the
        sizes alone, never on the hashes: asked one by one, a consistency proof's nodes were a
        statement each, a tenth of the drawer's CPU on PostgreSQL (bench/play_cpu.py)."""
        wanted: list[tuple[int, int]] = []

        def noted(level: int, index: int) -> bytes:
            wanted.append((level, index))
            return EMPTY_ROOT

        walk(noted)
        self.prefetch(wanted)


def perfect_ranges(start: int, end: int) -> list[tuple[int, int]]:
    """The perfect subtrees ``(level, index)`` that MTH(D[start:end]) is made of."""
    found: list[tuple[int, int]] = []
    stack = [(start, end)]
    while stack:
        low, high = stack.pop()
        count = high - low
        if count <= 0:
            continue
        if count & (count - 1) == 0 and low % count == 0:
            level = count.bit_length() - 1
            found.append((level, low >> level))
            continue
        k = 1 << ((count - 1).bit_length() - 1)
        stack += [(low, low + k), (low + k, high)]
    return found


def path_nodes(index: int, size: int) -> list[tuple[int, int]]:
    wanted: list[tuple[int, int]] = []
    start, end = 0, size
    while end - start > 1:
        k = 1 << ((end - start - 1).bit_length() - 1)
        if index < start + k:
            wanted += perfect_ranges(start + k, end)
            end = start + k
        else:
            wanted += perfect_ranges(start, start + k)
            start += k
    return wanted
