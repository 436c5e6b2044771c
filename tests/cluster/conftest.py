"""The cluster suite (issue 17): one cluster in network namespaces for the whole package,
torn down whatever happens. Needs root, ``ip netns``, nginx and PostgreSQL 15's binaries;
without them the tests skip — a failure when ``GRATTAGE_REQUIRE_CLUSTER=1`` (.ci/run)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from .cluster import PG_BIN, Cluster


def missing() -> str | None:
    if os.geteuid() != 0:
        return "the cluster needs root (network namespaces, mounts)"
    for tool in ("ip", "nginx", "openssl", "runuser"):
        if shutil.which(tool) is None:
            return f"the cluster needs {tool} (make cluster installs nginx)"
    if not (PG_BIN / "postgres").exists():
        return f"the cluster needs PostgreSQL 15's binaries in {PG_BIN}"
    return None


@pytest.fixture(scope="package")
def cluster() -> Iterator[Cluster]:
    reason = missing()
    if reason:
        pytest.skip(reason)
    with Cluster(app_hosts=3, players=24) as started:
        yield started
