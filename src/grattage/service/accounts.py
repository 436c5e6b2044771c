"""Players, sessions and the wallet: register, log in, authenticate, log out, deposit."""

from __future__ import annotations

import secrets
from datetime import date, timedelta

from grattage.errors import AccountLocked, InvalidInput, Unauthorized
from grattage.service import responsible
from grattage.service.context import Platform
from grattage.service.credentials import (
    NewSession,
    check_password_length,
    count_failed_log_in,
    is_locked,
    log_in_address,
    normalize_email,
    token_hash,
    verify_password,
)
from grattage.service.model import HOUSE_DEPOSITS, Caller, Leg, Movement

__all__ = [
    "ADULT_AGE",
    "age_on",
    "authenticate",
    "balance",
    "deposit",
    "log_in",
    "log_out",
    "normalize_email",  # from credentials: the routes echo an address as it is stored
    "register",
]

ADULT_AGE = 18
_BAD_CREDENTIALS = "wrong e-mail address or password"


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
    check_password_length(password)
    now = platform.clock.now()
    if birth_date > now.date():
        raise InvalidInput(f"birth_date {birth_date.isoformat()!r} is in the future")
    if age_on(birth_date, now.date()) < ADULT_AGE:
        raise InvalidInput(f"players must be at least {ADULT_AGE} years old")
    responsible.check_limits_at_sign_up(platform.policy, deposit_limit_cents, stake_limit_cents)
    password_hash = platform.passwords.hash(password)
    with platform.uow.write() as repos:
        player_id = repos.players.add(address, password_hash, birth_date, now)
        repos.ledger.open_player_account(player_id)
        responsible.new_player(
            repos, platform.policy, player_id, deposit_limit_cents, stake_limit_cents
        )
    return player_id


def log_in(platform: Platform, email: str, password: str) -> NewSession:
    address = log_in_address(email, _BAD_CREDENTIALS)
    now = platform.clock.now()
    with platform.uow.read() as repos:
        player = repos.players.by_email(address)
    if player is None:
        verify_password(platform, None, password)
        raise Unauthorized(_BAD_CREDENTIALS)
    if is_locked(player.locked_until, now):
        raise AccountLocked("this account is locked after repeated failed log-ins; retry later")
    if not verify_password(platform, player.password_hash, password):
        with platform.uow.write() as repos:
            _, locked = count_failed_log_in(repos.players, player.id, platform.policy, now)
        if locked:
            raise AccountLocked("too many failed log-ins: this account is locked for a while")
        raise Unauthorized(_BAD_CREDENTIALS)
    responsible.check_log_in(platform, player.id)
    token = secrets.token_urlsafe(32)
    with platform.uow.write() as repos:
        if player.failed_logins or player.locked_until is not None:
            repos.players.clear_failed_log_ins(player.id)
        repos.sessions.add(token_hash(token), player.id, now)
    return NewSession(token, now + timedelta(seconds=platform.policy.session_idle_seconds))


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
        legs = [Leg(account_id, amount_cents), Leg(house, -amount_cents)]
        balances = repos.ledger.post(Movement("deposit", legs, now, player_id))
    return balances[account_id]
