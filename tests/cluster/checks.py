"""What every cluster scenario checks afterwards: the books from the database, the units'
own checks (sweep, reconcile, the monitor), and the balancer's log."""

from __future__ import annotations

import re
import time
from typing import Any

from . import units
from .cluster import APP_PORT, Cluster


def p99(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return round(ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000, 1) if ordered else 0.0


def books_are_clean(
    cluster: Cluster, figures: dict[str, Any], late_draws_allowed: bool = False
) -> dict[str, int]:
    """Every acknowledged purchase stored, once; none refused-but-recorded; every sale
    drawn, no unit twice; sweep, reconcile and the monitor clean — but for late draws when
    ``late_draws_allowed`` (the database away longer than the draw's 10 rounds: the sales
    just before it are drawn late, and the monitor must say so, and say nothing else)."""
    deadline = time.monotonic() + 60
    while cluster.sql("SELECT count(*) FROM draw_queue") != "0":
        assert time.monotonic() < deadline, (
            "sales still wait for their draw:\n" + cluster.log("drawer")[-2000:]
        )
        time.sleep(0.5)
    stored = {int(i) for i in cluster.sql("SELECT id FROM tickets").split()}
    acknowledged = [entry["ticket"] for entry in figures["acknowledged"]]
    assert set(acknowledged) <= stored, "an acknowledged purchase is lost"
    assert len(set(acknowledged)) == len(acknowledged), "two purchases answered one ticket"
    twice = cluster.sql(
        "SELECT count(*) FROM (SELECT block_id, position FROM tickets WHERE position IS NOT NULL"
        " GROUP BY block_id, position HAVING count(*) > 1) AS twice"
    )
    assert twice == "0", f"{twice} units sold twice"
    refused = figures["refused_503"]
    if refused:
        keys = ",".join(f"'{key}'" for key in refused)
        recorded = cluster.sql(f"SELECT count(*) FROM idempotency_keys WHERE key IN ({keys})")
        assert recorded == "0", f"{recorded} purchases answered 503 were recorded"
    late = 0
    for unit in (
        "grattage-sweep.service",
        "grattage-reconcile.service",
        "grattage-monitor.service",
    ):
        ran = cluster.run_unit(unit)
        if late_draws_allowed and unit == "grattage-monitor.service" and ran.returncode == 1:
            late = late_draws_only(ran.stdout + ran.stderr)
            continue
        assert ran.returncode == 0, f"{unit}: {ran.stdout[-2000:]}{ran.stderr[-2000:]}"
    assert figures["replay_mismatches"] == [], "a replayed key answered another ticket"
    return {"tickets_stored": len(stored), "replayed_same_ticket": figures["replayed"],
            **({"late_draws_reported_by_monitor": late} if late_draws_allowed else {})}  # fmt: skip


def late_draws_only(said: str) -> int:
    """How many late draws the monitor's output reports; it must report nothing else."""
    total = re.search(r"(\d+) timing violations of the draw", said)
    assert total, said[-2000:]
    lines = [line.strip() for line in said.splitlines() if "violation" in line]
    other = [line for line in lines if not line.startswith("timing violation at entry")
             and total.group(0) not in line]  # fmt: skip
    assert not other and all("has no resolution" in line for line in lines if
                             line.startswith("timing violation")), said[-2000:]  # fmt: skip
    return int(total.group(1))


def served_by(cluster: Cluster, host: str, since: float) -> list[dict[str, Any]]:
    """The balancer's answers that came from ``host`` after ``since`` (epoch seconds)."""
    address = f"{cluster.net.address(host)}:{APP_PORT}"
    return [
        row
        for row in cluster.access_log()
        if row["at"] >= since and row["upstreams"] and row["upstreams"][-1] == address
    ]


def dead_host_attempt_bound(seconds: float, app_hosts: int, players: int) -> int:
    """The most attempts the balancer may make on a dead host in ``seconds``: the requests in
    flight on it when it died (its share of the players, one each), ``MAX_FAILS`` new ones
    before nginx leaves it out, then ``MAX_FAILS`` more each ``FAIL_TIMEOUT_SECONDS`` when it is
    tried again (the failures are shared by nginx's workers through the upstream's zone) —
    against its share of every request (hundreds) had it stayed in the pool."""
    windows = int(seconds // units.FAIL_TIMEOUT_SECONDS) + 1
    return players // app_hosts + units.MAX_FAILS * windows
