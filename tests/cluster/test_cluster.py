"""Faults in a real cluster (issue 17): three app hosts behind nginx, one PostgreSQL host,
a witness, an ops host, a load generator — each in its own network namespace
(tests/cluster/cluster.py), started from deploy/'s files.

Each scenario runs under load from the load host (24 players buying Cash ``auto`` tickets
through the balancer, every purchase with its own Idempotency-Key, retried with the same key
when its answer is lost) and ends with the books checked from the database, ``grattage
sweep``, ``grattage reconcile`` and ``grattage monitor check`` (the units' commands) clean.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest

from reliability.harness import record

from .checks import books_are_clean, dead_host_attempt_bound, p99, served_by
from .cluster import APP_PORT, Cluster

pytestmark = pytest.mark.cluster


def test_app_hosts_cannot_write_the_key_store(cluster: Cluster) -> None:
    server = cluster.processes["app1"].pid
    key_dir = cluster.env("app1")["GRATTAGE_KEY_DIR"]
    tried = subprocess.run(
        ["nsenter", "-t", str(server), "-m", "sh", "-c", f"touch {key_dir}/written-by-app1"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert tried.returncode != 0 and "Read-only file system" in tried.stderr, tried.stderr
    listed = subprocess.run(["nsenter", "-t", str(server), "-m", "ls", key_dir],
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert "pseudonym.key" in listed.stdout  # it reads what the ops host wrote


def test_an_app_host_killed_under_load_loses_no_purchase_and_leaves_the_pool(
    cluster: Cluster,
) -> None:
    load = cluster.load(seconds=12)
    time.sleep(4)
    killed_at = time.time()
    processes = cluster.kill_app("app2")
    time.sleep(6)
    from_dead = served_by(cluster, "app2", killed_at + 0.5)
    figures = cluster.figures(load)
    cluster.start_app("app2")
    assert figures["unresolved"] == [] and figures["other_answers"] == [], figures["other_answers"][
        :5
    ]
    books = books_are_clean(cluster, figures)
    after_kill = [row for row in cluster.access_log() if killed_at <= row["at"] <= killed_at + 6]
    tried_dead = sum(
        f"{cluster.net.address('app2')}:{APP_PORT}" in row["upstreams"] for row in after_kill
    )
    assert from_dead == [], f"{len(from_dead)} answers from the killed host"
    assert tried_dead <= dead_host_attempt_bound(6, len(cluster.apps), cluster.players), (
        f"the balancer tried the killed host {tried_dead} times in 6 s: it did not leave the pool"
    )
    record(
        "cluster: app host SIGKILLed under load",
        processes_killed=processes,
        purchases_acknowledged=len(figures["acknowledged"]),
        answers_lost_then_replayed=sum(e["retried"] for e in figures["acknowledged"]),
        client_retries=figures["retries"],
        transport_errors=figures["transport_errors"],
        refused_503=len(figures["refused_503"]),
        balancer_attempts_on_dead_host_in_6s=tried_dead,
        answers_from_dead_host=len(from_dead),
        p99_ms=p99([e["seconds"] for e in figures["acknowledged"]]),
        **books,
    )


def test_the_database_host_cut_off_for_5_s_means_503s_only_then_recovery(
    cluster: Cluster,
) -> None:
    load = cluster.load(seconds=16)
    time.sleep(4)
    cut_at = time.time()
    cluster.net.cut("db")
    time.sleep(5)
    cluster.net.mend("db")
    mended_at = time.time()
    figures = cluster.figures(load)
    statuses = sorted({status for _, status, _ in figures["events"]}, key=str)
    assert figures["other_answers"] == [], figures["other_answers"][:5]
    assert figures["unresolved"] == [], f"{len(figures['unresolved'])} purchases never answered"
    assert set(statuses) <= {200, 201, 503, 502, 504, None}, statuses
    after = [e["at"] for e in figures["acknowledged"] if e["at"] > mended_at]
    assert after, "no purchase after the link came back"
    books = books_are_clean(cluster, figures)
    slowest_during = max(
        (e["seconds"] for e in figures["acknowledged"] if cut_at <= e["at"] <= mended_at + 30),
        default=0,
    )
    record(
        "cluster: database host link cut for 5 s",
        purchases_acknowledged=len(figures["acknowledged"]),
        refused_503=len(figures["refused_503"]),
        statuses=statuses,
        lost_answers_retried=figures["retries"],
        first_sale_after_mend_s=round(min(after) - mended_at, 2),
        slowest_purchase_around_cut_s=round(slowest_during, 2),
        **books,
    )


def test_a_rolling_restart_of_every_app_host_under_load_fails_no_purchase(
    cluster: Cluster,
) -> None:
    load = cluster.load(seconds=60 * len(cluster.apps))  # ended below, once all restarted
    time.sleep(3)
    timings = []
    for host in cluster.apps:
        started = time.monotonic()
        cluster.drain(host)
        time.sleep(1.0)  # the old nginx workers finish what they sent it
        stopped_in = cluster.stop_app(host)
        cluster.start_app(host)
        cluster.undrain(host)
        timings.append((host, round(stopped_in, 2), round(time.monotonic() - started, 2)))
        time.sleep(2)
    cluster.end_load(load)
    figures = cluster.figures(load)
    failed = figures["other_answers"] + figures["unresolved"] + figures["refused_503"]
    assert failed == [], f"{len(failed)} failed purchases: {failed[:5]}"
    books = books_are_clean(cluster, figures)
    record(
        "cluster: rolling restart of every app host under load",
        hosts_restarted=len(timings),
        restart_seconds_each=[t[2] for t in timings],
        stop_seconds_each=[t[1] for t in timings],
        purchases_acknowledged=len(figures["acknowledged"]),
        failed_purchases=len(failed),
        lost_answers_retried=figures["retries"],
        transport_errors=figures["transport_errors"],
        p99_ms=p99([e["seconds"] for e in figures["acknowledged"]]),
        **books,
    )


LONG_CUT_SECONDS = 20
ATTEMPT_BOUND_SECONDS = 2 * (5 + 3) + 4
"""Each purchase attempt, the database cut off or gone: at most two waits on a dead connection
in its way (its session's read, then its lane batch), each the TCP limit (5 s,
``POSTGRES_TCP_TIMEOUT_MS``) plus one connect attempt (3 s, ``POSTGRES_CONNECT_TIMEOUT_SECONDS``),
and 4 s for the rest — below nginx's 30 s ``proxy_read_timeout``, far below the kernel's
retransmissions (about 15 minutes), which bounded it before these limits."""


def attempts(figures: dict[str, Any]) -> tuple[set[Any], float]:
    """The statuses every purchase attempt got, and the slowest attempt's seconds."""
    return {e[1] for e in figures["events"]}, max((e[2] for e in figures["events"]), default=0)


