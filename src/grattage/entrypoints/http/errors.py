"""Errors to HTTP, in one place: ``{"error": code, "message": text}`` with the status of the
branch of :mod:`grattage.errors` the exception belongs to. Never a 500 for client input.

Only that tree is mapped here: database and driver errors reached it already, in
:mod:`grattage.adapters.errors`. Anything else is a bug: :class:`AnswerBugs` answers it 500
``internal_error`` in the same JSON shape, with a message that says nothing of the bug (its
traceback goes to the server's log only)."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from grattage.errors import (
    Conflict,
    Forbidden,
    GrattageError,
    Inconsistent,
    InvalidInput,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
    VerificationFailed,
)

log = logging.getLogger("grattage.http")

STATUS_BY_BRANCH: tuple[tuple[type[GrattageError], int], ...] = (
    (InvalidInput, 422),
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (RateLimited, 429),
    (Unavailable, 503),
    (VerificationFailed, 422),
    (Inconsistent, 500),
)

INTERNAL_ERROR = "internal_error"
INTERNAL_MESSAGE = "the server failed to answer this request; nothing was changed by it"
INCONSISTENT_MESSAGE = (
    "the server found its own records inconsistent and refused this request; nothing was "
    "changed by it"
)

_CODE_BY_STATUS = {
    400: "invalid_input",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    422: "invalid_input",
}


def status_for(error: GrattageError) -> int:
    for branch, status in STATUS_BY_BRANCH:
        if isinstance(error, branch):
            return status
    return 500


def error_response(
    status: int, code: str, message: str, details: dict[str, object] | None = None
) -> JSONResponse:
    body: dict[str, object] = {"error": code, "message": message}
    if details is not None:  # only the errors a page words from numbers (limit_reached)
        body["details"] = details
    return JSONResponse(body, status_code=status)


def _driver_error_name(error: BaseException) -> str:
    cause = error.__cause__
    driver = getattr(cause, "orig", None) or cause
    return type(driver).__name__ if driver is not None else "no driver error"


def _describe(error: RequestValidationError) -> str:
    parts = []
    for problem in error.errors()[:5]:
        where = ".".join(str(p) for p in problem.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def _not_found_page(request: Request) -> str | None:
    """The French 404 page (web/not_found.html) for a browser asking for a page: not under
    /api/ (the API answers JSON, docs/api.md) and accepting text/html. None otherwise, or when
    the app serves no pages."""
    page: str | None = getattr(request.app.state, "not_found_page", None)
    if page is None or request.url.path.startswith("/api/"):
        return None
    return page if "text/html" in request.headers.get("accept", "") else None


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(GrattageError)
    async def _grattage(_request: Request, error: GrattageError) -> JSONResponse:
        status = status_for(error)
        if status == 500:  # the details are for the operator, not for whoever asked
            log.error("answered 500 %s: %s", error.code, error.message)
            return error_response(500, error.code, INCONSISTENT_MESSAGE)
        if status == 503:
            # The message names a reason, never the driver's text (it can carry SQL and
            # parameters); the type of the driver's error is enough to tell causes apart.
            log.warning("answered 503: %s (%s)", error.message, _driver_error_name(error))
        answer = error_response(status, error.code, error.message, error.details)
        if error.retry_after_seconds is not None:
            answer.headers["Retry-After"] = str(max(1, error.retry_after_seconds))
        return answer

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, error: RequestValidationError) -> JSONResponse:
        return error_response(422, InvalidInput.code, _describe(error))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, error: StarletteHTTPException) -> JSONResponse | HTMLResponse:
        status = error.status_code
        page = _not_found_page(request) if status == 404 else None
        if page is not None:
            return HTMLResponse(page, status_code=404)
        if status == 400:
            # A body the framework cannot even decode (not UTF-8): bad input like any other,
            # 422 as docs/api.md says — a truncated JSON body already answers 422.
            return error_response(422, InvalidInput.code, "the body is not UTF-8 JSON")
        answer = error_response(status, _CODE_BY_STATUS.get(status, "error"), str(error.detail))
        answer.headers.update(error.headers or {})  # e.g. a 405's Allow
        return answer


class AnswerBugs:
    """A pure ASGI middleware: an exception nothing mapped (a bug) is logged with its traceback
    and answered ``500 internal_error`` as JSON, not Starlette's text/plain page. Installed
    inside :class:`~grattage.entrypoints.http.security.SecurityHeaders`, so that answer carries
    the security headers too. Once an answer has started, nothing can be said: it re-raises."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_and_note(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        except Exception:
            log.exception("answered 500 internal_error to %s %s", scope["method"], scope["path"])
            if started:
                raise
            body = json.dumps({"error": INTERNAL_ERROR, "message": INTERNAL_MESSAGE}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
