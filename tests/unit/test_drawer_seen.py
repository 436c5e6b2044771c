"""Whether a drawer draws, as a process sees it: the lease's expiry read at most once a
second, compared with the beacon's time at every question."""

from __future__ import annotations

import time

from grattage.service.drawer_seen import READ_EVERY_SECONDS, DrawerSeen


def test_the_lease_is_read_at_most_once_a_second_however_many_sales_ask() -> None:
    reads: list[int] = []

    def read() -> int:
        reads.append(1)
        return 10_000

    seen = DrawerSeen()
    assert all(seen.running(5_000, read) for _ in range(1000))
    assert len(reads) == 1
    seen.read_at = time.monotonic() - READ_EVERY_SECONDS  # a second later
    assert seen.running(5_000, read)
    assert len(reads) == 2


def test_a_lease_read_alive_is_seen_gone_exactly_when_it_expires() -> None:
    seen = DrawerSeen()
    assert seen.running(10_000, lambda: 10_000)
    assert not seen.running(10_001, lambda: 99_999)  # not read again: the expiry read decides


def test_a_lease_never_taken_means_no_drawer() -> None:
    assert not DrawerSeen().running(1, lambda: 0)
