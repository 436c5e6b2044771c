"""The operator's public log routes (docs/api.md: key, sth, entries, consistency) served over
HTTP on loopback from a tests/drawn_log.py log, for the verifying commands' tests."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from drawn_log import DrawnLog


def _answer(handler: BaseHTTPRequestHandler, body: Any) -> None:
    if body is None:
        handler.send_error(404)
        return
    binary = isinstance(body, bytes)
    data = body if binary else json.dumps(body).encode()
    handler.send_response(200)
    handler.send_header(
        "Content-Type", "application/octet-stream" if binary else "application/json"
    )
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@contextmanager
def _served(route: Callable[[str, dict[str, Any]], Any]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
            _answer(self, route(url.path, query))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def serving(
    log: DrawnLog, files: dict[str, bytes] | None = None, draw_margin_ms: int | None = None
) -> Iterator[str]:
    """The operator's log routes (and ``files``: path → bytes, e.g. a block's draws; with
    ``draw_margin_ms``, ``GET /api/log/draw-rule`` publishes it)."""
    head = log.head()

    def route(path: str, query: dict[str, Any]) -> Any:
        if path in (files or {}):
            return (files or {})[path]
        number = {k: int(v) for k, v in query.items()}
        name = path.removeprefix("/api/log/")
        if name == "key":
            return {
                "algorithm": "Ed25519",
                "public_key": log.operator.public_key.hex(),
                "key_id": log.operator.key_id,
            }
        published = {"sth": head.to_json()}
        if draw_margin_ms is not None:
            published["draw-rule"] = {"draw_margin_ms": draw_margin_ms}
        if name in published:
            return published[name]
        if name == "entries":
            start = number["start"]
            end = min(number["end"], head.tree_size - 1, start + 999)
            return {
                "entries": [{"index": i, "entry": log.entries[i]} for i in range(start, end + 1)]
            }
        if name == "consistency":
            first, second = number["first"], number["second"]
            return {"first": first, "second": second, "proof": log.consistency(first, second)}
        return None

    with _served(route) as url:
        yield url


@contextmanager
def serving_witness(log: DrawnLog) -> Iterator[str]:
    """The witness's routes a monitor asks: its chain, and the heads cosigned for a round."""

    def route(path: str, query: dict[str, Any]) -> Any:
        if path == "/witness/chain":
            return log.chain_document
        if path == "/witness/cosigned":
            number = int(query["round"])
            return {"round": number, "heads": log.cosigned.get(number, [])}
        return None

    with _served(route) as url:
        yield url
