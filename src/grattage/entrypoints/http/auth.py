"""Who is calling: a bearer token (scripts) or the HttpOnly session cookie (browsers).

A cookie rides along on any request the browser makes, including a cross-site form post, so a
write authenticated by the cookie must also carry ``X-Grattage-CSRF: 1``, a header a
cross-site form cannot set.

Log-ins and sign-ups are rate-limited per client address and overall (the `limits` library,
rates in the settings): beyond a rate, 429 ``rate_limited`` with ``Retry-After``. The client
address is the one uvicorn gives the app: the peer's, or behind a proxy the one its
``X-Forwarded-For`` names when the proxy is one of uvicorn's ``FORWARDED_ALLOW_IPS``.
A successful log-in leaves a device cookie that spares the device the address's lock-out
(see :mod:`grattage.service.credentials`); it is sent only to the log-in route.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from typing import Literal

from fastapi import Request, Response
from limits import RateLimitItem, parse_many, storage, strategies

from grattage.adapters.passwords import HashingSlots
from grattage.errors import Forbidden, RateLimited
from grattage.service.accounts import authenticate
from grattage.service.context import Platform
from grattage.service.model import Caller
from grattage.settings import Settings

COOKIE = "grattage_session"
DEVICE_COOKIE = "grattage_device"
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


class RateLimits:
    """The log-in and sign-up rates of one process (or of every process sharing a storage)."""

    def __init__(self, settings: Settings) -> None:
        self._limiter = strategies.SlidingWindowCounterRateLimiter(
            storage.storage_from_string(settings.rate_limit_storage)
        )
        self._rates: dict[str, tuple[list[RateLimitItem], list[RateLimitItem]]] = {
            "log-in": (
                parse_many(settings.log_in_rate_per_client),
                parse_many(settings.log_in_rate_overall),
            ),
            "sign-up": (
                parse_many(settings.sign_up_rate_per_client),
                parse_many(settings.sign_up_rate_overall),
            ),
            "try session": (
                parse_many(settings.try_start_rate_per_client),
                parse_many(settings.try_start_rate_overall),
            ),
        }
        # What a refusal may write to the audit log: once a minute per client, 60 overall.
        self._refusals_recorded = (parse_many("1/minute"), parse_many("60/minute"))

    def first_refusal(self, action: str, client: str) -> bool:
        """Whether a refusal of ``action`` to ``client`` is the first of its minute from that
        client (and one of at most 60 a minute in all): the refusals worth an audit entry,
        however many attempts a flood sends."""
        per_client, overall = self._refusals_recorded
        key = f"{action} refused"
        return all(self._limiter.hit(rate, key, "client", client) for rate in per_client) and all(
            self._limiter.hit(rate, key, "everyone") for rate in overall
        )

    def hit(self, action: str, client: str) -> None:
        """Count one ``action`` of ``client``; RateLimited if a rate is already spent."""
        per_client, overall = self._rates[action]
        for rates, who in ((per_client, ("client", client)), (overall, ("everyone",))):
            for rate in rates:
                if not self._limiter.hit(rate, action, *who):
                    reset = self._limiter.get_window_stats(rate, action, *who).reset_time
                    scope = "from this address" if who[0] == "client" else "right now"
                    raise RateLimited(
                        f"too many {action}s {scope}; retry later",
                        retry_after_seconds=max(1, int(reset - time.time()) + 1),
                    )


_rate_limits_made = threading.Lock()


def _rate_limits(request: Request) -> RateLimits:
    state = request.app.state
    found: RateLimits | None = getattr(state, "rate_limits", None)
    if found is None:
        with _rate_limits_made:
            found = getattr(state, "rate_limits", None)
            if found is None:
                found = state.rate_limits = RateLimits(state.settings)
    return found


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def limit_log_ins(request: Request) -> None:
    """FastAPI dependency of the players' log-in route; the operators' calls it itself."""
    _rate_limits(request).hit("log-in", client_address(request))


def first_log_in_refusal(request: Request) -> bool:
    """Whether a log-in refused now (429 or 503) is the first of its minute from its client."""
    return _rate_limits(request).first_refusal("log-in", client_address(request))


async def hashing_slot(request: Request) -> AsyncIterator[None]:
    """FastAPI dependency of the routes that hash a password: wait for a slot on the event
    loop, so that a crowd of log-ins holds none of the threads purchases are served from."""
    slots: HashingSlots = request.app.state.hashing_slots
    async with slots.slot():
        yield


def limit_sign_ups(request: Request) -> None:
    """FastAPI dependency of the sign-up route."""
    _rate_limits(request).hit("sign-up", client_address(request))


def limit_try_starts(request: Request) -> None:
    """FastAPI dependency of the route that starts a try session (try_routes)."""
    _rate_limits(request).hit("try session", client_address(request))


def keep_device(request: Request, response: Response, cookie: str, path: str, device: str) -> None:
    """Leave the device token of a successful log-in in the HttpOnly cookie ``cookie``, sent
    back only to ``path`` (the log-in route) and kept as long as the device is trusted."""
    settings: Settings = request.app.state.settings
    response.set_cookie(
        cookie,
        device,
        max_age=settings.trusted_device_days * 24 * 3600,
        httponly=True,
        samesite="strict",
        secure=settings.secure_cookies,
        path=path,
    )
