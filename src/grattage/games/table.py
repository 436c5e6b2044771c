"""Prize tables as values: what a block pays, tier by tier.

A table is loaded from a TOML file (the packaged ones live in ``grattage/games/tables``) and
checked twice: here for its shape (types, counts, sizes), then by its game for whether the game
can *dress* every prize, i.e. show it with the game's visible elements.

File format::

    game = "astro"                       # which game the table is for
    title = "…"                          # a human name, shown to players
    source = "…"                         # where the figures come from
    reconstruction = true                # the figures are ours, not the published ones
    block_size = 750000                  # units in one block
    amounts_cents = [...]                # optional (Cash): amounts a star may show
    [[tiers]]                            # one per prize amount, largest first
    prize_cents = 1600000
    count = 1
    shows = [{gain_cents = 800000, multiplier = 2}]   # optional (Astro): the only ways to show it

Tier ``0`` is the losing tier; the file's tiers are numbered ``1..n`` in order.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from grattage.errors import InvalidPrizeTable

MAX_TIERS = 255  # tier indexes are stored on one byte per unit, 0 being the losing tier

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
    amounts_cents: tuple[int, ...] = ()
    multiple: int = field(default=1)

    @property
    def prizes_count(self) -> int:
        return sum(tier.count for tier in self.tiers)

    @property
    def prizes_total_cents(self) -> int:
        return sum(tier.count * tier.prize_cents for tier in self.tiers)

    @property
    def losing_count(self) -> int:
        return self.block_size - self.prizes_count

    def counts_by_tier(self) -> list[int]:
        """Expected units per tier index, the losing tier first."""
        return [self.losing_count, *(tier.count for tier in self.tiers)]

    def odds(self) -> Fraction:
        """X in "1 in X": units per winning unit."""
        return Fraction(self.block_size, self.prizes_count)

    def payout(self, price_cents: int) -> Fraction:
        """Share of the block's stakes paid back as prizes."""
        return Fraction(self.prizes_total_cents, self.block_size * price_cents)

    def tier_for_prize(self, prize_cents: int) -> Tier | None:
        for tier in self.tiers:
            if tier.prize_cents == prize_cents:
                return tier
        return None

    def prize_of_tier(self, index: int) -> int:
        return 0 if index == 0 else self.tiers[index - 1].prize_cents

    def scaled(self, multiple: int) -> PrizeTable:
        """The table of a block ``multiple`` times the size (Astro's "blocs multiples")."""
        if not 1 <= multiple <= MAX_BLOCK_UNITS // self.block_size:
            raise InvalidPrizeTable(
                f"a block multiple is 1 to {MAX_BLOCK_UNITS // self.block_size:,} "
                f"(at most {MAX_BLOCK_UNITS:,} units), got {multiple!r}"
            )
        return replace(
            self,
            block_size=self.block_size * multiple,
            tiers=tuple(replace(t, count=t.count * multiple) for t in self.tiers),
            multiple=self.multiple * multiple,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
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

    def digest(self) -> str:
        """SHA-256 of the table's canonical JSON: the identity a block and a proof refer to."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def table_from_dict(data: dict[str, Any]) -> PrizeTable:
    """Rebuild a table from :meth:`PrizeTable.to_dict` (block headers, databases, proofs)."""
    try:
        return PrizeTable(
            game=data["game"],
            title=data["title"],
            source=data["source"],
            reconstruction=data["reconstruction"],
            block_size=data["block_size"],
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
        raise InvalidPrizeTable(f"malformed prize table: missing or wrong field {exc}") from None


_TOP_KEYS = {"game", "title", "source", "reconstruction", "block_size", "amounts_cents", "tiers"}
_TIER_KEYS = {"prize_cents", "count", "shows"}

MAX_BLOCK_UNITS = 100_000_000
"""The largest block: generating one holds its tiers in memory (one byte per unit, plus the
shuffle's working copy), and a block this size takes a few seconds on a 2-core machine."""


def parse_prize_table(text: str, source_name: str = "<table>") -> PrizeTable:
    """Parse and shape-check a TOML prize table; the game checks it can dress it afterwards."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidPrizeTable(f"{source_name}: not valid TOML: {exc}") from None
    except RecursionError:
        raise InvalidPrizeTable(f"{source_name}: arrays or tables nested too deeply") from None
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise InvalidPrizeTable(f"{source_name}: unknown keys {sorted(unknown)!r}")
    game = _need(data, "game", str, source_name)
    block_size = _need(data, "block_size", int, source_name)
    if not 1 <= block_size <= MAX_BLOCK_UNITS:
        raise InvalidPrizeTable(
            f"{source_name}: block_size is 1 to {MAX_BLOCK_UNITS:,} units, got {block_size!r}"
        )
    amounts = data.get("amounts_cents", [])
    if not isinstance(amounts, list) or not all(_is_positive_int(a) for a in amounts):
        raise InvalidPrizeTable(
            f"{source_name}: amounts_cents must be a list of positive integers, got {amounts!r}"
        )
    raw_tiers = data.get("tiers")
    if not isinstance(raw_tiers, list) or not raw_tiers:
        raise InvalidPrizeTable(f"{source_name}: needs at least one [[tiers]] row")
    if len(raw_tiers) > MAX_TIERS:
        raise InvalidPrizeTable(f"{source_name}: at most {MAX_TIERS} tiers, got {len(raw_tiers)}")
    tiers = tuple(
        _parse_tier(index, raw, source_name) for index, raw in enumerate(raw_tiers, start=1)
    )
    seen: dict[int, int] = {}
    for tier in tiers:
        if tier.prize_cents in seen:
            raise InvalidPrizeTable(
                f"{source_name}: row {tier.index} repeats the prize {tier.prize_cents!r} "
                f"of row {seen[tier.prize_cents]}"
            )
        seen[tier.prize_cents] = tier.index
    table = PrizeTable(
        game=game,
        title=str(data.get("title", game)),
        source=str(data.get("source", "")),
        reconstruction=bool(data.get("reconstruction", False)),
        block_size=block_size,
        tiers=tiers,
        amounts_cents=tuple(sorted(set(amounts), reverse=True)),
    )
    if table.prizes_count > block_size:
        raise InvalidPrizeTable(
            f"{source_name}: the block is too small for its prizes: "
            f"{table.prizes_count!r} prizes in a block of {block_size!r}"
        )
    return table


def _parse_tier(index: int, raw: object, source_name: str) -> Tier:
    where = f"{source_name}: row {index}"
    if not isinstance(raw, dict):
        raise InvalidPrizeTable(f"{where}: a tier is a table, got {raw!r}")
    unknown = set(raw) - _TIER_KEYS
    if unknown:
        raise InvalidPrizeTable(f"{where}: unknown keys {sorted(unknown)!r}")
    prize = raw.get("prize_cents")
    if not _is_positive_int(prize):
        raise InvalidPrizeTable(f"{where}: prize_cents must be a positive integer, got {prize!r}")
    count = raw.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise InvalidPrizeTable(f"{where}: count must be an integer ≥ 0, got {count!r}")
    shows: list[Show] = []
    for show in raw.get("shows", []):
        if not isinstance(show, dict) or set(show) - {"gain_cents", "multiplier"}:
            raise InvalidPrizeTable(f"{where}: a show is {{gain_cents, multiplier}}, got {show!r}")
        gain, multiplier = show.get("gain_cents"), show.get("multiplier")
        if not _is_positive_int(gain):
            raise InvalidPrizeTable(f"{where}: a show's gain_cents must be positive, got {gain!r}")
        if multiplier is not None and not _is_positive_int(multiplier):
            raise InvalidPrizeTable(f"{where}: a show's multiplier is invalid: {multiplier!r}")
        assert isinstance(gain, int)
        shows.append((gain, multiplier if isinstance(multiplier, int) else None))
    assert isinstance(prize, int)
    return Tier(index=index, prize_cents=prize, count=count, shows=tuple(shows))


def _need(data: dict[str, Any], key: str, kind: type, source_name: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InvalidPrizeTable(f"{source_name}: {key!r} must be a {kind.__name__}, got {value!r}")
    return value


def _is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
