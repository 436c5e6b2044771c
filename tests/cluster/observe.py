"""What a load run cost the cluster, host by host, and what the database did meanwhile (issue
17: find what bounds the cluster's purchases/s by measurement).

:func:`observed` wraps a run: before and after it, every host's CPU time (``/proc/<pid>/stat``
of the processes in its namespace, with the children they reaped — PostgreSQL's postmaster
reaps the backends that ended), the machine's own busy time (``/proc/stat``: what the other
users of the two cores took too), and the database's commits and WAL position; during it,
:mod:`sampler` on the ops host. Printed by bench/cluster.py, recorded by the cluster tests.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cluster import Cluster

HERE = Path(__file__).resolve().parent
HOSTS = ("db", "lb", "ops", "witness")


def host_cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of the live processes and of the children they reaped."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += sum(int(value) for value in fields[11:15])
    return total / ticks


def machine_busy_seconds() -> tuple[float, float]:
    """The machine's CPU seconds busy and in all, summed over its cores (``/proc/stat``)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    ticks = os.sysconf("SC_CLK_TCK")
    return (sum(fields[:8]) - idle) / ticks, sum(fields[:8]) / ticks


def database_counters(cluster: Cluster) -> tuple[int, int]:
    """Transactions ended (committed or rolled back) and the WAL's position in bytes."""
    row = cluster.sql(
        "SELECT xact_commit + xact_rollback, pg_current_wal_lsn() - '0/0'::pg_lsn"
        " FROM pg_stat_database WHERE datname = 'grattage'"
    )
    transactions, wal = row.split("|")
    return int(transactions), int(float(wal))


def cpu_by_host(cluster: Cluster) -> dict[str, float]:
    hosts = [*HOSTS, *cluster.apps]
    return {host: host_cpu_seconds(cluster.net.pids(host)) for host in hosts}


@contextmanager
def observed(cluster: Cluster) -> Iterator[dict[str, Any]]:
    """Figures of the run inside the block, filled in when it ends: ``seconds``, ``cpu``
    (per host; ``app`` summed over the app hosts), ``machine_busy_cores``, ``transactions``,
    ``wal_bytes`` and the sampler's ``locks``."""
    figures: dict[str, Any] = {}
    out = cluster.root / f"sample-{time.monotonic_ns()}.json"
    stop = Path(f"{out}.stop")
    url = cluster.database_url.replace("+psycopg", "")
    sampler = cluster.popen(
        "ops", [sys.executable, str(HERE / "sampler.py"), url, str(out), str(stop)]
    )
    cpu_before, busy_before = cpu_by_host(cluster), machine_busy_seconds()
    counters_before = database_counters(cluster)
    started = time.monotonic()
    try:
        yield figures
    finally:
        elapsed = time.monotonic() - started
        stop.touch()
        cpu_after, busy_after = cpu_by_host(cluster), machine_busy_seconds()
        counters_after = database_counters(cluster)
        _, err = sampler.communicate(timeout=30)
    assert sampler.returncode == 0, err.decode(errors="replace")
    cpu = {host: cpu_after[host] - cpu_before.get(host, 0.0) for host in cpu_after}
    cpu["app"] = sum(cpu.pop(host) for host in cluster.apps)
    figures.update(
        seconds=elapsed,
        cpu=cpu,
        machine_busy_cores=(busy_after[0] - busy_before[0]) / elapsed,
        machine_cores=(busy_after[1] - busy_before[1]) / elapsed,
        transactions=counters_after[0] - counters_before[0],
        wal_bytes=counters_after[1] - counters_before[1],
        locks=json.loads(out.read_text()),
    )


def summary(figures: dict[str, Any], purchases: int, load_cpu: float) -> dict[str, Any]:
    """The run's figures per purchase and per second, as the bench prints them."""
    seconds = figures["seconds"]
    locks = figures["locks"]
    held = sum(locks["row_held_fraction"].values())  # block-row seconds held per second
    per = max(purchases, 1)
    return {
        "purchases_per_s": purchases / seconds,
        "cpu_s": {
            **{k: round(v, 2) for k, v in figures["cpu"].items()},
            "load": round(load_cpu, 2),
        },
        "machine_busy_cores": round(figures["machine_busy_cores"], 2),
        "app_ms_per_purchase": 1000 * figures["cpu"]["app"] / per,
        "db_ms_per_purchase": 1000 * figures["cpu"]["db"] / per,
        "transactions_per_s": figures["transactions"] / seconds,
        "wal_kib_per_s": figures["wal_bytes"] / 1024 / seconds,
        "wal_bytes_per_purchase": figures["wal_bytes"] / per,
        "row_held_fraction": locks["row_held_fraction"],
        "row_held_ms_per_purchase": 1000 * held * seconds / per,
        # the game's rows (any of them) held: a batch locks every open block of its game
        "game_held_ms_per_purchase": 1000 * locks["any_row_held_fraction"] * seconds / per,
        "lock_waiters_mean": locks["lock_waiters_mean"],
        "busy_backends_mean": locks["busy_backends_mean"],
    }
