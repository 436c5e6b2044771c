"""Hosts as Linux network namespaces, joined by one bridge on a private subnet.

The bridge lives in a namespace of its own (the "switch"); each host gets one veth pair, its
``eth0`` in the host's namespace and the other end enslaved to the bridge. Nothing is added to
the machine's own namespace, so the subnet (``SUBNET``) exists only between our hosts.

Every name starts with a prefix of this clone (:func:`cluster_prefix`): a run cleans what an
earlier crashed run of the same clone left (namespaces, their processes, the temporary
folder) and never touches another clone's cluster.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SUBNET = "10.217.0"
"""The /24 our hosts share; private (RFC 1918), used only inside the namespaces."""
NETNS_DIR = Path("/run/netns")


def cluster_prefix() -> str:
    """Short (interface names are 15 bytes at most) and the same for every run of one clone."""
    root = str(Path(__file__).resolve().parents[2])
    return "gc" + hashlib.sha256(root.encode()).hexdigest()[:4]


def run(*argv: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=check)


@dataclass
class Network:
    """The switch and its hosts: ``add`` one, ``cut``/``mend`` its link, ``destroy`` all."""

    prefix: str = field(default_factory=cluster_prefix)
    hosts: dict[str, int] = field(default_factory=dict)
    """host name → last byte of its address"""

    @property
    def switch(self) -> str:
        return f"{self.prefix}-switch"

    def namespace(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def address(self, host: str) -> str:
        return f"{SUBNET}.{self.hosts[host]}"

    def create(self) -> None:
        destroy_leftovers(self.prefix)
        run("ip", "netns", "add", self.switch)
        run("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.switch, "link", "set", "br0", "up")

    def add(self, host: str, last_byte: int) -> None:
        namespace = self.namespace(host)
        run("ip", "netns", "add", namespace)
        port = f"p-{host}"[:15]
        run("ip", "-n", self.switch, "link", "add", "name", port, "type", "veth",
            "peer", "name", "eth0", "netns", namespace)  # fmt: skip
        run("ip", "-n", self.switch, "link", "set", port, "master", "br0", "up")
        run("ip", "-n", namespace, "addr", "add", f"{SUBNET}.{last_byte}/24", "dev", "eth0")
        run("ip", "-n", namespace, "link", "set", "eth0", "up")
        run("ip", "-n", namespace, "link", "set", "lo", "up")
        self.hosts[host] = last_byte

    def cut(self, host: str) -> None:
        """The host's link down: its packets go nowhere, its connections hang (no reset)."""
        run("ip", "-n", self.namespace(host), "link", "set", "eth0", "down")

    def mend(self, host: str) -> None:
        run("ip", "-n", self.namespace(host), "link", "set", "eth0", "up")

    def command(self, host: str, argv: Sequence[str]) -> list[str]:
        """``argv`` run on ``host`` (its network namespace)."""
        return ["ip", "netns", "exec", self.namespace(host), *argv]

    def pids(self, host: str) -> list[int]:
        """Every process in the host's namespace."""
        listed = run("ip", "netns", "pids", self.namespace(host), check=False).stdout
        return [int(pid) for pid in listed.split()]

    def kill_host(self, host: str, sig: signal.Signals = signal.SIGKILL) -> int:
        """``sig`` to every process of the host at once; how many there were."""
        return _signal_all(self.pids(host), sig)

    def destroy(self) -> None:
        destroy_leftovers(self.prefix)


def _signal_all(pids: list[int], sig: signal.Signals) -> int:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    return len(pids)


def destroy_leftovers(prefix: str) -> None:
    """Every namespace named with ``prefix``: its processes stopped (TERM, then KILL after
    5 s), the namespace deleted; and the clone's temporary folder removed."""
    namespaces = [path.name for path in NETNS_DIR.glob(f"{prefix}-*")] if NETNS_DIR.exists() else []
    pids = [
        int(pid)
        for name in namespaces
        for pid in run("ip", "netns", "pids", name, check=False).stdout.split()
    ]
    if _signal_all(pids, signal.SIGTERM):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.1)
        _signal_all([pid for pid in pids if _alive(pid)], signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.05)
    for name in namespaces:
        run("ip", "netns", "del", name, check=False)
    shutil.rmtree(scratch_dir(prefix), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def scratch_dir(prefix: str) -> Path:
    """The cluster's files (databases, keys, logs): one folder, removed at teardown."""
    return Path("/tmp") / f"grattage-cluster-{prefix}"


def cpu_seconds(pids: Sequence[int]) -> dict[int, float]:
    """User + system CPU time of each live process (``/proc/<pid>/stat``, fields 14 and 15)."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds
