"""The one settings object, read from the environment (prefix ``GRATTAGE_``).

Built by the entry points (app factory, CLI), never at import time, so tests pass their own.
Every default lives here and only here: the service reads its share of these values through
the :class:`grattage.service.context.Policy` protocol, which this class satisfies.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from limits import parse_many
from pydantic import AfterValidator, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from grattage.errors import InvalidInput


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _rate_limit(value: str) -> str:
    parse_many(value)  # raises ValueError, which pydantic reports, for a malformed rate
    return value


RateLimit = Annotated[str, AfterValidator(_rate_limit)]
"""A rate in the `limits` notation, e.g. ``30/minute`` or ``5/second;100/hour``."""


def one_line(error: ValidationError, prefix: str) -> InvalidInput:
    """A bad setting as a command says it: the variable and what is wrong, on one line."""
    problem = error.errors()[0]
    name = prefix + "_".join(str(part) for part in problem["loc"]).upper()
    return InvalidInput(f"{name}: {problem['msg']}")


REMOVED_SETTINGS = {
    "GRATTAGE_PURCHASE_THREADS": (
        "removed in December 2026: PostgreSQL's purchases run in lane batches, one thread per "
        "game in each worker (docs/deploy.md); unset it"
    ),
}
"""Settings that once existed: an operator who still sets one is told, not silently ignored."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GRATTAGE_", extra="ignore")

    @classmethod
    def from_environment(cls) -> Settings:
        """The settings of a command: a bad value is :class:`InvalidInput` (one line, exit 2),
        not pydantic's report; so is a setting that no longer exists."""
        for name, why in REMOVED_SETTINGS.items():
            if name in os.environ:
                raise InvalidInput(f"{name} is no longer a setting: {why}")
        try:
            return cls()
        except ValidationError as error:
            raise one_line(error, "GRATTAGE_") from None

    database_url: str = "sqlite:///var/grattage.db"
    key_dir: Path = Path("var/keys")
    disclosure_dir: Path = Path("var/disclosures")
    """Where each exhausted or closed block's disclosure is published as a file."""
    inactivity_seconds: Annotated[int, Field(ge=1)] = 10
    """A ``play`` ticket of a game that reveals after inactivity (Cash, art. 4.3) untouched
    this long is revealed and finished by the system (``Game.reveals_after_inactivity``)."""
    abandon_seconds: Annotated[int, Field(ge=1)] = 900
    """Either game: a ``play`` ticket untouched this long is finished by the system."""
    session_idle_seconds: Annotated[int, Field(ge=60)] = 3600
    lockout_threshold: Annotated[int, Field(ge=1)] = 5
    """Password checks an address gets per lock-out window (players and operators alike);
    the attempts beyond are refused unchecked until the window ends."""
    lockout_seconds: Annotated[int, Field(ge=1)] = 900
    """The lock-out window: it opens at an address's first attempt."""
    trusted_device_days: Annotated[int, Field(ge=1)] = 180
    """A device that logged in to an address is spared the address's lock, counted on its own
    counter, until it has not been used for this long."""
    password_checks_at_once: Annotated[int, Field(ge=1)] = Field(default_factory=_cores)
    """Argon2 computations (log-ins, sign-ups) one process runs at a time (default: its cores);
    each takes ``password_memory_kib`` while it runs."""
    password_wait_seconds: Annotated[float, Field(ge=0, le=60)] = 2.0
    """How long a password check waits for a slot before it answers 503 ``busy``."""
    log_in_rate_per_client: RateLimit = "30/minute"
    """Log-ins (players' and operators' together) one client address may send; then 429."""
    log_in_rate_overall: RateLimit = "1200/minute"
    sign_up_rate_per_client: RateLimit = "10/hour"
    sign_up_rate_overall: RateLimit = "300/minute"
    try_start_rate_per_client: RateLimit = "20/hour"
    """New try sessions (« Essayer gratuitement ») one client address may open."""
    try_start_rate_overall: RateLimit = "600/minute"
    try_balance_cents: Annotated[int, Field(ge=500, le=1_000_000)] = 5_000
    """The play money a try session starts with, and gets back when it is spent (a refill)."""
    try_session_hours: Annotated[int, Field(ge=1, le=24 * 30)] = 24
    """A try session lasts this long from its start, then is purged with its tickets."""
    try_session_max_tickets: Annotated[int, Field(ge=1, le=1_000_000)] = 2_000
    """The try tickets one try session may buy (a bound on what one cookie may store)."""
    rate_limit_storage: str = "memory://"
    """Where the rate limits count (a `limits` storage URI). ``memory://`` counts in each
    worker process on its own: with N workers a client may get up to N times the rates."""
    demo_deposit_max_cents: Annotated[int, Field(ge=1)] = 10_000
    password_time_cost: Annotated[int, Field(ge=1)] = 3
    password_memory_kib: Annotated[int, Field(ge=8)] = 65_536
    """Argon2id cost of a password hash; lower only for tests."""
    sweep_interval_seconds: Annotated[float, Field(gt=0)] = 1.0
    """How often the server's background sweeper looks for tickets to finish."""
    run_sweeper: bool = True
    run_sequencer: bool = True
    """Merge the transparency log's queue in the server's background loop (when no witness is
    set: the drawer merges it otherwise). ``serve`` runs ``grattage sequence`` beside its
    workers instead, and turns this off in them."""
    log_merge_interval_seconds: Annotated[float, Field(gt=0)] = 0.25
    """``grattage sequence``: how often it merges the log's queue and signs a head — how long a
    receipt waits for its place in the tree, and how few entries each merge holds the database's
    write lock for (SQLite)."""
    postgres_lock_timeout_ms: Annotated[int, Field(ge=0, le=3_600_000)] = 2_000
    """PostgreSQL: longest wait for a row lock (a block row held by a stuck transaction) before
    the request is refused with 503 ``unavailable``; 0 waits forever."""
    postgres_statement_timeout_ms: Annotated[int, Field(ge=0, le=3_600_000)] = 5_000
    """PostgreSQL: longest statement; 0 is no limit."""
    postgres_idle_in_transaction_timeout_ms: Annotated[int, Field(ge=0, le=3_600_000)] = 30_000
    """PostgreSQL: a session idle this long inside a transaction is ended by the server, its
    locks released; 0 is no limit."""
    postgres_connect_timeout_seconds: Annotated[int, Field(ge=0, le=3600)] = 3
    """PostgreSQL: longest wait for a new connection (libpq's ``connect_timeout``; 1 counts as
    2); 0 waits as long as the kernel does."""
    postgres_tcp_timeout_ms: Annotated[int, Field(ge=0, le=3_600_000)] = 5_000
    """PostgreSQL: a connection whose other end acknowledged nothing this long (a cut link, a
    host gone) is closed — on the app's side (``tcp_user_timeout`` and keepalives: the request
    is answered 503) and on the database's (the backend ends, its locks released); 0 leaves it
    to the kernel (about 15 minutes of retransmissions)."""
    max_body_bytes: Annotated[int, Field(ge=1024)] = 64 * 1024
    """Longest request body (JSON) a route takes; a longer one is refused with 413 before it is
    read whole."""
    max_table_body_bytes: Annotated[int, Field(ge=1024)] = 1024 * 1024
    """Longest body of the prize-table upload (``POST /api/admin/emissions``)."""
    request_read_timeout_seconds: Annotated[float, Field(gt=0, le=3600)] = 20.0
    """``serve``: a request whose head and body have not all arrived this long after its first
    byte (or after the connection opened) is cut off; see docs/deploy.md."""
    max_concurrent_connections: Annotated[int, Field(ge=1)] = 2048
    """``serve``: connections and requests one worker holds at once (uvicorn's
    ``limit_concurrency``); beyond, new requests are answered 503."""
    migrate_on_start: bool = True
    """Bring the schema up to date when the app starts (``serve`` does it once, before workers)."""
    secure_cookies: bool = False
    """Mark the session cookie ``Secure`` (set behind HTTPS)."""
    deposit_limit_default_cents: Annotated[int, Field(ge=1)] = 100_000
    """Responsible gaming: a player's weekly deposit limit unless they choose one (1 000 €)."""
    deposit_limit_max_cents: Annotated[int, Field(ge=1)] = 1_000_000
    """The highest weekly deposit limit a player may choose (10 000 €)."""
    stake_limit_default_cents: Annotated[int, Field(ge=1)] = 100_000
    """A player's weekly stake limit unless they choose one (1 000 €)."""
    stake_limit_max_cents: Annotated[int, Field(ge=1)] = 1_000_000
    limit_cooling_off_seconds: Annotated[int, Field(ge=0)] = 7 * 24 * 3600
    """A raised limit comes into force only after this delay (lowering is immediate)."""
    reality_check_minutes: Annotated[int, Field(ge=1)] = 60
    """Every so many minutes of a playing session, the player is shown time played and net
    spend."""
    operator_time_zone: str = "Europe/Paris"
    """The operator's time zone (IANA name): a player is 18 on their birthday there, and the
    weeks of the deposit and stake limits run from Monday 00:00 there."""
    exclusion_register_file: Path | None = None
    """The national exclusion register (France: the ANJ's « fichier des interdits de jeux »)
    as a CSV of last name, first name, birth date; re-read when it changes. None: no register
    (logged once at start)."""

    @field_validator("operator_time_zone")
    @classmethod
    def _known_time_zone(cls, name: str) -> str:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"not an IANA time zone: {name!r}") from None
        return name

    close_block_when_top_prize_sold: bool = False
    """Close a block automatically, in the sale's transaction, once every unit of its top
    prize is sold; the next pending block opens as when a block is exhausted, and the audit log
    records why. Off by default: the regulations let a block sell to its last unit."""
    job_stale_seconds: Annotated[float, Field(gt=0, le=3600)] = 30.0
    """A background job (an emission from the back office) touches its heartbeat at least five
    times within this; a running job untouched this long had its process die: marked failed."""
    witness_url: str | None = None
    """The independent witness (docs/witness.md), e.g. ``http://127.0.0.1:8700``: its beacon
    draws the units of every block created while it is set, and it cosigns the log's heads.
    Unset: new blocks are committed undrawn (sale n takes unit n), as before issue 15."""
    witness_public_key: str | None = None
    """The witness's Ed25519 public key, hex (its ``GET /witness/key``), pinned: every round and
    cosignature it answers is checked with it. Required with ``witness_url``."""
    draw_margin_ms: Annotated[int, Field(ge=0, le=60_000)] = 100
    """A drawn sale names the first beacon round at least this long after it (at most one
    period): the time its receipt has to be logged and cosigned before the round is out."""
    run_drawer: bool = True
    """Run the drawer in the server: the leader's loop that has heads cosigned and draws the
    sales of each published round (one process leads; the others stand by)."""

    @field_validator("witness_public_key")
    @classmethod
    def _witness_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise ValueError("the witness's public key is 32 bytes in hex") from None
        if len(raw) != 32:
            raise ValueError("the witness's public key is 32 bytes in hex")
        return raw.hex()


