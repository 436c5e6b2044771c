"""The cluster's balancer host: nginx with deploy/nginx/grattage.conf rendered for the
cluster's addresses, a self-signed certificate for its TLS, draining (a host marked ``down``,
nginx reloaded) and its access log read back. A part of :class:`cluster.Cluster`."""

from __future__ import annotations

import json
import shutil
from typing import Any

from . import units
from .netns import run

APP_PORT = 8000
OPERATOR_DESK = "load"
"""The one host the back office is allowed from at the edge (the operators' network)."""


class Balancer:
    """Methods of :class:`cluster.Cluster` for its ``lb`` host (its attributes are the
    cluster's: ``root``, ``net``, ``apps``, ``drained``)."""

    def _start_balancer(self) -> None:
        folder = self.root / "nginx"
        (folder / "temp").mkdir(parents=True)
        (self.root / "tls").mkdir()
        lb = self.net.address("lb")
        run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "2", "-subj", "/CN=grattage-cluster", "-addext", f"subjectAltName=IP:{lb}",
            "-keyout", str(self.root / "tls/key.pem"), "-out", str(self.root / "tls/cert.pem"))  # fmt: skip
        (folder / "nginx.conf").write_text(
            "user www-data;\nworker_processes 2;\npid " + str(folder / "nginx.pid") + ";\n"
            f"error_log {self.root / 'logs' / 'nginx-error.log'} warn;\n"
            "events { worker_connections 4096; }\n"
            "http {\n"
            + "".join(
                f"  {kind}_temp_path {folder / 'temp' / kind};\n"
                for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
            )
            + f"  include {folder / 'grattage.conf'};\n}}\n"
        )
        shutil.chown(folder / "temp", "www-data")
        self.render_site()
        self._start("nginx", "lb", ["nginx", "-c", str(folder / "nginx.conf"), "-g", "daemon off;"])
        self._wait(
            lambda: self.probe("load", f"https://{lb}/api/health") == 200, 30, "the balancer"
        )

    def render_site(self) -> None:
        servers = [f"{self.net.address(host)}:{APP_PORT}" for host in self.apps]
        down = {f"{self.net.address(host)}:{APP_PORT}" for host in self.drained}
        (self.root / "nginx" / "grattage.conf").write_text(units.render(
            units.NGINX_SITE.read_text("utf-8"),
            {"app_servers": units.upstream_lines(servers, down), "server_name": "_",
             "tls_certificate": str(self.root / "tls/cert.pem"),
             "tls_certificate_key": str(self.root / "tls/key.pem"),
             "access_log": str(self.root / "logs" / "access.log"),
             "admin_allow": units.allow_lines([self.net.address(OPERATOR_DESK)])},
        ))  # fmt: skip

    def reload_balancer(self) -> None:
        self.render_site()
        reloaded = self.on(
            "lb", "nginx", "-c", str(self.root / "nginx" / "nginx.conf"), "-s", "reload"
        )
        assert reloaded.returncode == 0, reloaded.stderr

    def drain(self, host: str) -> None:
        self.drained.add(host)
        self.reload_balancer()

    def undrain(self, host: str) -> None:
        self.drained.discard(host)
        self.reload_balancer()

    def request(
        self,
        host: str,
        method: str,
        url: str,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
    ) -> tuple[int | None, bytes]:
        """One request from ``host`` (the cluster's CA trusted), redirects not followed: its
        status and body; (None, b"") if no answer came. ``self.last_headers``: its headers."""
        code = (
            "import http.client,json,ssl,sys,urllib.parse as p\n"
            "m,url,body,headers=sys.argv[1],sys.argv[2],sys.argv[3].encode(),json.loads(sys.argv[4])\n"
            "u=p.urlsplit(url)\n"
            f"c=http.client.HTTPSConnection(u.hostname,u.port or 443,timeout=10,context=ssl.create_default_context(cafile={str(self.root / 'tls/cert.pem')!r})) if u.scheme=='https' else http.client.HTTPConnection(u.hostname,u.port or 80,timeout=10)\n"
            "try:\n c.request(m,u.path+('?'+u.query if u.query else ''),body=body or None,headers=headers)\n r=c.getresponse()\n sys.stdout.write(str(r.status)+'\\n'+json.dumps(dict(r.getheaders()))+'\\n'+r.read().decode('utf-8','replace'))\n"
            "except OSError:\n pass\n"
        )  # fmt: skip
        ran = self.on(host, "/usr/bin/python3", "-c", code, method, url, body.decode(),
                      json.dumps(headers or {}), timeout=30)  # fmt: skip
        if not ran.stdout:
            return None, b""
        status, _, rest = ran.stdout.partition("\n")
        headers_line, _, answer = rest.partition("\n")
        self.last_headers = {k.lower(): v for k, v in json.loads(headers_line).items()}
        return int(status), answer.encode()

    def access_log(self) -> list[dict[str, Any]]:
        """The balancer's lines: time, status, the upstreams tried and their statuses."""
        rows = []
        for line in (self.root / "logs" / "access.log").read_text().splitlines():
            at = float(line.split(" ", 1)[0])
            upstreams = line.split('upstream="', 1)[1].split('"', 1)[0]
            statuses = line.split('status="', 1)[1].split('"', 1)[0]
            rows.append({"at": at, "status": int(line.split('" ', 1)[1].split()[0]),
                         "upstreams": [u.strip() for u in upstreams.split(",") if u.strip() not in ("", "-")],
                         "upstream_statuses": statuses})  # fmt: skip
        return rows