def test_the_database_host_cut_off_for_20_s_means_prompt_503s_only_then_recovery(
    cluster: Cluster,
) -> None:
    load = cluster.load(seconds=4 + LONG_CUT_SECONDS + 6)
    time.sleep(4)
    cut_at = time.time()
    cluster.net.cut("db")
    time.sleep(LONG_CUT_SECONDS)
    cluster.net.mend("db")
    mended_at = time.time()
    figures = cluster.figures(load)
    statuses, slowest = attempts(figures)
    assert figures["other_answers"] == [], figures["other_answers"][:5]
    assert figures["unresolved"] == [], f"{len(figures['unresolved'])} purchases never answered"
    assert statuses <= {200, 201, 503}, statuses  # 200: a retry's kept ticket
    assert slowest <= ATTEMPT_BOUND_SECONDS, f"an attempt took {slowest:.1f} s"
    after = [e["at"] for e in figures["acknowledged"] if e["at"] > mended_at]
    assert after, "no purchase after the link came back"
    books = books_are_clean(cluster, figures, late_draws_allowed=True)
    during = [e for e in figures["events"] if cut_at + 1 <= e[0] <= mended_at]
    record(
        f"cluster: database host link cut for {LONG_CUT_SECONDS} s",
        purchases_acknowledged=len(figures["acknowledged"]),
        refused_503=len(figures["refused_503"]),
        statuses=sorted(statuses, key=str),
        attempts_answered_during_cut=len(during),
        slowest_attempt_s=round(slowest, 2),
        attempt_bound_s=ATTEMPT_BOUND_SECONDS,
        first_sale_after_mend_s=round(min(after) - mended_at, 2),
        **books,
    )


def test_the_database_host_s_postgres_sigkilled_then_restarted_means_503s_only_then_recovery(
    cluster: Cluster,
) -> None:
    load = cluster.load(seconds=14)
    time.sleep(4)
    killed_at = time.time()
    killed = cluster.net.kill_host("db")  # the postmaster and every backend at once
    cluster.processes["postgres"].wait(timeout=30)
    time.sleep(3)
    cluster.start_postgres()  # crash recovery from the WAL, then ready
    ready_at = time.time()
    figures = cluster.figures(load)
    statuses, slowest = attempts(figures)
    assert figures["other_answers"] == [], figures["other_answers"][:5]
    assert figures["unresolved"] == [], f"{len(figures['unresolved'])} purchases never answered"
    assert statuses <= {200, 201, 503}, statuses  # 200: a retry's kept ticket
    assert slowest <= ATTEMPT_BOUND_SECONDS, f"an attempt took {slowest:.1f} s"
    after = [e["at"] for e in figures["acknowledged"] if e["at"] > ready_at]
    assert after, "no purchase after PostgreSQL came back"
    books = books_are_clean(cluster, figures, late_draws_allowed=True)
    record(
        "cluster: database host's postgres SIGKILLed, restarted 3 s later",
        processes_killed=killed,
        purchases_acknowledged=len(figures["acknowledged"]),
        refused_503=len(figures["refused_503"]),
        statuses=sorted(statuses, key=str),
        slowest_attempt_s=round(slowest, 2),
        kill_to_ready_s=round(ready_at - killed_at, 2),
        first_sale_after_ready_s=round(min(after) - ready_at, 2),
        **books,
    )
