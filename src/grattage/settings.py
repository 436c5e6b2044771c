"""The one settings object, read from the environment (prefix ``GRATTAGE_``).

Built by the entry points (app factory, CLI), never at import time, so tests pass their own.
Every default lives here and only here: the service reads its share of these values through
the :class:`grattage.service.context.Policy` protocol, which this class satisfies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GRATTAGE_", extra="ignore")

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
    """Failed log-ins in a row that lock an account."""
    lockout_seconds: Annotated[int, Field(ge=1)] = 900
    demo_deposit_max_cents: Annotated[int, Field(ge=1)] = 10_000
    password_time_cost: Annotated[int, Field(ge=1)] = 3
    password_memory_kib: Annotated[int, Field(ge=8)] = 65_536
    """Argon2id cost of a password hash; lower only for tests."""
    sweep_interval_seconds: Annotated[float, Field(gt=0)] = 1.0
    """How often the server's background sweeper looks for tickets to finish."""
    run_sweeper: bool = True
    purchase_threads: Annotated[int, Field(ge=1, le=64)] = 4
    """PostgreSQL: threads per worker that run purchases. Few beat many: a purchase holds its
    block's row until it commits, and a crowd of threads waiting for the GIL stretched that
    hold (4 threads: 400 plays/s, p99 130 ms; FastAPI's 40: 256/s, p99 484 ms). Raise it when
    the database is far away and each statement waits longer on the network."""
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
