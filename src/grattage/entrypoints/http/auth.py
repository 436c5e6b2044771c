"""Who is calling: a bearer token (scripts) or the HttpOnly session cookie (browsers).

A cookie rides along on any request the browser makes, including a cross-site form post, so a
write authenticated by the cookie must also carry ``X-Grattage-CSRF: 1``, a header a
cross-site form cannot set.
"""

from __future__ import annotations

from typing import Literal

from fastapi import Request, Response

from grattage.errors import Forbidden
from grattage.service.accounts import authenticate
from grattage.service.context import Platform
from grattage.service.model import Caller

COOKIE = "grattage_session"
CSRF_HEADER = "X-Grattage-CSRF"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def platform_of(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


def request_token(request: Request, cookie: str = COOKIE) -> tuple[str, bool]:
    """(the token, whether it came from the cookie): the bearer token if there is one, else
    the session cookie named ``cookie`` (the player's, or the back-office's)."""
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip(), False
    return request.cookies.get(cookie, ""), True


def set_session_cookie(
    request: Request,
    response: Response,
    cookie: str,
    token: str,
    samesite: Literal["lax", "strict"],
) -> None:
    """Give the browser a new session's token in the HttpOnly cookie ``cookie``."""
    response.set_cookie(
        cookie,
        token,
        httponly=True,
        samesite=samesite,
        secure=request.app.state.settings.secure_cookies,
        path="/",
    )


def require_csrf(request: Request, from_cookie: bool) -> None:
    if (
        from_cookie
        and request.method not in SAFE_METHODS
        and request.headers.get(CSRF_HEADER) != "1"
    ):
        raise Forbidden(f"a write authenticated by the session cookie needs {CSRF_HEADER}: 1")


def current_caller(request: Request) -> Caller:
    """FastAPI dependency: the authenticated player, or 401."""
    token, from_cookie = request_token(request)
    caller = authenticate(platform_of(request), token)
    require_csrf(request, from_cookie)
    return caller
