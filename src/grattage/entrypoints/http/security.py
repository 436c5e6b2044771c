"""Security headers on every answer: a pure ASGI middleware (no per-request thread hop).

- ``Content-Security-Policy``: the pages load scripts, styles, images and data from their own
  origin only; no frame may embed them (``frame-ancestors 'none'``, and ``X-Frame-Options:
  DENY`` for old browsers). The interactive API docs (``/docs``) load a packaged Swagger UI and
  start it with an inline script: their policy allows that inline script and nothing outside.
- ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``,
  ``Cross-Origin-Opener-Policy: same-origin``.
- ``Cache-Control: no-store`` on ``/api``: balances, tickets and tokens never sit in a cache —
  except an answer that declares itself ``public`` (a published file that never changes, such
  as a block's draws file): it keeps its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
DOCS_CONTENT_SECURITY_POLICY = (  # Swagger UI's page starts itself with an inline script
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
DOCS_PATHS = ("/docs",)

_COMMON: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
_PAGE = (*_COMMON, (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
_DOCS = (*_COMMON, (b"content-security-policy", DOCS_CONTENT_SECURITY_POLICY.encode()))
_API = (*_PAGE, (b"cache-control", b"no-store"))


def headers_for(path: str) -> tuple[tuple[bytes, bytes], ...]:
    if path == "/api" or path.startswith("/api/"):
        return _API
    if path.startswith(DOCS_PATHS):
        return _DOCS
    return _PAGE


class SecurityHeaders:
    """Adds :func:`headers_for` the request's path to each HTTP answer (replacing any copy)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = headers_for(scope.get("path", ""))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                added = extra
                if any(_is_public(k, v) for k, v in headers):
                    added = tuple(item for item in extra if item[0] != b"cache-control")
                names = {name for name, _ in added}
                kept = [(k, v) for k, v in headers if k.lower() not in names]
                message["headers"] = [*kept, *added]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _is_public(name: bytes, value: bytes) -> bool:
    return name.lower() == b"cache-control" and value.lower().startswith(b"public")
