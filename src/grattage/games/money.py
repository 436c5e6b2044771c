"""Money is integer euro cents; these helpers only format and parse it, never with floats."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction

from grattage.errors import InvalidInput

_NARROW_NBSP = "\u202f"


def format_euros(cents: int) -> str:
    """``50000000`` → ``'500 000 €'``; ``250`` → ``'2,50 €'`` (French style)."""
    sign = "-" if cents < 0 else ""
    euros, rest = divmod(abs(cents), 100)
    grouped = f"{euros:,}".replace(",", _NARROW_NBSP)
    if rest:
        return f"{sign}{grouped},{rest:02d} €"
    return f"{sign}{grouped} €"


_EUROS = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,2})?")
"""Plain digits (ASCII only: no exponent, no full-width digit), at most 2 decimals."""


def parse_euros(text: str) -> int:
    """``'5'``, ``'2.50'`` or ``'2,50'`` euros → cents; refuses fractions of a cent."""
    cleaned = text.strip().replace(",", ".").replace(" ", "").replace(_NARROW_NBSP, "")
    if _EUROS.fullmatch(cleaned) is None:
        raise InvalidInput(f"not an amount in euros (digits, at most 2 decimals): {text[:40]!r}")
    return int(Decimal(cleaned) * 100)


def format_ratio(value: Fraction, places: int = 2) -> str:
    """An exact ratio rounded for display (``Fraction(383, 100)`` → ``'3.83'``)."""
    quantum = Decimal(1).scaleb(-places)
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return str(exact.quantize(quantum, rounding=ROUND_HALF_EVEN))


def format_percent(value: Fraction, places: int = 3) -> str:
    """``Fraction(3, 4)`` → ``'75.000'`` (a percentage, exact up to rounding for display)."""
    return format_ratio(value * 100, places)
