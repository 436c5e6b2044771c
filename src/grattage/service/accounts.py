"""Players, sessions and the wallet: register, log in, authenticate, log out, deposit."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from grattage.errors import AccountLocked, InvalidInput, Unauthorized
from grattage.service import responsible
from grattage.service.context import Platform
from grattage.service.model import HOUSE_DEPOSITS, Caller, Leg

ADULT_AGE = 18
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 256
_EMAIL_CHAR = r"[^@\s\x00-\x1f\x7f]"  # no blank, no control character (NUL included)
_EMAIL = re.compile(rf"^{_EMAIL_CHAR}{{1,64}}@{_EMAIL_CHAR}+\.{_EMAIL_CHAR}+$")


@cache
def _hasher(time_cost: int, memory_kib: int) -> PasswordHasher:
    return PasswordHasher(time_cost=time_cost, memory_cost=memory_kib)


@cache
def _dummy_hash(time_cost: int, memory_kib: int) -> str:
    """Verified against when the e-mail is unknown, so a log-in takes as long either way."""
    return _hasher(time_cost, memory_kib).hash("not a password of anyone")


def _hasher_of(platform: Platform) -> PasswordHasher:
    policy = platform.policy
    return _hasher(policy.password_time_cost, policy.password_memory_kib)


_BAD_CREDENTIALS = "wrong e-mail address or password"


@dataclass(frozen=True)
class NewSession:
    token: str
    expires_at: datetime


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def normalize_email(email: str) -> str:
    cleaned = email.strip().lower()
    if len(cleaned) > 254 or not _EMAIL.match(cleaned):
        raise InvalidInput(f"not an e-mail address: {email!r}")
    return cleaned


def age_on(birth_date: date, today: date) -> int:
    before_birthday = (today.month, today.day) < (birth_date.month, birth_date.day)
    return today.year - birth_date.year - before_birthday


def register(
    platform: Platform,
    email: str,
    password: str,
    birth_date: date,
    *,
    deposit_limit_cents: int | None = None,
    stake_limit_cents: int | None = None,
) -> int:
    """A new player with an empty wallet and their weekly limits (None: the defaults);
    refuses minors and weak passwords."""
    address = normalize_email(email)
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise InvalidInput(
            f"a password has {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters"
        )
    now = platform.clock.now()
    if birth_date > now.date():
        raise InvalidInput(f"birth_date {birth_date.isoformat()!r} is in the future")
    if age_on(birth_date, now.date()) < ADULT_AGE:
        raise InvalidInput(f"players must be at least {ADULT_AGE} years old")
    responsible.check_limits_at_sign_up(platform.policy, deposit_limit_cents, stake_limit_cents)
    password_hash = _hasher_of(platform).hash(password)
    with platform.uow.write() as repos:
        player_id = repos.players.add(address, password_hash, birth_date, now)
        repos.ledger.open_player_account(player_id)
        responsible.new_player(
            repos, platform.policy, player_id, deposit_limit_cents, stake_limit_cents
        )
    return player_id


def log_in(platform: Platform, email: str, password: str) -> NewSession:
    try:
        address = normalize_email(email)
    except InvalidInput:
        raise Unauthorized(_BAD_CREDENTIALS) from None
    now = platform.clock.now()
    with platform.uow.read() as repos:
        player = repos.players.by_email(address)
    if player is None:
        policy = platform.policy
        _verify(
            platform, _dummy_hash(policy.password_time_cost, policy.password_memory_kib), password
        )
        raise Unauthorized(_BAD_CREDENTIALS)
    if player.locked_until is not None and player.locked_until > now:
        raise AccountLocked("this account is locked after repeated failed log-ins; retry later")
    if not _verify(platform, player.password_hash, password):
        with platform.uow.write() as repos:
            lock_until = now + timedelta(seconds=platform.policy.lockout_seconds)
            failed = repos.players.count_failed_login(
                player.id, platform.policy.lockout_threshold, lock_until
            )
        if failed >= platform.policy.lockout_threshold:
            raise AccountLocked("too many failed log-ins: this account is locked for a while")
        raise Unauthorized(_BAD_CREDENTIALS)
    responsible.check_log_in(platform, player.id)
    token = secrets.token_urlsafe(32)
    with platform.uow.write() as repos:
        if player.failed_logins or player.locked_until is not None:
            repos.players.clear_failed_logins(player.id)
        repos.sessions.add(token_hash(token), player.id, now)
    return NewSession(token, now + timedelta(seconds=platform.policy.session_idle_seconds))


def _verify(platform: Platform, password_hash: str, password: str) -> bool:
    try:
        return _hasher_of(platform).verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


# A session's last use is written at most this often, so reads stay reads.
_TOUCH_EVERY = timedelta(seconds=60)


def authenticate(platform: Platform, token: str) -> Caller:
    """The player behind a session token; idle sessions expire."""
    if not token:
        raise Unauthorized("log in first")
    digest = token_hash(token)
    now = platform.clock.now()
    with platform.uow.read() as repos:
        session = repos.sessions.find(digest)
    if session is None:
        raise Unauthorized("this session is unknown or has ended; log in again")
    idle = timedelta(seconds=platform.policy.session_idle_seconds)
    if now - session.last_seen_at > idle:
        with platform.uow.write() as repos:
            repos.sessions.delete(digest)
        raise Unauthorized("this session expired after inactivity; log in again")
    if now - session.last_seen_at > _TOUCH_EVERY:
        with platform.uow.write() as repos:
            repos.sessions.touch(session.id, now)
    return Caller(
        player_id=session.player_id,
        email=session.email,
        session_id=session.id,
        session_started_at=session.created_at,
        reality_checked_at=session.reality_checked_at,
    )


def log_out(platform: Platform, token: str) -> None:
    with platform.uow.write() as repos:
        repos.sessions.delete(token_hash(token))


def balance(platform: Platform, player_id: int) -> int:
    with platform.uow.read() as repos:
        return repos.ledger.player_account(player_id)[1]


def deposit(platform: Platform, player_id: int, amount_cents: int) -> int:
    """A DEMO deposit standing in for a payment provider; the new balance."""
    limit = platform.policy.demo_deposit_max_cents
    if not 0 < amount_cents <= limit:
        raise InvalidInput(f"a demo deposit is 1 to {limit} cents, got {amount_cents!r}")
    now = platform.clock.now()
    with platform.uow.write() as repos:
        responsible.check_deposit(repos, platform.policy, player_id, amount_cents, now)
        account_id, _ = repos.ledger.player_account(player_id)
        house = repos.ledger.house_account(HOUSE_DEPOSITS)
        balances = repos.ledger.post(
            "deposit",
            [Leg(account_id, amount_cents), Leg(house, -amount_cents)],
            now,
            player_id=player_id,
        )
    return balances[account_id]
