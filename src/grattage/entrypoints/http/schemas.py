"""Request bodies of the API; its answers are in :mod:`grattage.entrypoints.http.answers`."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _iso_date_text(value: object) -> object:
    """Only the ISO text YYYY-MM-DD: pydantic would also take a Unix time (0, "631152000")
    or a datetime, which are no way to write a birth date."""
    if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
        raise ValueError("a date is the text YYYY-MM-DD")
    return value


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
IsoDate = Annotated[date, BeforeValidator(_iso_date_text)]


class RegisterBody(Body):
    email: StrictStr = Field(max_length=320)
    password: StrictStr = Field(max_length=256)
    first_name: StrictStr = Field(max_length=100)
    last_name: StrictStr = Field(max_length=100)
    birth_date: IsoDate
    """From 1900-01-01 to today in the operator's time zone; 18 years old at least."""
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
    client_seed: StrictStr | None = Field(default=None, max_length=64)
    """Optional: 1 to 32 bytes in lowercase hex, put in the receipt (a drawn block's draw
    hashes it with the rest of the receipt)."""


class RevealBody(Body):
    zones: list[StrictStr] | None = Field(default=None, max_length=64)
    all: StrictBool = False
    inactivity: StrictBool = False
    """With ``all``: the page's inactivity timer reveals the rest (``finished_by`` inactivity)."""


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


class ReasonBody(Body):
    reason: StrictStr = Field(max_length=2000)
    """Why (3 to 500 characters once trimmed): recorded in the audit log."""
