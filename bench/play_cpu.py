"""CPU per drawn ``auto`` play (issue 15's throughput target), in a figure a shared 2-core
machine does not blur: ``python -m bench.play_cpu``.

On 2 cores, plays/s is bounded by the CPU one play costs the server's processes; wall-clock
rates measured while other work runs on the machine are noise, the CPU the processes were
given is not. This starts what ``bench/draw_platform.py`` starts (a ``grattage witness serve``
with rounds of ``GRATTAGE_BENCH_BEACON_SECONDS``, a ``grattage serve --workers 2`` on a fresh
database with one open drawn Cash block, here of ``UNITS`` units), warms it up, then has
``GRATTAGE_BENCH_CPU_CLIENTS`` clients make exactly ``GRATTAGE_BENCH_PLAYS`` plays in all
(every fourth client waits for each result with ``GET /api/tickets/{id}?wait=1``, as in
draw_platform), waits until every sale is drawn, and reads each process's utime + stime from
``/proc/<pid>/stat`` before and after. It prints CPU per play for the workers, the drawer (the
process ``serve`` runs beside them), the master and the witness, each also net of what the
same process spends idle (measured for ``IDLE_SECONDS`` first: the witness's rounds, the
drawer's lease and polls).

With ``GRATTAGE_BENCH_PROFILE=PATH`` (e.g. ``test-artifacts/profile``: the raw samples go to
``PATH.sqlite.txt`` and ``PATH.postgresql.txt``) the server runs under ``py-spy record
--subprocesses`` (``pip install py-spy``) during a second, separate pass of the same plays, and
the samples' top entries are printed: by package (the frame running Python code when sampled),
by function (self), and by function including callees. The CPU figures come from the pass
without py-spy. SQLite, then PostgreSQL when ``GRATTAGE_BENCH_POSTGRES_URL`` (or
``GRATTAGE_TEST_DATABASE_URL``) is set, in a schema of its own dropped afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.draw_platform import _drained, _prepare, _witness
from bench.platform import (
    Connection,
    _free_port,
    _log_in,
    _postgres_schema_url,
    _wait_until_up,
    postgres_schema,
)

PLAYS = int(os.environ.get("GRATTAGE_BENCH_PLAYS", "3000"))
CLIENTS = int(os.environ.get("GRATTAGE_BENCH_CLIENTS", "32"))
REPEATS = int(os.environ.get("GRATTAGE_BENCH_REPEATS", "3"))
WORKERS = int(os.environ.get("GRATTAGE_BENCH_WORKERS", "2"))
PROFILE = os.environ.get("GRATTAGE_BENCH_PROFILE", "")
"""A file for py-spy's raw samples: the profiled pass runs only when it is set."""
UNITS = 400_000
WARM_UP_PLAYS = 200
IDLE_SECONDS = 5.0
TICKS = os.sysconf("SC_CLK_TCK")
GRATTAGE = str(Path(sys.executable).parent / "grattage")


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def _role(pid: int) -> str | None:
    """Which of serve's processes ``pid`` is, from its command line."""
    try:
        command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return None
    if b"resource_tracker" in command or b"py-spy" in command:
        return None
    if b"spawn_main" in command:
        return "workers"
    if command.rstrip().endswith(b"grattage draw"):
        return "drawer"
    if b"grattage serve" in command:
        return "master"
    return None


def _processes(root: int) -> dict[int, str]:
    """Every process of the server under ``root`` (serve itself, or py-spy above it)."""
    children, found, todo = _children(), {}, [root]
    while todo:
        pid = todo.pop()
        role = _role(pid)
        if role is not None:
            found[pid] = role
        todo += children.get(pid, [])
    return found


