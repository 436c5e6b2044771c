"""Request bodies of the API; its answers are in :mod:`grattage.entrypoints.http.answers`."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RegisterBody(Body):
    email: StrictStr = Field(max_length=254)
    password: StrictStr = Field(max_length=256)
    birth_date: date
    deposit_weekly_cents: StrictInt | None = Field(default=None, ge=-(2**62), le=2**62)
    stake_weekly_cents: StrictInt | None = Field(default=None, ge=-(2**62), le=2**62)


class LoginBody(Body):
    email: StrictStr = Field(max_length=254)
    password: StrictStr = Field(max_length=256)


class DepositBody(Body):
    amount_cents: StrictInt = Field(ge=-(2**62), le=2**62)


class BuyBody(Body):
    mode: StrictStr = Field(max_length=16)
    sign: StrictStr | None = Field(default=None, max_length=32)


class RevealBody(Body):
    zones: list[StrictStr] | None = Field(default=None, max_length=64)
    all: StrictBool = False


class LimitsBody(Body):
    deposit_weekly_cents: StrictInt | None = Field(default=None, ge=-(2**62), le=2**62)
    stake_weekly_cents: StrictInt | None = Field(default=None, ge=-(2**62), le=2**62)


class ExclusionBody(Body):
    period: StrictStr = Field(max_length=16)


class EmissionBody(Body):
    game: StrictStr = Field(max_length=32)
    blocks: StrictInt = Field(ge=-(2**31), le=2**31)
    prize_table: StrictStr | None = Field(default=None, max_length=1_000_000)
    """The text of a prize-table file (TOML), as the page reads it from the chosen file."""
    prize_table_name: StrictStr | None = Field(default=None, max_length=200)
