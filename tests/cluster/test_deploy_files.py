"""deploy/'s files are what systemd and nginx accept: the units pass ``systemd-analyze
verify`` (warnings included), the site passes ``nginx -t`` once its placeholders are filled."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from . import units

pytestmark = pytest.mark.cluster


def test_every_unit_passes_systemd_analyze_verify_without_a_warning(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    names = sorted(path.name for path in units.UNITS.iterdir())
    assert {"grattage.service", "grattage-sweep.timer", "grattage-reconcile.timer",
            "grattage-monitor.timer"} <= set(names)  # fmt: skip
    for name in names:  # the installed path is this clone's command (verify checks it exists)
        text = (units.UNITS / name).read_text("utf-8")
        (tmp_path / name).write_text(text.replace(units.INSTALLED_GRATTAGE, units.HERE_GRATTAGE))
    verified = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / name) for name in names)],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert verified.returncode == 0 and verified.stderr == "", verified.stderr


def test_every_unit_names_a_command_the_cluster_can_run() -> None:
    # The witness's URL is set once its key is known (deploy/grattage.env): the monitor's
    # command names it.
    env = {
        **units.read_env_file(),
        "MONITOR_URL": "https://lb",
        "GRATTAGE_WITNESS_URL": "https://witness",
    }
    for path in units.UNITS.glob("*.service"):
        argv = units.command_line(units.read_unit(path.name), env)
        assert argv[0] == units.HERE_GRATTAGE, path.name


def test_the_nginx_site_passes_nginx_t_once_rendered(tmp_path: Path) -> None:
    if shutil.which("nginx") is None or shutil.which("openssl") is None:
        pytest.skip("nginx is not installed (make cluster installs it)")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=t", "-keyout", str(tmp_path / "k.pem"),
         "-out", str(tmp_path / "c.pem")],
        capture_output=True, check=True,
    )  # fmt: skip
    site = units.render(
        units.NGINX_SITE.read_text("utf-8"),
        {"app_servers": units.upstream_lines(["10.0.0.11:8000", "10.0.0.12:8000"]),
         "server_name": "_", "tls_certificate": str(tmp_path / "c.pem"),
         "tls_certificate_key": str(tmp_path / "k.pem"), "access_log": str(tmp_path / "a.log"),
         "admin_allow": units.allow_lines(["192.0.2.0/24", "10.0.0.5"])},
    )  # fmt: skip
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid; error_log {tmp_path}/error.log; events {{}}\n"
        f"http {{ include {tmp_path}/site.conf; }}\n"
    )
    tested = subprocess.run(["nginx", "-t", "-c", str(tmp_path / "nginx.conf")],
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert tested.returncode == 0, tested.stderr


def test_the_monitor_unit_is_not_given_the_database_password() -> None:
    unit = units.read_unit("grattage-monitor.service")
    assert "GRATTAGE_DATABASE_URL" in unit.unset_environment
    assert not any("DATABASE" in name for name in unit.environment)
