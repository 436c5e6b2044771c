"""What players' and operators' log-ins share: passwords, session tokens, the lock-out policy.

Passwords are hashed behind the :class:`~grattage.service.tool_ports.PasswordHasher` port; a
session token is kept only as its SHA-256 (a stolen table opens no session).

The lock-out counts an attempt, and commits the count, *before* it checks the password: an
address gets at most ``lockout_threshold`` password checks per window of ``lockout_seconds``
(the window opens at its first attempt), however many attempts arrive at once, in however
many processes. The rest are refused unchecked, the right password too. Addresses are counted
whether or not an account has them, and an unknown one is checked against a dummy hash, so
neither the answer nor its timing tells who has an account.

A device that logged in to the address before (its device token, kept by the browser in a
cookie) is counted on its own counter instead, with the same threshold: whoever hammers an
address from elsewhere locks out only new devices, never the owner's.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeVar

from grattage.errors import AccountLocked, InvalidInput, Unauthorized
from grattage.service.context import Platform
from grattage.service.identity import canonical_email
from grattage.service.ports import Repositories
from grattage.service.tool_ports import PasswordHasher

MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256


@dataclass(frozen=True)
class NewSession:
    token: str
    expires_at: datetime
    device: str = ""
    """The device token to keep (in a cookie): it spares this device the address's lock."""


def normalize_email(email: str) -> str:
    """The address as stored (:func:`grattage.service.identity.canonical_email`)."""
    return canonical_email(email).address


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


Role = Literal["player", "operator"]
A = TypeVar("A")

_DEVICE_TOKEN = re.compile(r"^[A-Za-z0-9_-]{43}$")  # secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Counted:
    """Which counter a checked log-in attempt was counted on."""

    role: Role
    address: str
    device: str
    """The device token sent, if it has the form of one, else ``""``."""
    on_device: bool
    """Whether the attempt was counted on the device's counter (a device trusted before)."""


def _device_scope(role: Role) -> str:
    return f"{role}-device"


def _device_subject(role: Role, address: str, device: str) -> str:
    return hashlib.sha256(f"{role}\0{address}\0{device}".encode()).hexdigest()


def checked_log_in(
    platform: Platform,
    role: Role,
    address: str,
    password: str,
    device: str,
    find: Callable[[Repositories], A | None],
    password_hash: Callable[[A], str],
    bad_credentials: str,
    check_failed: Callable[[], None] | None = None,
    first_refusal: Callable[[], None] | None = None,
) -> tuple[A, Counted]:
    """The account at ``address`` (found by ``find``) if ``password`` is its password; the
    attempt counted first, and refused unchecked beyond the threshold.

    Raises Unauthorized (wrong address or password) or AccountLocked (too many attempts on
    this counter in its window), the same way whether the address has an account or not;
    ``check_failed`` runs after each password check that failed (not after a refusal), and
    ``first_refusal`` before the first attempt of a window refused unchecked (the count is
    atomic: one attempt is the first, however many arrive at once)."""
    policy = platform.policy
    window = policy.lockout_seconds
    now = platform.clock.now()
    device = device if _DEVICE_TOKEN.match(device) else ""
    with platform.uow.write() as repos:
        account = find(repos)
        counted = None
        if device:
            counted = repos.login_attempts.count_if_present(
                _device_scope(role), _device_subject(role, address, device), now, window
            )
        on_device = counted is not None
        if counted is None:
            counted = repos.login_attempts.count(role, address, now, window)
    attempts, window_start = counted
    retry_after = max(1, int((window_start + timedelta(seconds=window) - now).total_seconds()))
    locked = AccountLocked(
        "too many log-in attempts for this address from this device; retry later",
        retry_after_seconds=retry_after,
    )
    if attempts > policy.lockout_threshold:
        if attempts == policy.lockout_threshold + 1 and first_refusal is not None:
            first_refusal()
        raise locked
    known_hash = None if account is None else password_hash(account)
    right = verify_password(platform, known_hash, password)  # a dummy check for no account
    if account is None or not right:
        if check_failed is not None:
            check_failed()
        if attempts == policy.lockout_threshold:
            raise locked
        raise Unauthorized(bad_credentials)
    return account, Counted(role, address, device, on_device)


def log_in_succeeded(repos: Repositories, counted: Counted, platform: Platform) -> str:
    """Start the counter of a successful attempt over, trust its device for the address, and
    drop the counters whose windows have passed; the device token to keep."""
    now = platform.clock.now()
    attempts = repos.login_attempts
    role, address = counted.role, counted.address
    if not counted.on_device:
        attempts.forget(role, address)
    device = counted.device or secrets.token_urlsafe(32)
    attempts.start_over(_device_scope(role), _device_subject(role, address, device), now)
    attempts.forget_older(
        {
            role: now - timedelta(seconds=platform.policy.lockout_seconds),
            _device_scope(role): now - timedelta(days=platform.policy.trusted_device_days),
        }
    )
    return device
