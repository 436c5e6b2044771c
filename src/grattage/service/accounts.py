"""Players, sessions and the wallet: register, log in, authenticate, log out, deposit."""

from __future__ import annotations

import secrets
from datetime import date, timedelta
from zoneinfo import ZoneInfo

from grattage.errors import InvalidInput, Unauthorized
from grattage.service import identity, person_exclusion, responsible, suspensions
from grattage.service.context import Platform
from grattage.service.credentials import (
    NewSession,
    check_password_length,
    checked_log_in,
    log_in_address,
    log_in_succeeded,
    normalize_email,
    token_hash,
)
from grattage.service.identity import canonical_email
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
    "operator_today",
    "register",
]

ADULT_AGE = 18
_BAD_CREDENTIALS = "wrong e-mail address or password"


def age_on(birth_date: date, today: date) -> int:
    before_birthday = (today.month, today.day) < (birth_date.month, birth_date.day)
    return today.year - birth_date.year - before_birthday


def operator_today(platform: Platform) -> date:
    """Today's date where the operator is: a player turns 18 on their birthday there."""
    zone = ZoneInfo(platform.policy.operator_time_zone)
    return platform.clock.now().astimezone(zone).date()


def register(
    platform: Platform,
    email: str,
    password: str,
    birth_date: date,
    *,
    first_name: str,
    last_name: str,
    deposit_limit_cents: int | None = None,
    stake_limit_cents: int | None = None,
) -> int:
    """A new player with an empty wallet and their weekly limits (None: the defaults);
    refuses minors, weak passwords, and a person or mailbox excluded from play."""
    address = canonical_email(email)
    who = identity.person(first_name, last_name, birth_date)
    check_password_length(password)
    now = platform.clock.now()
    today = operator_today(platform)
    identity.check_birth_date(birth_date, today)
    if age_on(birth_date, today) < ADULT_AGE:
        raise InvalidInput(f"players must be at least {ADULT_AGE} years old")
    responsible.check_limits_at_sign_up(platform.policy, deposit_limit_cents, stake_limit_cents)
    # Both orders: names typed in each other's field are still the same person.
    person_exclusion.refuse_if_listed(platform, who.key)
    person_exclusion.refuse_if_listed(platform, who.swapped_key)
    password_hash = platform.passwords.hash(password)
    with platform.uow.write() as repos:
        person_exclusion.refuse_excluded_identity(
            repos, address.mailbox_key, [who.key, who.swapped_key], now
        )
        player_id = repos.players.add(address.address, password_hash, birth_date, now)
        repos.identities.add(player_id, address.mailbox_key, who.key, who.first_name, who.last_name)
        repos.ledger.open_player_account(player_id)
        responsible.new_player(
            repos, platform.policy, player_id, deposit_limit_cents, stake_limit_cents
        )
    return player_id


def log_in(platform: Platform, email: str, password: str, device: str = "") -> NewSession:
    """A new session for the player with this address and password; ``device`` is the token
    of a device that logged in before (see :mod:`grattage.service.credentials`)."""
    address = log_in_address(email, _BAD_CREDENTIALS)
    player, counted = checked_log_in(
        platform,
        "player",
        address,
        password,
        device,
        lambda repos: repos.players.by_email(address),
        lambda player: player.password_hash,
        _BAD_CREDENTIALS,
    )
    responsible.check_log_in(platform, player.id)
    token = secrets.token_urlsafe(32)
    now = platform.clock.now()
    with platform.uow.write() as repos:
        # Under the wallet's lock, as a suspension closes the sessions: none opens after it.
        suspensions.lock_wallet(repos, player.id)
        suspensions.refuse_if_suspended(repos, player.id)
        device = log_in_succeeded(repos, counted, platform)
        repos.sessions.add(token_hash(token), player.id, now)
    expires_at = now + timedelta(seconds=platform.policy.session_idle_seconds)
    return NewSession(token, expires_at, device)


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
        account_id = suspensions.lock_wallet(repos, player_id)
        suspensions.refuse_if_suspended(repos, player_id)
        responsible.check_deposit(repos, platform.policy, player_id, amount_cents, now)
        house = repos.ledger.house_account(HOUSE_DEPOSITS)
        legs = [Leg(account_id, amount_cents), Leg(house, -amount_cents)]
        balances = repos.ledger.post(Movement("deposit", legs, now, player_id))
    return balances[account_id]
