"""What players' and operators' log-ins share: passwords, session tokens, the lock-out policy.

Passwords are hashed behind the :class:`~grattage.service.ports.PasswordHasher` port; a
session token is kept only as its SHA-256 (a stolen table opens no session); after
``lockout_threshold`` failed log-ins in a row the account is locked for ``lockout_seconds``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from grattage.errors import InvalidInput, Unauthorized
from grattage.service.context import Platform, Policy
from grattage.service.ports import FailedLogIns, PasswordHasher

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256
_EMAIL_CHAR = r"[^@\s\x00-\x1f\x7f]"  # no blank, no control character (NUL included)
_EMAIL = re.compile(rf"^{_EMAIL_CHAR}{{1,64}}@{_EMAIL_CHAR}+\.{_EMAIL_CHAR}+$")


@dataclass(frozen=True)
class NewSession:
    token: str
    expires_at: datetime


def normalize_email(email: str) -> str:
    cleaned = email.strip().lower()
    if len(cleaned) > 254 or not _EMAIL.match(cleaned):
        raise InvalidInput(f"not an e-mail address: {email!r}")
    return cleaned


def log_in_address(email: str, bad_credentials: str) -> str:
    """The address to look up; a malformed one is only wrong credentials (Unauthorized)."""
    try:
        return normalize_email(email)
    except InvalidInput:
        raise Unauthorized(bad_credentials) from None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_password_length(password: str) -> None:
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise InvalidInput(
            f"a password has {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters"
        )


_dummy_hashes: dict[PasswordHasher, str] = {}


def _dummy_hash(passwords: PasswordHasher) -> str:
    """A hash made once per hasher (at its cost) and never matched by anyone's password."""
    found = _dummy_hashes.get(passwords)
    if found is None:
        found = _dummy_hashes.setdefault(passwords, passwords.hash("not a password of anyone"))
    return found


def verify_password(platform: Platform, password_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches; with no account (``None``) it is checked against a dummy
    hash all the same, so that a log-in takes as long whether the e-mail is known or not."""
    if password_hash is None:
        platform.passwords.verify(_dummy_hash(platform.passwords), password)
        return False
    return platform.passwords.verify(password_hash, password)


def count_failed_log_in(
    failures: FailedLogIns, account_id: int, policy: Policy, now: datetime
) -> tuple[int, bool]:
    """Count a failed log-in; lock the account at the policy's threshold in a row.

    (failed log-ins in a row, whether the account is now locked)."""
    failed = failures.count_failed_log_in(account_id)
    locked = failed >= policy.lockout_threshold
    if locked:
        failures.lock(account_id, now + timedelta(seconds=policy.lockout_seconds))
    return failed, locked


def is_locked(locked_until: datetime | None, now: datetime) -> bool:
    return locked_until is not None and locked_until > now
