"""A grattage cluster in network namespaces (issue 17), started from deploy/'s files.

Hosts (tests/cluster/netns.py), on 10.217.0.0/24:

| host | address | runs |
|---|---|---|
| db | .2 | PostgreSQL 15 of its own (initdb in the cluster's folder; not the machine's) |
| witness | .3 | ``grattage witness serve`` (the independent witness, its own key and storage) |
| ops | .4 | the release step (grattage-migrate.service), emissions (it alone writes the key store), grattage-draw.service, and the sweep/reconcile/monitor timers' commands |
| lb | .10 | nginx with deploy/nginx/grattage.conf, TLS on 443 |
| app1…3 | .11… | grattage.service (``grattage serve``), the key store mounted read-only |
| load | .20 | the load generator (loadgen.py), which talks to the balancer only |

:meth:`Cluster.close` tears everything down whatever happened, and :meth:`Cluster.start`
first removes what a crashed earlier run left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import emissions, units
from .balancer import APP_PORT, Balancer
from .netns import Network, cpu_seconds, run, scratch_dir

PG_BIN = Path("/usr/lib/postgresql/15/bin")
HERE = Path(__file__).resolve().parent
PASSWORD = "cluster password"
WITNESS_PORT = 8700
ADDRESSES = {"db": 2, "witness": 3, "ops": 4, "lb": 10, "load": 20}
TEST_SETTINGS = {
    "GRATTAGE_PASSWORD_TIME_COST": "1",  # argon2 at full cost takes ~0.5 s a log-in here
    "GRATTAGE_PASSWORD_MEMORY_KIB": "1024",
    "GRATTAGE_DEMO_DEPOSIT_MAX_CENTS": "100000000",
    **{
        f"GRATTAGE_{action}_RATE_{who}": "1000000/second"  # every player logs in from .20
        for action in ("LOG_IN", "SIGN_UP", "TRY_START")
        for who in ("PER_CLIENT", "OVERALL")
    },
    **{
        f"GRATTAGE_{kind}_LIMIT_{which}_CENTS": str(10**12)  # load, not responsible gaming
        for kind in ("DEPOSIT", "STAKE")
        for which in ("DEFAULT", "MAX")
    },
}


@dataclass
class Cluster(Balancer):
    app_hosts: int = 3
    players: int = 24
    beacon_seconds: float = 0.5
    net: Network = field(default_factory=Network)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    drained: set[str] = field(default_factory=set)
    witness_key: str = ""
    drawn: bool = True
    """Cash blocks drawn (made once the witness is known: one open at a time, docs/draw.md)
    or not (made before it; then ``open_blocks`` of them are on sale at once)."""
    open_blocks: int = 1

    @property
    def root(self) -> Path:
        return scratch_dir(self.net.prefix)

    @property
    def apps(self) -> list[str]:
        return [f"app{number}" for number in range(1, self.app_hosts + 1)]

    @property
    def emails(self) -> list[str]:
        return [f"cluster{number}@example.org" for number in range(self.players)]

    @property
    def database_url(self) -> str:
        return f"postgresql+psycopg://postgres@{self.net.address('db')}:5432/grattage"

    # -- start and stop ---------------------------------------------------------------------

    def start(self) -> Cluster:
        self.net.create()  # removes a crashed run's namespaces and folder first
        self.root.mkdir(parents=True)
        (self.root / "logs").mkdir()
        for host, last_byte in ADDRESSES.items():
            self.net.add(host, last_byte)
        for number, host in enumerate(self.apps, start=11):
            self.net.add(host, number)
        self._start_database()
        self._release()
        if not self.drawn:
            emissions.create_blocks(self)  # no witness known yet: undrawn for good
        self._start_witness()
        if self.drawn:
            emissions.create_blocks(self)
        drawer, drawer_env = self._unit("grattage-draw.service", "ops")
        self._start("drawer", "ops", units.command_line(drawer, drawer_env), drawer_env)
        emissions.open_more_blocks(self)
        for host in self.apps:
            self.start_app(host)
        self._start_balancer()
        return self

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        self.net.destroy()  # every process of every host, the namespaces, the folder
        for process in self.processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- hosts ------------------------------------------------------------------------------

    def _start(
        self, name: str, host: str, argv: list[str], env: dict[str, str] | None = None
    ) -> None:
        log = (self.root / "logs" / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            self.net.command(host, argv), env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()

    def popen(self, host: str, argv: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self.net.command(host, argv), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)  # fmt: skip

    def log(self, name: str) -> str:
        return (self.root / "logs" / f"{name}.log").read_text("utf-8", errors="replace")

    def on(
        self, host: str, *argv: str, env: dict[str, str] | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.net.command(host, argv), env=env, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip

    def _start_database(self) -> None:
        data = self.root / "db"
        data.mkdir()
        shutil.chown(data, "postgres", "postgres")
        run("runuser", "-u", "postgres", "--", str(PG_BIN / "initdb"), "-D", str(data),
            "-A", "trust", "-U", "postgres", "--no-sync", timeout=120)  # fmt: skip
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write("host all all 10.217.0.0/24 trust\n")  # the private subnet only
        self.start_postgres()
        created = self.sql("CREATE DATABASE grattage", database="postgres")
        assert created == "", created

    def start_postgres(self) -> None:
        """PostgreSQL on the db host, on its data folder (after a crash: its recovery first)."""
        data = self.root / "db"
        address = self.net.address("db")
        self._start("postgres", "db", [
            "runuser", "-u", "postgres", "--", str(PG_BIN / "postgres"), "-D", str(data),
            "-c", f"listen_addresses={address}", "-c", f"unix_socket_directories={data}",
            "-c", "max_connections=400", "-c", "shared_buffers=128MB",
        ])  # fmt: skip
        self._wait(
            lambda: (
                self.on(
                    "db", str(PG_BIN / "pg_isready"), "-h", address, "-U", "postgres"
                ).returncode
                == 0
            ),
            60,
            "PostgreSQL",
        )

    def sql(self, statement: str, database: str = "grattage") -> str:
        """``statement`` run with psql from the ops host; its rows, ``|``-separated."""
        ran = self.on("ops", str(PG_BIN / "psql"), "-h", self.net.address("db"), "-U", "postgres",
                      "-d", database, "-AtqX", "-v", "ON_ERROR_STOP=1", "-c", statement)  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        return ran.stdout.strip()

    def env(self, host: str) -> dict[str, str]:
        """deploy/grattage.env as installed on ``host``: the cluster's addresses, the host's
        folders in place of /var/lib/grattage, and the test's settings (cheap passwords, no
        rate limits: every player logs in from the load host)."""
        folder = self.root / host
        values = {
            **units.read_env_file(),
            "GRATTAGE_DATABASE_URL": self.database_url,
            "GRATTAGE_WITNESS_URL": f"http://{self.net.address('witness')}:{WITNESS_PORT}",
            "GRATTAGE_WITNESS_PUBLIC_KEY": self.witness_key,
            "FORWARDED_ALLOW_IPS": self.net.address("lb"),
            "SERVE_HOST": self.net.address(host),
            "SERVE_PORT": str(APP_PORT),
            "MONITOR_URL": f"https://{self.net.address('lb')}",
            **TEST_SETTINGS,
        }
        values = {
            name: value.replace("/var/lib/grattage", f"{folder}/var/lib/grattage")
            for name, value in values.items()
        }
        if host == "ops":
            values["GRATTAGE_KEY_DIR"] = str(self.root / "keystore")
        if not self.witness_key:  # the release step runs before the witness is known
            del values["GRATTAGE_WITNESS_URL"], values["GRATTAGE_WITNESS_PUBLIC_KEY"]
        for path in ("disclosures", "keys"):
            (folder / "var/lib/grattage" / path).mkdir(parents=True, exist_ok=True)
        return {
            "PATH": os.environ["PATH"],
            "SSL_CERT_FILE": str(self.root / "tls" / "cert.pem"),
            **values,
        }

    def _unit(self, name: str, host: str) -> tuple[units.Unit, dict[str, str]]:
        unit = units.read_unit(name)
        env = {**self.env(host), **unit.environment}
        for unset in unit.unset_environment:
            env.pop(unset, None)
        return unit, env

    def run_unit(self, name: str, host: str = "ops") -> subprocess.CompletedProcess[str]:
        """A oneshot unit's command (migrate, sweep, reconcile, monitor) run once on ``host``."""
        unit, env = self._unit(name, host)
        argv = [
            arg.replace("/var/lib/grattage-monitor", str(self.root / host / "monitor"))
            for arg in units.command_line(unit, env)
        ]
        (self.root / host / "monitor").mkdir(parents=True, exist_ok=True)
        return self.on(host, *argv, env=env)

    def _release(self) -> None:
        (self.root / "keystore").mkdir()
        migrated = self.run_unit("grattage-migrate.service")
        assert migrated.returncode == 0, migrated.stdout + migrated.stderr
        key = self.on("ops", units.HERE_GRATTAGE, "log", "key", env=self.env("ops"))
        assert key.returncode == 0, key.stderr
        self.operator_key = json.loads(key.stdout)["public_key"]

    def _start_witness(self) -> None:
        from grattage.blocks.signing import Signer

        data = self.root / "witness-data"
        env = {
            "PATH": os.environ["PATH"],
            "GRATTAGE_WITNESS_DATA_DIR": str(data),
            "GRATTAGE_WITNESS_BEACON_SECONDS": str(self.beacon_seconds),
            "GRATTAGE_WITNESS_CHAIN_LENGTH": "100000",
            "GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY": self.operator_key,
        }
        initialized = self.on("witness", units.HERE_GRATTAGE, "witness", "init", env=env)
        assert initialized.returncode == 0, initialized.stderr
        self.witness_key = Signer((data / "witness-ed25519.key").read_bytes()).public_key.hex()
        address = self.net.address("witness")
        self._start(
            "witness",
            "witness",
            [
                units.HERE_GRATTAGE,
                "witness",
                "serve",
                "--host",
                address,
                "--port",
                str(WITNESS_PORT),
            ],
            env,
        )
        self._wait(
            lambda: (
                self.probe("ops", f"http://{address}:{WITNESS_PORT}/witness/rounds/latest") == 200
            ),
            60,
            "the witness's first round",
        )

    def start_app(self, host: str) -> None:
        """grattage.service's command on ``host``, in a mount namespace of its own (``ip
        netns exec`` makes one) where the unit's ReadOnlyPaths are read-only bind mounts."""
        unit, env = self._unit("grattage.service", host)
        mounts = []
        for path in unit.read_only_paths:
            target = path.replace("/var/lib/grattage", f"{self.root / host}/var/lib/grattage")
            source = self.root / "keystore" if path.endswith("/keys") else Path(target)
            mounts.append(f"mount --bind {source} {target} && mount -o remount,bind,ro {target}")
        script = " && ".join([*mounts, 'exec "$@"'])
        self._start(host, host, ["sh", "-c", script, "sh", *units.command_line(unit, env)], env)
        self._wait(
            lambda: (
                self.probe("ops", f"http://{self.net.address(host)}:{APP_PORT}/api/health") == 200
            ),
            90,
            f"{host}'s server",
        )

    def stop_app(self, host: str) -> float:
        """As systemd stops grattage.service (KillMode=control-group): SIGTERM to every
        process of the host, SIGKILL after TimeoutStopSec. How long it took."""
        started = time.monotonic()
        self.net.kill_host(host, signal.SIGTERM)
        try:
            self.processes[host].wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.net.kill_host(host)
        self._wait(lambda: not self.net.pids(host), 20, f"{host}'s processes to end")
        return time.monotonic() - started

    def kill_app(self, host: str) -> int:
        """SIGKILL to every process of the host at once; how many."""
        killed = self.net.kill_host(host)
        self.processes[host].wait(timeout=30)
        return killed

    # -- probes and load --------------------------------------------------------------------

    def probe(self, host: str, url: str) -> int | None:
        """The status of ``GET url`` from ``host`` (the cluster's CA trusted); None if no answer."""
        code = (
            "import ssl,sys,urllib.request as u\n"
            f"c=ssl.create_default_context(cafile={str(self.root / 'tls/cert.pem')!r}) if sys.argv[1].startswith('https') else None\n"
            "try:\n print(u.urlopen(sys.argv[1],timeout=3,context=c).status)\n"
            "except Exception as e:\n print(getattr(e,'code',0))\n"
        )
        ran = self.on(host, "/usr/bin/python3", "-c", code, url, timeout=30)
        status = int(ran.stdout.strip() or 0)
        return status or None

    def load(
        self,
        seconds: float,
        clients: int | None = None,
        retry_seconds: float = 30,
        replay_sample: int = 20,
    ) -> subprocess.Popen[bytes]:
        """The load generator started on the load host; :meth:`figures` waits for its result."""
        config = {
            "host": self.net.address("lb"), "port": 443, "cafile": str(self.root / "tls/cert.pem"),
            "emails": self.emails[: clients or self.players], "password": PASSWORD,
            "seconds": seconds, "retry_seconds": retry_seconds, "replay_sample": replay_sample,
        }  # fmt: skip
        path = self.root / f"load-{time.monotonic_ns()}.json"
        config["stop_file"] = f"{path}.stop"
        path.write_text(json.dumps(config))
        process = subprocess.Popen(
            self.net.command("load", [sys.executable, str(HERE / "loadgen.py"), str(path), f"{path}.out"]),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        process.out = Path(f"{path}.out")  # type: ignore[attr-defined]
        process.stop_file = Path(config["stop_file"])  # type: ignore[attr-defined]
        return process

    @staticmethod
    def end_load(process: subprocess.Popen[bytes]) -> None:
        """Ask the load generator to stop now (its clients finish their purchase first)."""
        process.stop_file.touch()  # type: ignore[attr-defined]

    @staticmethod
    def figures(process: subprocess.Popen[bytes], timeout: float = 180) -> dict[str, Any]:
        _, err = process.communicate(timeout=timeout)
        assert process.returncode == 0, err.decode(errors="replace")
        return json.loads(process.out.read_text())  # type: ignore[attr-defined]

    def app_cpu_seconds(self) -> dict[int, float]:
        return cpu_seconds([pid for host in self.apps for pid in self.net.pids(host)])

    @staticmethod
    def _wait(condition: Any, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            time.sleep(0.2)
