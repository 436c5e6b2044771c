"""The edge as clients meet it (deploy/nginx/grattage.conf in the cluster): the back office
refused outside the operators' network, the client's own address reaching the app whatever
forwarding headers it sends, nginx's own refusals in the API's JSON, plain HTTP sent to HTTPS
with its method kept — and an app host that vanishes without a reset (its link cut, not
SIGKILL: nothing refuses, every packet to it is lost) leaving the pool with no purchase lost.
"""

from __future__ import annotations

import json
import time

import pytest

from reliability.harness import record

from .balancer import OPERATOR_DESK
from .checks import books_are_clean, dead_host_attempt_bound, p99
from .cluster import APP_PORT, Cluster

pytestmark = pytest.mark.cluster

JSON = {"Content-Type": "application/json"}


def edge(cluster: Cluster, path: str, scheme: str = "https") -> str:
    return f"{scheme}://{cluster.net.address('lb')}{path}"


def test_the_back_office_is_refused_at_the_edge_outside_the_operators_network(
    cluster: Cluster,
) -> None:
    for path in ("/admin/", "/admin/admin.js", "/api/admin/sessions", "/api/admin/emissions"):
        status, body = cluster.request("witness", "GET", edge(cluster, path))
        assert status == 403, (path, status, body[:200])
        assert json.loads(body)["error"] == "forbidden", body[:200]
    status, body = cluster.request(OPERATOR_DESK, "GET", edge(cluster, "/admin/"))
    assert status == 200 and b"<html" in body.lower()
    # The player's site stays public.
    status, _ = cluster.request("witness", "GET", edge(cluster, "/api/games"))
    assert status == 200


def test_the_app_counts_the_client_s_own_address_never_a_forwarding_header_it_sent(
    cluster: Cluster,
) -> None:
    """The log-in limits and the audit log count per address: a client naming another address
    in its own headers must still be counted as itself."""
    email = f"edge-{time.monotonic_ns()}@example.org"
    spoofed = {**JSON, "X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.8",
               "Forwarded": "for=203.0.113.9", "X-Forwarded-Proto": "http"}  # fmt: skip
    body = json.dumps({"email": email, "password": "not the password"}).encode()
    status, answer = cluster.request(
        OPERATOR_DESK, "POST", edge(cluster, "/api/admin/sessions"), body, spoofed
    )
    assert status == 401, answer[:200]
    recorded = cluster.sql(
        "SELECT details FROM audit_log WHERE action = 'operator.log_in_failed'"
        f" AND details LIKE '%{email}%'"
    )
    assert recorded, "the failed log-in was not audited"
    assert json.loads(recorded)["client"] == cluster.net.address(OPERATOR_DESK)


def test_the_edge_s_own_refusals_are_the_api_s_json(cluster: Cluster) -> None:
    status, body = cluster.request(
        "load", "POST", edge(cluster, "/api/games/cash/tickets"), b"x" * 100_000, JSON
    )
    assert status == 413, body[:200]
    assert json.loads(body)["error"] == "too_large"


def test_plain_http_is_sent_to_https_with_its_method_kept(cluster: Cluster) -> None:
    status, _ = cluster.request("load", "POST", edge(cluster, "/api/games/cash/tickets", "http"))
    assert status == 308


def test_the_redirect_to_https_is_to_the_site_never_to_the_client_s_host(cluster: Cluster) -> None:
    """The outsider's open redirect: ``Host: evil.example`` was sent to https://evil.example."""
    status, _ = cluster.request(
        "load", "GET", edge(cluster, "/api/games?a=1", "http"), headers={"Host": "evil.example"}
    )
    assert status == 308
    location = cluster.last_headers["location"]
    assert "evil.example" not in location and location.endswith("/api/games?a=1"), location
    assert "server" not in cluster.last_headers or "nginx/" not in cluster.last_headers["server"]


CUT_SECONDS = 8


def test_an_app_host_whose_link_is_cut_under_load_leaves_the_pool_and_loses_no_purchase(
    cluster: Cluster,
) -> None:
    """Nothing refuses a connection to a host whose link is down: new connections time out
    (``proxy_connect_timeout`` 2 s, then the request goes to another host), and a request
    already sent to it waits for its answer — until the link is back, or nginx's 30 s read
    timeout (504), after which the player retries with the same key. Meanwhile the other
    hosts keep selling (once the cut host's open batch is ended by PostgreSQL), and nginx
    leaves the host out after ``MAX_FAILS`` timeouts."""
    load = cluster.load(seconds=4 + CUT_SECONDS + 6, retry_seconds=60)
    time.sleep(4)
    cut_at = time.time()
    cluster.net.cut("app3")
    time.sleep(CUT_SECONDS)
    cluster.net.mend("app3")
    mended_at = time.time()
    figures = cluster.figures(load)
    assert figures["unresolved"] == [] and figures["other_answers"] == [], figures["other_answers"][
        :5
    ]
    # A lane batch of app3 caught mid-way holds its game's block row until PostgreSQL finds
    # the connection dead (keepalives: about the 5 s TCP limit), so the game stalls that long
    # and the draws of the sales just before can end up later than the monitor's 10 rounds:
    # it must say so, and nothing else.
    books = books_are_clean(cluster, figures, late_draws_allowed=True)
    sold_during = [e for e in figures["acknowledged"] if cut_at + 3 <= e["at"] <= mended_at]
    assert sold_during, "the other hosts sold nothing while app3 was cut off"
    address = f"{cluster.net.address('app3')}:{APP_PORT}"
    during = [row for row in cluster.access_log() if cut_at <= row["at"] <= mended_at]
    tried_cut = sum(address in row["upstreams"] for row in during)
    # The requests that hang on it are answered only after the link is back (or at 30 s), so
    # those logged in the window are the attempts that timed out (2 s) and went elsewhere:
    # the clients it took before the first timeout told nginx, then a few each fail_timeout.
    bound = dead_host_attempt_bound(CUT_SECONDS, len(cluster.apps), cluster.players)
    assert tried_cut <= bound, f"{tried_cut} attempts on the cut host in {CUT_SECONDS} s"
    record(
        f"cluster: app host's link cut for {CUT_SECONDS} s under load",
        purchases_acknowledged=len(figures["acknowledged"]),
        acknowledged_while_cut=len(sold_during),
        answers_lost_then_replayed=sum(e["retried"] for e in figures["acknowledged"]),
        client_retries=figures["retries"],
        refused_503=len(figures["refused_503"]),
        balancer_attempts_on_cut_host_answered_during_cut=tried_cut,
        slowest_purchase_s=round(max(e["seconds"] for e in figures["acknowledged"]), 2),
        p99_ms=p99([e["seconds"] for e in figures["acknowledged"]]),
        **books,
    )