class WitnessSettings(BaseSettings):
    """The independent witness's own settings (``grattage witness …``, prefix
    ``GRATTAGE_WITNESS_``): it shares nothing with the operator's, not even a file."""

    model_config = SettingsConfigDict(env_prefix="GRATTAGE_WITNESS_", extra="ignore")

    data_dir: Path = Path("var/witness")
    """The witness's key (``witness-ed25519.key``), chain seeds (``chains/``, 0600) and its
    SQLite file (``witness.db``)."""
    beacon_seconds: Annotated[float, Field(ge=0.05, le=3600)] = 1.0
    """The beacon's period: one round every so many seconds."""
    chain_length: Annotated[int, Field(ge=1, le=100_000_000)] = 2_592_000
    """Rounds per hash chain (30 days at 1 s); a new chain follows when one is used up."""
    operator_public_key: str | None = None
    """The operator's Ed25519 public key, hex (its ``GET /api/log/key``), pinned: the witness
    cosigns only tree heads signed by it. ``serve`` refuses to start without it."""
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8700

    @field_validator("operator_public_key")
    @classmethod
    def _ed25519_public_key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise ValueError("the operator's public key is 32 bytes in hex") from None
        if len(raw) != 32:
            raise ValueError("the operator's public key is 32 bytes in hex")
        return raw.hex()
