"""Operators: the staff who run emissions and blocks, a role apart from players.

They have their own table, sessions and cookie; a player's credentials never authenticate
one. Creating an operator and logging in are written to the audit log.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from grattage.service import credentials
from grattage.service.audit_trail import record
from grattage.service.context import Platform
from grattage.service.credentials import NewSession, token_hash

_BAD_CREDENTIALS = "wrong operator e-mail address or password"
_TOUCH_EVERY = timedelta(seconds=60)


@dataclass(frozen=True)
class OperatorCaller:
    operator_id: int
    email: str

    @property
    def actor(self) -> str:
        """How the audit log names this operator."""
        return f"operator:{self.email}"


def create(platform: Platform, email: str, password: str, actor: str = "cli") -> int:
    address = credentials.normalize_email(email)
    credentials.check_password_length(password)
    password_hash = platform.passwords.hash(password)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        operator_id = repos.operators.add(address, password_hash, now)
        record(repos, now, actor, "operator.create", f"operator:{operator_id}", {"email": address})
    return operator_id


def log_in(platform: Platform, email: str, password: str, device: str = "") -> NewSession:
    """A new operator session; every refused password check is written to the audit log
    (whether an operator has the address or not, so that the time taken tells nothing)."""
    address = credentials.log_in_address(email, _BAD_CREDENTIALS)
    operator, counted = credentials.checked_log_in(
        platform,
        "operator",
        address,
        password,
        device,
        lambda repos: repos.operators.by_email(address),
        lambda operator: operator.password_hash,
        _BAD_CREDENTIALS,
        check_failed=lambda: _record_failure(platform, address),
    )
    token = secrets.token_urlsafe(32)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        device = credentials.log_in_succeeded(repos, counted, platform)
        repos.operators.add_session(token_hash(token), operator.id, now)
        record(
            repos, now, f"operator:{operator.email}", "operator.log_in", f"operator:{operator.id}"
        )
    return NewSession(token, now + timedelta(seconds=platform.policy.session_idle_seconds), device)


def _record_failure(platform: Platform, address: str) -> None:
    now = platform.clock.now()
    with platform.uow.write() as repos:
        operator = repos.operators.by_email(address)
        target = "operator:unknown" if operator is None else f"operator:{operator.id}"
        record(repos, now, "anonymous", "operator.log_in_failed", target, {"email": address})


def authenticate(platform: Platform, token: str) -> OperatorCaller | None:
    """The operator behind a token, or None (not an operator's live session)."""
    if not token:
        return None
    digest = token_hash(token)
    now = platform.clock.now()
    with platform.uow.read() as repos:
        session = repos.operators.find_session(digest)
    if session is None:
        return None
    if now - session.last_seen_at > timedelta(seconds=platform.policy.session_idle_seconds):
        with platform.uow.write() as repos:
            repos.operators.delete_session(digest)
        return None
    if now - session.last_seen_at > _TOUCH_EVERY:
        with platform.uow.write() as repos:
            repos.operators.touch_session(session.id, now)
    return OperatorCaller(session.operator_id, session.email)


def log_out(platform: Platform, token: str) -> None:
    with platform.uow.write() as repos:
        repos.operators.delete_session(token_hash(token))
