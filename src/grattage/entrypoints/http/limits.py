"""Request body limits: a body over its route's limit is refused with 413 before it is read
whole.

A pure ASGI middleware, outside the app's own: a ``Content-Length`` above the limit is
answered at once without reading a byte of the body; otherwise (a chunked body, or a length
that lies) the bytes are counted as they arrive and reading stops the moment the count passes
the limit — at most one chunk (uvicorn reads 64 KiB at a time) beyond it is ever held.
Every route has :attr:`BodyLimits.default` (64 KiB), the routes of :attr:`BodyLimits.larger`
(the prize-table upload) their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from grattage.entrypoints.http.errors import error_response

TOO_LARGE = "the body is {size} bytes at least; this route takes at most {limit} bytes"


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` once the body passes its limit. An HTTPException, so that
    FastAPI's body reader lets it through and the app's handlers answer 413 ``too_large``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(413, TOO_LARGE.format(size=size, limit=limit))


@dataclass(frozen=True)
class BodyLimits:
    default: int
    larger: Mapping[tuple[str, str], int] = field(default_factory=dict)
    """(method, path) → limit, for the few routes that take more."""

    def limit_for(self, method: str, path: str) -> int:
        return self.larger.get((method, path.rstrip("/") or "/"), self.default)


class LimitBodies:
    def __init__(self, app: ASGIApp, limits: BodyLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.limit_for(scope["method"], scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            answer = error_response(413, "too_large", TOO_LARGE.format(size=declared, limit=limit))
            # The body is left unread: the server closes the connection after the answer.
            answer.headers["Connection"] = "close"
            await answer(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(received, limit)
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            # A malformed length is the HTTP server's to refuse (h11 answers 400).
            return int(text) if text.isdigit() and len(text) < 20 else None
    return None
