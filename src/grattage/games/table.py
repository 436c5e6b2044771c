"""Prize tables as values: what a block pays, tier by tier, and at what price.

A table is read from a TOML file (the packaged ones live in ``grattage/games/tables``) and checked
three times: here for its shape and bounds (types, counts, sizes, lengths — what keeps every later
step from crashing), here again for the rules of a table sold to players (:func:`check_sellable`:
a price, a payout under 100 %), then by its game for whether the game can *dress* every prize.
docs/games.md, "The table file", gives every key, its bounds and the refusals.

File format::

    game = "astro"                       # which game the table is for
    title = "…"                          # shown to players: the lobby, the game page
    price_cents = 200                    # the price of one ticket, in cents
    source = "…"                         # where the figures come from
    reconstruction = true                # the figures are ours, not the published ones
    block_size = 750000                  # units in one block
    amounts_cents = [...]                # optional (Cash): amounts a star may show
    [[tiers]]                            # one per prize amount, largest first
    prize_cents = 1600000
    count = 1
    shows = [{gain_cents = 800000, multiplier = 2}]   # optional (Astro): the only ways to show it

Tier ``0`` is the losing tier; the file's tiers are numbered ``1..n`` in order.

An operator's file comes in as bytes (:func:`parse_prize_table_bytes`, the CLI's ``--prize-table``
and the back office): price and title are required and every sellable rule applies.
:func:`parse_prize_table` reads text written in code or before tables had a price (tests, golden
fixtures): there ``price_cents`` defaults to the game's :data:`LEGACY_PRICES_CENTS` and the
title to the game's name.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from grattage.errors import InvalidPrizeTable
from grattage.games.money import format_euros, format_percent
from grattage.games.table_limits import (
    LEGACY_PRICES_CENTS,
    MAX_AMOUNTS,
    MAX_BLOCK_UNITS,
    MAX_INT64,
    MAX_PRICE_CENTS,
    MAX_SHOWS,
    MAX_SOURCE_CHARS,
    MAX_TIERS,
    MAX_TITLE_CHARS,
    MAX_UNITS_REASON,
    bad_text,
    check_totals,
    decode_table_bytes,
    int_within,
    nested_deeper_than,
    one_line,
    shown,
)

__all__ = [
    "LEGACY_PRICES_CENTS",
    "MAX_BLOCK_UNITS",
    "MAX_TIERS",
    "PrizeTable",
    "Show",
    "Tier",
    "check_sellable",
    "parse_prize_table",
    "parse_prize_table_bytes",
    "table_from_dict",
]

Show = tuple[int, int | None]
"""How an Astro prize may appear: (Gain amount in cents, banner multiplier or None)."""


@dataclass(frozen=True)
class Tier:
    index: int
    prize_cents: int
    count: int
    shows: tuple[Show, ...] = ()


@dataclass(frozen=True)
class PrizeTable:
    game: str
    title: str
    source: str
    reconstruction: bool
    block_size: int
    tiers: tuple[Tier, ...]
    price_cents: int
    amounts_cents: tuple[int, ...] = ()
    multiple: int = field(default=1)

    @property
    def prizes_count(self) -> int:
        return sum(tier.count for tier in self.tiers)

    @property
    def prizes_total_cents(self) -> int:
        return sum(tier.count * tier.prize_cents for tier in self.tiers)

    @property
    def stakes_cents(self) -> int:
        """What selling the whole block takes in."""
        return self.block_size * self.price_cents

    @property
    def losing_count(self) -> int:
        return self.block_size - self.prizes_count

    def counts_by_tier(self) -> list[int]:
        """Expected units per tier index, the losing tier first."""
        return [self.losing_count, *(tier.count for tier in self.tiers)]

    def odds(self) -> Fraction:
        """X in "1 in X": units per winning unit."""
        return Fraction(self.block_size, self.prizes_count)

    def payout(self) -> Fraction:
        """Share of the block's stakes, at the table's own price, paid back as prizes."""
        return Fraction(self.prizes_total_cents, self.stakes_cents)

    def tier_for_prize(self, prize_cents: int) -> Tier | None:
        for tier in self.tiers:
            if tier.prize_cents == prize_cents:
                return tier
        return None

    def prize_of_tier(self, index: int) -> int:
        return 0 if index == 0 else self.tiers[index - 1].prize_cents

    def scaled(self, multiple: int) -> PrizeTable:
        """The table of a block ``multiple`` times the size (Astro's "blocs multiples")."""
        most = min(MAX_BLOCK_UNITS // self.block_size, MAX_INT64 // max(1, self.prizes_total_cents))
        if not 1 <= multiple <= most:
            raise InvalidPrizeTable(
                f"a block multiple is 1 to {most:,} (at most {MAX_BLOCK_UNITS:,} units, "
                f"prizes within 2^63 - 1 cents), got {shown(multiple)}"
            )
        return replace(
            self,
            block_size=self.block_size * multiple,
            tiers=tuple(replace(t, count=t.count * multiple) for t in self.tiers),
            multiple=self.multiple * multiple,
        )

    def to_dict(self) -> dict[str, Any]:
        """The table as block headers, databases and proofs store it.

        ``price_cents`` is left out when it is the game's price from before tables had one
        (:data:`LEGACY_PRICES_CENTS`): a table of that era, reloaded, then gives back exactly the
        dict, hence the digest, it was committed with (docs/fairness.md, ``table_sha256``)."""
        data: dict[str, Any] = {
            "game": self.game,
            "title": self.title,
            "source": self.source,
            "reconstruction": self.reconstruction,
            "block_size": self.block_size,
            "multiple": self.multiple,
            "amounts_cents": list(self.amounts_cents),
            "tiers": [
                {
                    "index": t.index,
                    "prize_cents": t.prize_cents,
                    "count": t.count,
                    "shows": [{"gain_cents": g, "multiplier": m} for g, m in t.shows],
                }
                for t in self.tiers
            ],
        }
        if self.price_cents != LEGACY_PRICES_CENTS.get(self.game):
            data["price_cents"] = self.price_cents
        return data

    def digest(self) -> str:
        """SHA-256 of the table's canonical JSON: the identity a block and a proof refer to."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def table_from_dict(data: dict[str, Any]) -> PrizeTable:
    """Rebuild a table from :meth:`PrizeTable.to_dict` (block headers, databases, proofs).

    A dict without ``price_cents`` is a table of its game's legacy price."""
    try:
        price = data["price_cents"] if "price_cents" in data else LEGACY_PRICES_CENTS[data["game"]]
        if not int_within(price, 1, MAX_PRICE_CENTS):
            raise InvalidPrizeTable(f"malformed prize table: price_cents {shown(price)}")
        return PrizeTable(
            game=data["game"],
            title=data["title"],
            source=data["source"],
            reconstruction=data["reconstruction"],
            block_size=data["block_size"],
            price_cents=price,
            multiple=data.get("multiple", 1),
            amounts_cents=tuple(data.get("amounts_cents", ())),
            tiers=tuple(
                Tier(
                    index=t["index"],
                    prize_cents=t["prize_cents"],
                    count=t["count"],
                    shows=tuple((s["gain_cents"], s["multiplier"]) for s in t["shows"]),
                )
                for t in data["tiers"]
            ),
        )
    except (KeyError, TypeError) as exc:
        raise InvalidPrizeTable(
            f"malformed prize table: missing or wrong field {one_line(str(exc))}"
        ) from None


_TOP_KEYS = {
    "game",
    "title",
    "price_cents",
    "source",
    "reconstruction",
    "block_size",
    "amounts_cents",
    "tiers",
}
_TIER_KEYS = {"prize_cents", "count", "shows"}
_SHOW_KEYS = {"gain_cents", "multiplier"}


def parse_prize_table_bytes(data: bytes, source_name: str = "<table>") -> PrizeTable:
    """An operator's table file, as raw bytes: a table that keeps every rule, or one line.

    Whatever the bytes, the only exception is :class:`~grattage.errors.InvalidPrizeTable`, its
    message starting with ``source_name``; the game still checks it can dress the prizes."""
    where = one_line(source_name)
    table = _parse(decode_table_bytes(data, where), where, operator=True)
    check_sellable(table, where)
    return table


def parse_prize_table(text: str, source_name: str = "<table>") -> PrizeTable:
    """Text written in code or before tables had a price: shape and bounds checked, the price
    defaulting to the game's legacy one, the title to the game's name (see the module doc)."""
    return _parse(text, one_line(source_name), operator=False)


def check_sellable(table: PrizeTable, where: str = "<table>") -> None:
    """The rules of a table sold to players: a payout under 100 %, exactly, at its own price."""
    if table.prizes_total_cents >= table.stakes_cents:
        raise InvalidPrizeTable(
            f"{where}: the payout is {format_percent(table.payout())} %, and must stay under "
            f"100 %: the prizes ({format_euros(table.prizes_total_cents)}) reach the block's "
            f"stakes ({table.block_size:,} units × {format_euros(table.price_cents)})"
        )


def _parse(text: str, where: str, *, operator: bool) -> PrizeTable:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidPrizeTable(f"{where}: not valid TOML: {one_line(str(exc))}") from None
    except RecursionError:
        raise InvalidPrizeTable(f"{where}: arrays or tables nested too deeply") from None
    except ValueError as exc:  # an integer of more digits than Python converts (4 300)
        if "int_max_str_digits" in str(exc) or "integer string conversion" in str(exc):
            raise InvalidPrizeTable(
                f"{where}: an integer of more than 19 digits (the largest allowed is 2⁶³ − 1)"
            ) from None
        raise InvalidPrizeTable(
            f"{where}: not a readable TOML value: {one_line(str(exc))}"
        ) from None
    if nested_deeper_than(data):
        raise InvalidPrizeTable(f"{where}: arrays or tables nested too deeply")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise InvalidPrizeTable(f"{where}: unknown keys {shown(sorted(unknown))}")
    game = data.get("game")
    if not isinstance(game, str) or bad_text(game, 32) is not None:
        raise InvalidPrizeTable(f"{where}: 'game' must name a game, got {shown(game)}")
    block_size = data.get("block_size")
    if not int_within(block_size, 1, MAX_BLOCK_UNITS):
        raise InvalidPrizeTable(
            f"{where}: block_size is 1 to {MAX_BLOCK_UNITS:,} units ({MAX_UNITS_REASON}), "
            f"got {shown(block_size)}"
        )
    assert isinstance(block_size, int)
    price = _price(data, game, where, required=operator)
    title = _text(data, "title", MAX_TITLE_CHARS, where, default=None if operator else game)
    source = _text(data, "source", MAX_SOURCE_CHARS, where, default="")
    reconstruction = data.get("reconstruction", False)
    if not isinstance(reconstruction, bool):
        raise InvalidPrizeTable(
            f"{where}: reconstruction must be true or false, got {shown(reconstruction)}"
        )
    amounts = data.get("amounts_cents", [])
    if (
        not isinstance(amounts, list)
        or len(amounts) > MAX_AMOUNTS
        or not all(int_within(a, 1, MAX_INT64) for a in amounts)
    ):
        raise InvalidPrizeTable(
            f"{where}: amounts_cents must be a list of at most {MAX_AMOUNTS} integers "
            f"from 1 to 2^63 - 1, got {shown(amounts)}"
        )
    raw_tiers = data.get("tiers")
    if not isinstance(raw_tiers, list) or not raw_tiers:
        raise InvalidPrizeTable(f"{where}: needs at least one [[tiers]] row")
    if len(raw_tiers) > MAX_TIERS:
        raise InvalidPrizeTable(f"{where}: at most {MAX_TIERS} tiers, got {len(raw_tiers)}")
    tiers = tuple(
        _parse_tier(index, raw, block_size, where) for index, raw in enumerate(raw_tiers, start=1)
    )
    check_totals(tiers, block_size, where)
    return PrizeTable(
        game=game,
        title=title,
        source=source,
        reconstruction=reconstruction,
        block_size=block_size,
        price_cents=price,
        tiers=tiers,
        amounts_cents=tuple(sorted(set(amounts), reverse=True)),
    )


def _price(data: dict[str, Any], game: str, where: str, *, required: bool) -> int:
    price = data.get("price_cents")
    if price is None and not required and game in LEGACY_PRICES_CENTS:
        return LEGACY_PRICES_CENTS[game]
    if not int_within(price, 1, MAX_PRICE_CENTS):
        raise InvalidPrizeTable(
            f"{where}: price_cents, the price of one ticket in cents (500 for 5 €), is 1 to "
            f"{MAX_PRICE_CENTS:,} ({format_euros(MAX_PRICE_CENTS)}), got {shown(price)}"
        )
    assert isinstance(price, int)
    return price


def _text(data: dict[str, Any], key: str, most: int, where: str, default: str | None) -> str:
    value = data.get(key, default)
    if value is None:
        raise InvalidPrizeTable(f"{where}: {key} is required (at most {most} characters)")
    problem = (
        "is not text"
        if not isinstance(value, str)
        else bad_text(value, most, may_be_empty=default == "")
    )
    if problem is not None:
        raise InvalidPrizeTable(f"{where}: {key} {problem}, got {shown(value)}")
    assert isinstance(value, str)
    return value


def _parse_tier(index: int, raw: object, block_size: int, where: str) -> Tier:
    where = f"{where}: row {index}"
    if not isinstance(raw, dict):
        raise InvalidPrizeTable(f"{where}: a tier is a table, got {shown(raw)}")
    unknown = set(raw) - _TIER_KEYS
    if unknown:
        raise InvalidPrizeTable(f"{where}: unknown keys {shown(sorted(unknown))}")
    prize = raw.get("prize_cents")
    if not int_within(prize, 1, MAX_INT64):
        raise InvalidPrizeTable(
            f"{where}: prize_cents must be an integer from 1 to 2^63 - 1, got {shown(prize)}"
        )
    count = raw.get("count")
    if not int_within(count, 1, block_size):
        raise InvalidPrizeTable(
            f"{where}: count must be an integer from 1 to the block size {block_size:,}, "
            f"got {shown(count)}"
        )
    raw_shows = raw.get("shows", [])
    if not isinstance(raw_shows, list) or len(raw_shows) > MAX_SHOWS:
        raise InvalidPrizeTable(
            f"{where}: shows must be a list of at most {MAX_SHOWS} "
            f"{{gain_cents, multiplier}}, got {shown(raw_shows)}"
        )
    shows: list[Show] = []
    for show in raw_shows:
        if not isinstance(show, dict) or set(show) - _SHOW_KEYS:
            raise InvalidPrizeTable(
                f"{where}: a show is {{gain_cents, multiplier}}, got {shown(show)}"
            )
        gain, multiplier = show.get("gain_cents"), show.get("multiplier")
        if not int_within(gain, 1, MAX_INT64):
            raise InvalidPrizeTable(
                f"{where}: a show's gain_cents must be an integer from 1 to 2^63 - 1, "
                f"got {shown(gain)}"
            )
        if multiplier is not None and not int_within(multiplier, 1, MAX_INT64):
            raise InvalidPrizeTable(f"{where}: a show's multiplier is invalid: {shown(multiplier)}")
        assert isinstance(gain, int)
        shows.append((gain, multiplier if isinstance(multiplier, int) else None))
    assert isinstance(prize, int) and isinstance(count, int)
    return Tier(index=index, prize_cents=prize, count=count, shows=tuple(shows))