def _cpu_ticks(pid: int) -> int:
    fields = (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def _snapshot(processes: dict[int, str]) -> dict[int, int]:
    return {pid: _cpu_ticks(pid) for pid in processes}


def _by_role(
    processes: dict[int, str], before: dict[int, int], after: dict[int, int]
) -> Counter[str]:
    spent: Counter[str] = Counter()
    for pid, role in processes.items():
        spent[role] += after[pid] - before[pid]
    return spent


async def _plays(port: int, tokens: list[str | None], plays: int) -> dict[int, int]:
    """Exactly ``plays`` answered purchases in all; every fourth client waits for each of its
    tickets' result before buying again."""
    statuses: dict[int, int] = {}
    body = json.dumps({"mode": "auto"}).encode()
    left = [plays]

    async def client(token: str | None, waits: bool) -> None:
        connection = await Connection.open(port)
        try:
            while left[0] > 0:
                left[0] -= 1
                status, answer = await connection.request(
                    "POST", "/api/games/cash/tickets", body, token
                )
                statuses[status] = statuses.get(status, 0) + 1
                if status != 201:
                    left[0] += 1
                    await asyncio.sleep(0.05)
                    continue
                ticket = json.loads(answer)
                while waits and ticket["state"] == "covered":
                    _, answer = await connection.request(
                        "GET", f"/api/tickets/{ticket['id']}?wait=1", token=token
                    )
                    ticket = json.loads(answer)
        finally:
            connection.close()

    await asyncio.gather(*(client(token, index % 4 == 0) for index, token in enumerate(tokens)))
    return statuses


def _server(env: dict[str, str], port: int, profile_to: Path | None) -> subprocess.Popen[bytes]:
    command = [GRATTAGE, "serve", "--port", str(port), "--workers", str(WORKERS)]
    if profile_to is not None:
        spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        command = [spy, "record", "--subprocesses", "--gil", "--format", "raw",
                   "--rate", "200", "-o", str(profile_to), "--", *command]  # fmt: skip
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _pass(env: dict[str, str], players: list[tuple[str, str]], profile_to: Path | None) -> None:
    port = _free_port()
    server = _server(env, port, profile_to)
    try:
        _wait_until_up(port, server)
        tokens = asyncio.run(_log_in(port, players))
        time.sleep(2.0)  # every worker has polled the witness
        asyncio.run(_plays(port, tokens, WARM_UP_PLAYS))
        _drained(env)
        processes = _processes(server.pid)
        witness_pid = int(env["BENCH_WITNESS_PID"])
        processes[witness_pid] = "witness"
        before = _snapshot(processes)
        time.sleep(IDLE_SECONDS)
        idle = _by_role(processes, before, _snapshot(processes))
        windows = []
        for _ in range(1 if profile_to is not None else REPEATS):
            before, started = _snapshot(processes), time.perf_counter()
            clients_before = time.process_time()
            statuses = asyncio.run(_plays(port, tokens, PLAYS))
            clients = time.process_time() - clients_before
            _drained(env)
            elapsed = time.perf_counter() - started
            spent = _by_role(processes, before, _snapshot(processes))
            spent["clients"] = round(clients * TICKS)
            windows.append((spent, elapsed, statuses))
    finally:
        # Under py-spy, serve itself is stopped: py-spy writes its samples once serve exits.
        masters = [pid for pid, role in _processes(server.pid).items() if role == "master"]
        if profile_to is not None and masters:
            os.kill(masters[0], signal.SIGTERM)
        else:
            server.terminate()
        server.wait(timeout=60)
    if profile_to is None:
        _report(processes, idle, windows)


def _report(
    processes: dict[int, str],
    idle: Counter[str],
    windows: list[tuple[Counter[str], float, dict[int, int]]],
) -> None:
    print(f"  {len(windows)} × {PLAYS} plays ({CLIENTS} clients): answers "
          f"{[statuses for _, _, statuses in windows]} in "
          f"{', '.join(f'{elapsed:.1f}' for _, elapsed, _ in windows)} s; processes "
          f"{sorted(Counter(processes.values()).items())}")  # fmt: skip
    roles = ("workers", "drawer", "master", "server", "witness", "clients")
    figures: dict[str, list[tuple[float, float]]] = {role: [] for role in roles}
    for spent, elapsed, _ in windows:
        for role in roles[:3] + roles[4:]:  # the clients: this process, never idle here
            idle_ticks = idle[role] / IDLE_SECONDS * elapsed
            gross = spent[role] / TICKS / PLAYS * 1e6
            net = max(0.0, spent[role] - idle_ticks) / TICKS / PLAYS * 1e6
            figures[role].append((gross, net))
        mine = [figures[role][-1] for role in roles[:3]]
        figures["server"].append((sum(g for g, _ in mine), sum(n for _, n in mine)))
    idle["server"] = sum(idle[role] for role in roles[:3])
    for role in roles:
        gross = statistics.median(g for g, _ in figures[role])
        net = statistics.median(n for _, n in figures[role])
        each = " ".join(f"{g:.0f}" for g, _ in figures[role])
        print(
            f"  CPU per play  {role:<8} median {gross:>6.0f} µs ({each})   net of idle "
            f"{net:>6.0f} µs   (idle {idle[role] / TICKS / IDLE_SECONDS * 1000:.0f} ms/s)"
        )
    server = statistics.median(g for g, _ in figures["server"])
    print(
        f"  → the server's processes alone could answer {2e6 / server:.0f} plays/s on 2 "
        "cores (the database's, the witness's and the clients' CPU not counted)"
    )


_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def _where(frame: str) -> tuple[str, str]:
    """A sampled frame (py-spy names files from their package down) as (package, function in
    its module)."""
    match = _FRAME.match(frame.strip())
    if match is None:
        return "?", frame.strip()
    parts = match["file"].split("/")
    if len(parts) == 1 or parts[0].startswith("<"):
        package = "stdlib"
    else:
        package = "/".join(parts[:2]) if parts[0] == "grattage" else parts[0]
    return package, f"{match['function']} ({'/'.join(parts[-2:])})"


WORK = ("RequestResponseCycle.run_asgi", "DrawLoop._run", "LoopBatcher._run_batch",
        "_Lane._run_batch")  # fmt: skip
"""A sample whose stack holds none of these is the processes' start, not a play's work."""


def _profile_report(raw: Path, top: int = 20) -> None:
    by_role: Counter[str] = Counter()
    by_package: Counter[str] = Counter()
    by_self: Counter[str] = Counter()
    by_total: Counter[str] = Counter()
    samples = other = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not count_text.isdigit():
            continue
        count = int(count_text)
        # A worker's command line holds a ";" of its own: its pieces are left out too.
        parts = stack.split(";")
        frames = [f for f in parts if not f.startswith("process ") and "-fork" not in f]
        if not any(frame.startswith(WORK) for frame in frames):
            other += count
            continue
        samples += count
        by_role["drawer" if "grattage draw" in stack else "workers"] += count
        package, function = _where(frames[-1])
        by_package[package] += count
        by_self[function] += count
        for name in {_where(frame)[1] for frame in frames if frame.startswith(WORK) or
                     _where(frame)[0].startswith("grattage")}:  # fmt: skip
            by_total[name] += count
    print(
        f"  py-spy: {samples} samples of the server's work holding the GIL (200 a second; "
        f"{other} more of its start left out): "
        + ", ".join(f"{role} {n / samples * 100:.0f} %" for role, n in by_role.items())
    )
    for title, counter in (("by package (self)", by_package), ("by function (self)", by_self),
                           ("grattage's functions (with callees)", by_total)):  # fmt: skip
        print(f"  top {top} {title}:")
        for name, count in counter.most_common(top):
            print(f"    {count / samples * 100:5.1f} %  {name}")


if __name__ == "__main__" and len(sys.argv) > 1:  # a profile kept earlier, read again
    _profile_report(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20)
    sys.exit()


def _run(label: str, database_url: str, folder: str) -> None:
    print(f"CPU per drawn auto play on {label} ({WORKERS} workers); load {os.getloadavg()[0]:.1f}")
    env = {
        **os.environ,
        "GRATTAGE_DATABASE_URL": database_url,
        "GRATTAGE_KEY_DIR": f"{folder}/keys",
        "GRATTAGE_DISCLOSURE_DIR": f"{folder}/disclosures",
        "GRATTAGE_PASSWORD_TIME_COST": "1",
        "GRATTAGE_PASSWORD_MEMORY_KIB": "1024",
        "GRATTAGE_STAKE_LIMIT_DEFAULT_CENTS": "100000000",
        "GRATTAGE_STAKE_LIMIT_MAX_CENTS": "100000000",
        "GRATTAGE_LOG_IN_RATE_PER_CLIENT": "1000/minute",
    }
    from grattage.adapters.keystore import FileKeyStore
    from grattage.blocks.signing import Signer

    operator = Signer(FileKeyStore(Path(f"{folder}/keys")).operator_key()).public_key.hex()
    witness, url, key = _witness(folder, operator)
    env |= {"GRATTAGE_WITNESS_URL": url, "GRATTAGE_WITNESS_PUBLIC_KEY": key}
    env["BENCH_WITNESS_PID"] = str(witness.pid)
    try:
        players = _prepare(env, units=UNITS, clients=CLIENTS)
        _pass(env, players, None)
        if PROFILE:
            raw = Path(PROFILE).with_suffix(f".{label.lower()}.txt")
            raw.parent.mkdir(parents=True, exist_ok=True)
            _pass(env, players, raw)
            _profile_report(raw)
    finally:
        witness.terminate()
        witness.wait(timeout=30)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        _run("SQLite", f"sqlite:///{folder}/bench.db", folder)
    with postgres_schema("grattage_cpu") as found, tempfile.TemporaryDirectory() as folder:
        if found is None:
            return
        postgres, schema = found
        print()
        _run("PostgreSQL", _postgres_schema_url(postgres, schema), folder)


if __name__ == "__main__":
    main()
