"""The deployment files of deploy/, read as systemd and nginx would, for the test cluster.

systemd is not PID 1 here: the cluster starts the very command a unit's ``ExecStart`` names,
with the environment its ``EnvironmentFile``/``Environment`` lines give (``${NAME}`` replaced
as systemd does, one word each), production paths mapped to the host's own folders, and the
``ReadOnlyPaths`` it lists mounted read-only; the names of its ``UnsetEnvironment`` taken out
of that environment last, as systemd does.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
UNITS = DEPLOY / "systemd"
ENV_FILE = DEPLOY / "grattage.env"
NGINX_SITE = DEPLOY / "nginx" / "grattage.conf"
INSTALLED_GRATTAGE = "/opt/grattage/venv/bin/grattage"
"""Where the units expect the installed command; the cluster runs this clone's."""
HERE_GRATTAGE = str(Path(sys.executable).parent / "grattage")


@dataclass(frozen=True)
class Unit:
    name: str
    exec_start: str
    environment: dict[str, str]
    read_only_paths: list[str]
    unset_environment: list[str]


def read_env_file(path: Path = ENV_FILE) -> dict[str, str]:
    values = {}
    for raw in path.read_text("utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value.strip()
    return values


def read_unit(name: str) -> Unit:
    """The ``[Service]`` lines the cluster needs from deploy/systemd/``name``."""
    exec_start = ""
    environment: dict[str, str] = {}
    read_only: list[str] = []
    unset: list[str] = []
    for line in (UNITS / name).read_text("utf-8").splitlines():
        key, sep, value = line.partition("=")
        if not sep or line.startswith("#"):
            continue
        if key == "ExecStart":
            exec_start = value
        elif key == "Environment":
            env_name, _, env_value = value.partition("=")
            environment[env_name] = env_value
        elif key == "ReadOnlyPaths":
            read_only += value.split()
        elif key == "UnsetEnvironment":
            unset += value.split()
    assert exec_start, f"{name} has no ExecStart"
    return Unit(name, exec_start, environment, read_only, unset)


def command_line(unit: Unit, environment: dict[str, str]) -> list[str]:
    """The unit's ``ExecStart`` as systemd runs it: ``${NAME}`` from the environment (a name
    it does not hold is an error here, where systemd would silently leave it empty)."""

    def value(match: re.Match[str]) -> str:
        return shlex.quote(environment[match.group(1)])

    argv = shlex.split(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value, unit.exec_start))
    if argv[0] == INSTALLED_GRATTAGE:
        argv[0] = HERE_GRATTAGE
    return argv


def render(text: str, values: dict[str, str]) -> str:
    """``{{ name }}`` placeholders filled; one left unfilled is an error."""
    for name, value in values.items():
        text = text.replace("{{ " + name + " }}", value)
    left = re.findall(r"\{\{ *(\w+) *\}\}", text)
    assert not left, f"placeholders left unfilled: {left}"
    return text


MAX_FAILS = 2
FAIL_TIMEOUT_SECONDS = 2
"""The passive health check deploy/ recommends: a host failing 2 attempts within 2 s is left
out for 2 s, then tried again with one request."""


def upstream_lines(servers: list[str], down: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """The ``server`` lines of the upstream: passive checks as deploy/ recommends; a drained
    host is marked ``down`` (nginx then sends it nothing after a reload)."""
    return "\n".join(
        f"    server {server} max_fails={MAX_FAILS} fail_timeout={FAIL_TIMEOUT_SECONDS}s"
        f"{' down' if server in down else ''};"
        for server in servers
    )


def allow_lines(networks: list[str]) -> str:
    """The ``allow`` lines of the back office's locations: the operators' networks."""
    return "\n".join(f"        allow {network};" for network in networks)
