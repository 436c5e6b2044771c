"""Cluster benchmark (issue 17): what bounds the cluster's purchases/s, measured — the cluster
of tests/cluster/ (network namespaces; root, nginx: ``make cluster-bench``), 3 app hosts
behind nginx on one PostgreSQL host.

Two clusters, one after the other:

1. **drawn** Cash blocks (the witness's rounds every 0.5 s; one block open at a time,
   docs/draw.md), with 1, 2 and 3 app hosts — the others drained at the balancer (marked
   ``down``, nginx reloaded), as an operator takes hosts out;
2. **undrawn** Cash blocks, 3 app hosts, with 4, 2 and 1 blocks open at once (the others
   suspended), then 1 block with 1 app host, and 1 block with twice the clients.

Each run: ``CLIENTS`` players buying Cash ``auto`` tickets from the load host through the
balancer over TLS for ``SECONDS``, after 2 s of warm-up. Per run it prints purchases/s, p50
and p99, and (tests/cluster/observe.py) the CPU seconds of every host — the app hosts, the
database host's postgres processes, nginx, the ops host (the drawer), the witness, and the load
generator itself, which shares the 2 cores —, the machine's busy cores (other users
included), the database's transactions/s and WAL/s, and from 10 ms samples of
``pgrowlocks``/``pg_stat_activity``: the fraction of the time each open block's row was held,
the row's hold time per purchase, and what the busy backends were doing. Printed, not
asserted. Run with ``python -m bench.cluster``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

SECONDS = float(os.environ.get("GRATTAGE_CLUSTER_BENCH_SECONDS", "10"))
CLIENTS = 24
RESULTS = Path("test-artifacts/cluster-bench.jsonl")


def measure(cluster: Any, label: str, clients: int = CLIENTS) -> dict[str, Any]:
    from cluster.observe import observed, summary

    cluster.figures(cluster.load(seconds=2, clients=clients, replay_sample=0))  # warm-up
    with observed(cluster) as costs:
        run = cluster.figures(cluster.load(seconds=SECONDS, clients=clients, replay_sample=0))
    done = run["acknowledged"]
    latencies = sorted(entry["seconds"] for entry in done) or [0.0]
    figures = {
        "run": label,
        "clients": clients,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[max(0, int(len(latencies) * 0.99) - 1)] * 1000,
        "failed": len(run["refused_503"]) + len(run["other_answers"]),
        **summary(costs, len(done), run["cpu_seconds"]),
        "purchases_per_s": len(done) / (run["ended_at"] - run["started_at"]),
        "load_average": os.getloadavg()[0],
    }
    print_run(figures)
    RESULTS.parent.mkdir(exist_ok=True)
    with RESULTS.open("a") as out:
        out.write(json.dumps(figures) + "\n")
    return figures


def print_run(f: dict[str, Any]) -> None:
    cpu = f["cpu_s"]
    busy = ", ".join(f"{k} {v:.2f}" for k, v in list(f["busy_backends_mean"].items())[:5])
    held = " ".join(f"{float(v):.2f}" for v in f["row_held_fraction"].values()) or "-"
    print(
        f"  {f['run']:<40} {f['purchases_per_s']:6.1f}/s  p50 {f['p50_ms']:5.0f} ms  "
        f"p99 {f['p99_ms']:5.0f} ms  failed {f['failed']}  (load average {f['load_average']:.1f})\n"
        f"      CPU s: app {cpu['app']:.1f}  db {cpu['db']:.1f}  nginx {cpu['lb']:.1f}  "
        f"ops {cpu['ops']:.1f}  witness {cpu['witness']:.1f}  loadgen {cpu['load']:.1f}  "
        f"machine busy {f['machine_busy_cores']:.2f} of 2 cores\n"
        f"      per purchase: app {f['app_ms_per_purchase']:.2f} ms CPU, db "
        f"{f['db_ms_per_purchase']:.2f} ms CPU, {f['wal_bytes_per_purchase']:.0f} B WAL, "
        f"block rows held {f['row_held_ms_per_purchase']:.2f} ms "
        f"(the game's, any of its rows: {f['game_held_ms_per_purchase']:.2f} ms)\n"
        f"      db: {f['transactions_per_s']:.0f} transactions/s, {f['wal_kib_per_s']:.0f} KiB "
        f"WAL/s; block rows held (fraction of time, per open block): {held}; lock waiters "
        f"{f['lock_waiters_mean']:.2f}; busy backends: {busy}"
    )


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # as pytest does
    from cluster.cluster import Cluster

    print(f"Cluster: Cash auto purchases through nginx, {CLIENTS} clients, {SECONDS:.0f} s a run")
    with Cluster(app_hosts=3, players=2 * CLIENTS) as cluster:
        for active in (1, 2, 3):
            cluster.drained = set(cluster.apps[active:])
            cluster.reload_balancer()
            time.sleep(2)
            measure(cluster, f"drawn, {active} app host{'s' if active > 1 else ''}, 1 block")
        reconciled = cluster.run_unit("grattage-reconcile.service")
        print(f"  grattage reconcile: exit {reconciled.returncode}")
    with Cluster(app_hosts=3, players=2 * CLIENTS, drawn=False, open_blocks=4) as cluster:
        for open_blocks in (4, 2, 1):
            for block in range(open_blocks + 1, 5):
                suspended = cluster.on("ops", cluster_grattage(), "block", "suspend", str(block),
                                       env=cluster.env("ops"))  # fmt: skip
                assert suspended.returncode in (0, 3), suspended.stderr  # 3: already suspended
            time.sleep(1.5)  # a process still trying a suspended block looks again
            measure(cluster, f"undrawn, 3 app hosts, {open_blocks} block{'s' * (open_blocks > 1)}")
        measure(cluster, f"undrawn, 3 app hosts, 1 block, {2 * CLIENTS} clients", 2 * CLIENTS)
        cluster.drained = set(cluster.apps[1:])
        cluster.reload_balancer()
        time.sleep(2)
        measure(cluster, "undrawn, 1 app host, 1 block")
        reconciled = cluster.run_unit("grattage-reconcile.service")
        print(f"  grattage reconcile: exit {reconciled.returncode}")


def cluster_grattage() -> str:
    from cluster.units import HERE_GRATTAGE

    return HERE_GRATTAGE


if __name__ == "__main__":
    main()
