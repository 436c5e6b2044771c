"""Who is calling the back-office: an operator's bearer token or the ``grattage_admin`` cookie.

A player's credentials (their token or their session cookie) get 403, no credentials 401.
Cookie-authenticated writes need ``X-Grattage-CSRF: 1`` as on the player side.
"""

from __future__ import annotations

from fastapi import Request

from grattage.errors import Forbidden, Unauthorized
from grattage.service import accounts, operators
from grattage.service.operators import OperatorCaller

from .auth import COOKIE, platform_of, request_token, require_csrf

ADMIN_COOKIE = "grattage_admin"
ADMIN_DEVICE_COOKIE = "grattage_admin_device"


def _is_player(request: Request, token: str) -> bool:
    platform = platform_of(request)
    for candidate in (token, request.cookies.get(COOKIE, "")):
        if not candidate:
            continue
        try:
            accounts.authenticate(platform, candidate)
        except Unauthorized:
            continue
        return True
    return False


def current_operator(request: Request) -> OperatorCaller:
    """FastAPI dependency: the authenticated operator; 403 for a player, else 401."""
    token, from_cookie = request_token(request, ADMIN_COOKIE)
    caller = operators.authenticate(platform_of(request), token)
    if caller is None:
        if _is_player(request, token):
            raise Forbidden(
                "the back-office is for operators: a player's credentials do not open it"
            )
        raise Unauthorized("log in as an operator first")
    require_csrf(request, from_cookie)
    return caller
