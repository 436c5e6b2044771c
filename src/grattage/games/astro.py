"""Astro — the astrology game of 29 August 2005, played as a 2 € online scratch ticket.

**Ticket.** Before buying, the player picks one of the 12 signs (:data:`SIGNS`). Phase 1: five
discs, each hiding either the chosen sign (``"sign"``) or one of :data:`SYMBOLS`, and a « Gain »
box hiding an amount. Phase 2, only once phase 1 is revealed: a banner « Grattez ici pour
multiplier jusqu'à 1 000 fois vos gains » hiding a phrase, losing or multiplying by one of
:data:`MULTIPLIERS` (art. 4.2).

**Win rule** (art. 4.4–4.5): two discs show the chosen sign → the ticket wins the Gain amount,
multiplied by the banner's factor if it has one; otherwise it loses, whatever the banner says.

**Gain amounts** are the table's prize amounts, except where a tier lists the only ways it may
be shown (``shows``): then those gains replace its prize (16 000 € is shown only as 8 000 × 2,
art. 4.2.2).

**Design policy, design-v1** (:class:`AstroDesignV1`, blocks committed before design-v2):

* A winning ticket: one way to show the prize, drawn uniformly among the tier's ``shows`` or,
  when it lists none, among every (gain, multiplier) with a shown gain amount and a multiplier
  of the game (or none) whose product is the prize. Exactly two discs, at uniformly drawn
  places, show the sign; the other three show symbols drawn uniformly (repeats allowed). The
  banner shows a phrase of that multiplier, or a losing phrase.
* A losing ticket: no sign or one sign (each with probability ½, the one at a uniform place),
  the other discs drawn as above, a Gain amount drawn uniformly among the shown amounts and a
  banner drawn uniformly among every phrase, multiplying or not — it cannot win.

**Design policy, design-v2** (:class:`Astro`, every new block): the discs and the winning ways
as in design-v1, but

* a losing ticket's Gain is drawn from the distribution of the winning tickets' Gains (each
  tier weighted by its count, each of its ways by 1 / its number of ways), so the Gain box,
  scratched first, tells nothing: P(win | Gain = g) is the base rate for every g;
* a losing ticket's banner shows one of the four losing phrases (never a multiplying one);
* a win without multiplier shows one of :data:`PLAIN_WIN_PHRASES`, which agree with « Gagné ! »
  (never « Votre étoile brillera une autre fois. »);
* the Gain box shows a prize of the table only (art. 4.2.2): a tier's ``shows`` must use gains
  that are prizes of the table, and the 16 000 € prize is shown only as 8 000 € × 2
  (:data:`ONLY_AS_PRODUCT`), whether or not its row says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from functools import reduce
from itertools import accumulate
from math import gcd, lcm
from typing import Any

from grattage.errors import InvalidPrizeTable, InvalidTicket
from grattage.games.base import ShownInWays, TicketDocument, _is_int, require_game
from grattage.games.money import format_euros
from grattage.games.randomness import Randomness, weighted
from grattage.games.table import PrizeTable, Show

SIGNS: tuple[str, ...] = (
    "aries", "taurus", "gemini", "cancer", "leo", "virgo",
    "libra", "scorpio", "sagittarius", "capricorn", "aquarius", "pisces",
)  # fmt: skip
SIGN = "sign"
SYMBOLS: tuple[str, ...] = (
    "cosmos", "moon", "comet", "saturn", "explosion", "eclipse", "star", "sun",
)  # fmt: skip
MULTIPLIERS: tuple[int, ...] = (2, 3, 4, 6, 10, 20, 100, 1000)
DISCS = 5
SIGNS_TO_WIN = 2

LOSING_PHRASES: tuple[str, ...] = (
    "Pas de multiplicateur cette fois-ci.",
    "Les astres restent muets.",
    "Votre étoile brillera une autre fois.",
    "Aucun multiplicateur sous ce ciel.",
)
MULTIPLYING_PHRASES: dict[int, tuple[str, ...]] = {
    2: ("Vos gains sont doublés ! (×2)", "Vos gains sont multipliés par 2 !"),
    3: ("Vos gains sont triplés ! (×3)", "Vos gains sont multipliés par 3 !"),
    4: ("Vos gains sont multipliés par 4 !", "Quatre fois plus de gains ! (×4)"),
    6: ("Vos gains sont multipliés par 6 !", "Six fois plus de gains ! (×6)"),
    10: ("Vos gains sont multipliés par 10 !", "Dix fois plus de gains ! (×10)"),
    20: ("Vos gains sont multipliés par 20 !", "Vingt fois plus de gains ! (×20)"),
    100: ("Vos gains sont multipliés par 100 !", "Cent fois plus de gains ! (×100)"),
    1000: ("Vos gains sont multipliés par 1 000 !", "Mille fois plus de gains ! (×1 000)"),
}
PHRASES: dict[str, int | None] = {
    **{text: None for text in LOSING_PHRASES},
    **{text: factor for factor, texts in MULTIPLYING_PHRASES.items() for text in texts},
}
ALL_PHRASES: tuple[str, ...] = tuple(PHRASES)

PLAIN_WIN_PHRASES: tuple[str, ...] = (LOSING_PHRASES[0], LOSING_PHRASES[3])
"""design-v2: the banner of a win without multiplier — no multiplier, and nothing that says the
ticket lost (« Pas de multiplicateur cette fois-ci. », « Aucun multiplicateur sous ce ciel. »)."""
ONLY_AS_PRODUCT: dict[int, tuple[Show, ...]] = {1_600_000: ((800_000, 2),)}
"""design-v2: prizes the regulation shows only as a product (art. 4.2.2: « le lot de 16 000 EUR
est constitué d'un lot de 8 000 EUR associé au multiplicateur 2 »)."""

_SYMBOL_SET = frozenset((SIGN, *SYMBOLS))
PHASE_ONE_ZONES: tuple[str, ...] = (*(f"symbols/{i}" for i in range(DISCS)), "gain")


class _AstroRules(ShownInWays[Show]):
    """What every rules version of Astro shares: the ticket, its zones and the win rule."""

    name = "astro"
    title = "Astro"
    regulation_date = date(2005, 8, 29)  # applicable from 15 September 2005 (art. 1)
    price_cents = 200
    base_block_size = 750_000
    allows_block_multiples = True
    choices = SIGNS
    gains: tuple[int, ...]
    """The amounts the Gain box may show (checked by :meth:`_read`)."""
    _gain_set: frozenset[int]
    zones = (*PHASE_ONE_ZONES, "banner")
    reveals_after_inactivity = False  # only abandoned tickets are finished by the system

    def _read(self, ticket: Mapping[str, Any]) -> tuple[int, int, int | None]:
        """(signs shown, gain, multiplier), checked against every rule of art. 4.2."""
        require_game(ticket, self.name)
        self.check_choice(ticket.get("sign"))
        symbols = ticket.get("symbols")
        if not isinstance(symbols, list) or len(symbols) != DISCS:
            raise InvalidTicket(f"symbols holds exactly {DISCS} discs, got {symbols!r}")
        for position, symbol in enumerate(symbols):
            if not isinstance(symbol, str) or symbol not in _SYMBOL_SET:
                raise InvalidTicket(
                    f"symbols/{position}: unknown symbol {symbol!r} "
                    f"(expected 'sign' or one of {', '.join(SYMBOLS)})"
                )
        signs = symbols.count(SIGN)
        if signs > SIGNS_TO_WIN:
            raise InvalidTicket(f"{signs} discs show the sign; a ticket shows at most 2")
        gain = ticket.get("gain_cents")
        if not _is_int(gain) or gain not in self._gain_set:
            raise InvalidTicket(f"gain_cents {gain!r} is not one of the game's Gain amounts")
        banner = ticket.get("banner")
        if not isinstance(banner, Mapping) or set(banner) != {"text", "multiplier"}:
            raise InvalidTicket(f"banner must be {{text, multiplier}}, got {banner!r}")
        multiplier = banner["multiplier"]
        if multiplier is not None and (not _is_int(multiplier) or multiplier not in MULTIPLIERS):
            raise InvalidTicket(
                f"banner multiplier {multiplier!r} does not exist "
                f"(the game has {', '.join(map(str, MULTIPLIERS))} or none)"
            )
        text = banner["text"]
        if text not in PHRASES:
            raise InvalidTicket(f"banner text {text!r} is not one of the game's phrases")
        if PHRASES[text] != multiplier:
            raise InvalidTicket(
                f"banner text {text!r} multiplies by {PHRASES[text]!r}, not {multiplier!r}"
            )
        return signs, gain, multiplier

    def evaluate(self, ticket: Mapping[str, Any]) -> int:
        signs, gain, multiplier = self._read(ticket)
        if signs != SIGNS_TO_WIN:
            return 0
        return gain * (multiplier or 1)

    def validate(self, ticket: Mapping[str, Any]) -> None:
        self._check_stated_prize(ticket, self.evaluate(ticket))

    def zone_content(self, ticket: Mapping[str, Any], zone: str) -> Any:
        self.check_zone(zone)
        if zone == "gain":
            return ticket["gain_cents"]
        if zone == "banner":
            return dict(ticket["banner"])
        return ticket["symbols"][int(zone.partition("/")[2])]

    def zone_prerequisites(self, zone: str) -> tuple[str, ...]:
        self.check_zone(zone)
        return PHASE_ONE_ZONES if zone == "banner" else ()


class AstroDesignV1(_AstroRules):
    """design-v1: a loser's Gain uniform, any banner (kept to re-derive its blocks)."""

    rules_version = "astro/2005-08-29/design-v1"

    def _prepare(self, table: PrizeTable) -> None:  # design-v1's checks, kept exactly
        if table.amounts_cents:
            raise InvalidPrizeTable("Astro tables take no 'amounts_cents' (gains are the prizes)")
        for tier in table.tiers:
            for gain, multiplier in tier.shows:
                if multiplier is not None and multiplier not in MULTIPLIERS:
                    raise InvalidPrizeTable(
                        f"row {tier.index}: multiplier {multiplier!r} does not exist "
                        f"(the game has {', '.join(map(str, MULTIPLIERS))})"
                    )
                if gain * (multiplier or 1) != tier.prize_cents:
                    raise InvalidPrizeTable(
                        f"row {tier.index}: {gain!r} × {multiplier!r} does not make the prize "
                        f"{tier.prize_cents!r}"
                    )
        gains: set[int] = set()
        for tier in table.tiers:
            gains.update(g for g, _ in tier.shows) if tier.shows else gains.add(tier.prize_cents)
        self.gains = tuple(sorted(gains, reverse=True))
        self._gain_set = frozenset(gains)
        for tier in table.tiers:
            ways = list(tier.shows) or [
                (gain, multiplier)
                for gain in self.gains
                for multiplier in (None, *MULTIPLIERS)
                if gain * (multiplier or 1) == tier.prize_cents
            ]
            self._keep_ways(
                tier,
                ways,
                "no Gain amount times a multiplier makes the prize "
                f"{format_euros(tier.prize_cents)}",
            )

    def design(
        self, prize_cents: int, rng: Randomness, choice: str | None = None
    ) -> TicketDocument:
        sign = self.check_choice(choice)
        symbols = [SYMBOLS[rng.below(len(SYMBOLS))] for _ in range(DISCS)]
        if prize_cents == 0:
            if rng.below(2):
                symbols[rng.below(DISCS)] = SIGN
            gain = self.gains[rng.below(len(self.gains))]
            text = ALL_PHRASES[rng.below(len(ALL_PHRASES))]
        else:
            gain, multiplier = self._draw_way(prize_cents, rng)
            first = rng.below(DISCS)
            second = rng.below(DISCS - 1)
            symbols[first] = SIGN
            symbols[second + (second >= first)] = SIGN
            phrases = LOSING_PHRASES if multiplier is None else MULTIPLYING_PHRASES[multiplier]
            text = phrases[rng.below(len(phrases))]
        return {
            "game": self.name,
            "sign": sign,
            "symbols": symbols,
            "gain_cents": gain,
            "banner": {"text": text, "multiplier": PHRASES[text]},
            "prize_cents": prize_cents,
        }


class Astro(_AstroRules):
    """design-v2, the current rules: a loser's Gain drawn like a winner's, honest banners."""

    rules_version = "astro/2005-08-29/design-v2"

    def _prepare(self, table: PrizeTable) -> None:
        if table.amounts_cents:
            raise InvalidPrizeTable("Astro tables take no 'amounts_cents' (gains are the prizes)")
        prizes = {t.prize_cents for t in table.tiers if t.count > 0}
        plain = prizes - set(ONLY_AS_PRODUCT)
        for tier in table.tiers:
            for gain, multiplier in tier.shows:
                where = f"row {tier.index}"
                if multiplier is not None and multiplier not in MULTIPLIERS:
                    raise InvalidPrizeTable(
                        f"{where}: multiplier {multiplier!r} does not exist "
                        f"(the game has {', '.join(map(str, MULTIPLIERS))})"
                    )
                if gain * (multiplier or 1) != tier.prize_cents:
                    raise InvalidPrizeTable(
                        f"{where}: {gain!r} × {multiplier!r} does not make the prize "
                        f"{tier.prize_cents!r}"
                    )
                if gain not in plain:
                    raise InvalidPrizeTable(
                        f"{where}: the Gain {format_euros(gain)} is not a prize the Gain box may "
                        "show (art. 4.2.2: a prize of the table, 16 000 € only as 8 000 € × 2)"
                    )
        for tier in table.tiers:
            if tier.count == 0:
                continue
            ways = list(tier.shows or ONLY_AS_PRODUCT.get(tier.prize_cents, ())) or [
                (gain, multiplier)
                for gain in sorted(plain, reverse=True)
                for multiplier in (None, *MULTIPLIERS)
                if gain * (multiplier or 1) == tier.prize_cents
            ]
            for gain, multiplier in ways:
                if gain not in plain:
                    raise InvalidPrizeTable(
                        f"row {tier.index}: {format_euros(tier.prize_cents)} is shown only as "
                        f"{format_euros(gain)} × {multiplier or 1}, and {format_euros(gain)} "
                        "is not a prize of the table (art. 4.2.2)"
                    )
            self._keep_ways(
                tier,
                ways,
                "no Gain amount (a prize of the table) times a multiplier makes the prize "
                f"{format_euros(tier.prize_cents)}",
            )
        self.loser_gains, self.loser_gain_weights = losing_gain_distribution(table, self._ways)
        self._loser_cumulative = tuple(accumulate(self.loser_gain_weights))
        self.gains = self.loser_gains
        self._gain_set = frozenset(self.gains)

    def design(
        self, prize_cents: int, rng: Randomness, choice: str | None = None
    ) -> TicketDocument:
        sign = self.check_choice(choice)
        symbols = [SYMBOLS[rng.below(len(SYMBOLS))] for _ in range(DISCS)]
        if prize_cents == 0:
            if rng.below(2):
                symbols[rng.below(DISCS)] = SIGN
            gain = self.loser_gains[weighted(rng, self._loser_cumulative)]
            text = LOSING_PHRASES[rng.below(len(LOSING_PHRASES))]
        else:
            gain, multiplier = self._draw_way(prize_cents, rng)
            first = rng.below(DISCS)
            second = rng.below(DISCS - 1)
            symbols[first] = SIGN
            symbols[second + (second >= first)] = SIGN
            phrases = PLAIN_WIN_PHRASES if multiplier is None else MULTIPLYING_PHRASES[multiplier]
            text = phrases[rng.below(len(phrases))]
        return {
            "game": self.name,
            "sign": sign,
            "symbols": symbols,
            "gain_cents": gain,
            "banner": {"text": text, "multiplier": PHRASES[text]},
            "prize_cents": prize_cents,
        }


def losing_gain_distribution(
    table: PrizeTable, ways: Mapping[int, list[Show]]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """design-v2's Gain amounts of a losing ticket and their integer weights (largest first,
    gcd 1): the weight of *g* is ``sum over the rows with a prize of count × (L / n_ways) ×
    (the row's ways whose Gain is g)``, ``L`` the least common multiple of the rows' numbers of
    ways — the winners' Gains, so that a Gain tells nothing of the win."""
    live = [t for t in table.tiers if t.count > 0]
    if not live:
        raise InvalidPrizeTable("the table has no prize to give (every count is 0)")
    common = reduce(lcm, (len(ways[t.prize_cents]) for t in live), 1)
    weight: dict[int, int] = {}
    for tier in live:
        share = tier.count * (common // len(ways[tier.prize_cents]))
        for gain, _ in ways[tier.prize_cents]:
            weight[gain] = weight.get(gain, 0) + share
    divisor = reduce(gcd, weight.values())
    gains = tuple(sorted(weight, reverse=True))
    return gains, tuple(weight[g] // divisor for g in gains)
