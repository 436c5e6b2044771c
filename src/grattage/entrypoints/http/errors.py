"""Errors to HTTP, in one place: ``{"error": code, "message": text}`` with the status of the
branch of :mod:`grattage.errors` the exception belongs to. Never a 500 for client input."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, InterfaceError, InternalError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from grattage.errors import (
    Conflict,
    Forbidden,
    GrattageError,
    InvalidInput,
    NotFound,
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
    (Unavailable, 503),
    (VerificationFailed, 422),
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


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": code, "message": message}, status_code=status)


def _describe(error: RequestValidationError) -> str:
    parts = []
    for problem in error.errors()[:5]:
        where = ".".join(str(p) for p in problem.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


DATABASE_UNAVAILABLE = (
    "the database is unavailable right now; nothing was recorded, retry in a moment"
)


UNSTORABLE_VALUE = "a value of the request cannot be stored (e.g. a NUL character in a text)"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(GrattageError)
    async def _grattage(_request: Request, error: GrattageError) -> JSONResponse:
        return error_response(status_for(error), error.code, error.message)

    async def _database(_request: Request, error: Exception) -> JSONResponse:
        # The database is down, read-only (PostgreSQL: InternalError), full, dropped the
        # connection or has no connection to spare: the transaction rolled back (nothing
        # half-recorded) and the caller may retry. Never the driver's text in the answer: it
        # can carry SQL and parameters. (Integrity and programming errors are bugs: still 500.)
        cause = getattr(error, "orig", None) or error
        log.warning("database unavailable, answered 503: %s", type(cause).__name__)
        return error_response(503, Unavailable.code, DATABASE_UNAVAILABLE)

    for database_trouble in (OperationalError, InterfaceError, InternalError, PoolTimeout):
        app.add_exception_handler(database_trouble, _database)

    @app.exception_handler(DataError)
    async def _unstorable(_request: Request, error: DataError) -> JSONResponse:
        # The database refused a value the request carried (PostgreSQL: a NUL character in a
        # text, a number out of range): bad input; the transaction rolled back.
        log.info("database refused a value of the request: %s", type(error.orig).__name__)
        return error_response(422, InvalidInput.code, UNSTORABLE_VALUE)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, error: RequestValidationError) -> JSONResponse:
        return error_response(422, InvalidInput.code, _describe(error))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, error: StarletteHTTPException) -> JSONResponse:
        status = error.status_code
        code = _CODE_BY_STATUS.get(status, "error")
        return error_response(status, code, str(error.detail))
