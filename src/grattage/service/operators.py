"""Operators: the staff who run emissions and blocks, a role apart from players.

They have their own table, sessions and cookie; a player's credentials never authenticate
one. Creating an operator and logging in are written to the audit log.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from grattage.errors import InvalidInput
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


def log_in(
    platform: Platform, email: str, password: str, device: str = "", client: str = ""
) -> NewSession:
    """A new operator session. Each failure is written to the audit log
    (``operator.log_in_failed``, with the address tried and the ``client``'s, never the
    password): every failed password check (whether an operator has the address or not, so
    that the time taken tells nothing), and the first attempt of a lock-out window refused
    unchecked — the lock-out bounds the entries to a few per address and window, however
    many attempts a flood sends."""
    # Not an address at all: refused before anything is counted or checked, unrecorded (a
    # flood of those would grow the log without bound; the rate limit per client holds them).
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
        check_failed=lambda: _record_failure(platform, address, client),
        first_refusal=lambda: _record_failure(platform, address, client, "locked_out"),
    )
    token = secrets.token_urlsafe(32)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        device = credentials.log_in_succeeded(repos, counted, platform)
        repos.operators.add_session(token_hash(token), operator.id, now)
        record(
            repos,
            now,
            f"operator:{operator.email}",
            "operator.log_in",
            f"operator:{operator.id}",
            {"client": client} if client else None,
        )
    return NewSession(token, now + timedelta(seconds=platform.policy.session_idle_seconds), device)


FailureReason = Literal["unknown_operator", "wrong_password", "locked_out", "rate_limited", "busy"]


def record_refused_log_in(
    platform: Platform, email: str, client: str, reason: Literal["rate_limited", "busy"]
) -> None:
    """Audit a log-in refused before its password was checked: by the rate limit (429) or
    because every password-hashing slot was taken (503). The caller records only the first
    refusal of a window per client, so a flood adds a bounded number of entries. Such a
    refusal is not counted toward the address's lock-out: no password was tried, and counting
    it would let anyone lock an operator out by flooding from one address. A text that is not
    an e-mail address is not recorded, as in :func:`log_in`."""
    try:
        address = credentials.normalize_email(email)
    except InvalidInput:
        return
    _record_failure(platform, address, client, reason)


def _record_failure(
    platform: Platform, address: str, client: str, reason: FailureReason | None = None
) -> None:
    """One ``operator.log_in_failed`` entry, in a transaction of its own after the attempt
    was counted: the audit log's head serialises it with every other append, so concurrent
    failures extend one chain, and the lock-out's count is committed whatever happens here.
    ``reason`` None: a failed password check, unknown operator or wrong password."""
    now = platform.clock.now()
    with platform.uow.write() as repos:
        operator = repos.operators.by_email(address)
        target = "operator:unknown" if operator is None else f"operator:{operator.id}"
        if reason is None:
            reason = "unknown_operator" if operator is None else "wrong_password"
        details = {"email": address, "reason": reason, "client": client}
        record(repos, now, "anonymous", "operator.log_in_failed", target, details)


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


def log_out(platform: Platform, token: str, caller: OperatorCaller, client: str = "") -> None:
    """End the operator's session, audited (``operator.log_out``) in the same transaction;
    a session ended already (a second log-out racing the first) records nothing."""
    now = platform.clock.now()
    with platform.uow.write() as repos:
        if repos.operators.delete_session(token_hash(token)):
            details = {"client": client} if client else None
            subject = f"operator:{caller.operator_id}"
            record(repos, now, caller.actor, "operator.log_out", subject, details)
