"""Cash 500 000 € — the regulation of 16 March 2009, played as a 5 € online scratch ticket.

**Ticket.** "Vos numéros": 20 stars, each hiding a number and an amount; "Numéros gagnants":
5 clovers, each hiding a number. Numbers come from :data:`NUMBERS` (1–40 without 5, 10 and 20),
at most once per zone; every amount is one of the table's amounts (art. 4.2).

**Win rule** (art. 4.4): the prize is the sum of the amounts of the stars whose number is also
a winning number; several matches form one indivisible prize. Nothing else wins.

**Design policy, design-v1** (:class:`CashDesignV1`, blocks committed before design-v2):

* A prize is shown as 1 to 5 matches whose amounts, each one of the table's amounts, add up to
  the prize. The ways to do so are all multisets of at most 5 amounts with that sum, listed once
  per table; the design picks one of them uniformly (so 5 € is always one match, 10 € is one
  10 € or two 5 €, 500 000 € is one 500 000 € or five 100 000 €).
* Drawing 25 distinct numbers uniformly from the 37: the first 5 are the winning numbers, the
  first ``k`` of those are the matched stars, the other 20 − k numbers are decoys that match
  nothing. A losing ticket (``k = 0``) therefore never has a match.
* A decoy star's amount is drawn uniformly from the table's amounts; then the 20 stars are
  shuffled. Winning numbers are shown in increasing order.
* Every draw goes through the ``rng`` passed in, so a design is a pure function of its state.

**Design policy, design-v2** (:class:`Cash`, every new block): the same draws, in the same
order, except that a decoy's amount is drawn from one fixed distribution *q* of the table: the
distribution of a matched star's amount over the winning tickets (each tier weighted by its
count, each of its ways by 1 / its number of ways, each way counting its parts). A star of a
losing ticket then shows amount *a* exactly as often as a star of a winning ticket does, so
scratching stars tells nothing about the win beyond the win rule, and losing tickets show the
top prize no more often than winning ones. Star amounts are the table's prizes only (art. 4.2),
never the amount of a row that has no prize to give.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from datetime import date
from functools import reduce
from itertools import accumulate
from math import gcd, lcm
from typing import Any

from grattage.errors import InvalidChoice, InvalidPrizeTable, InvalidTicket
from grattage.games.base import ShownInWays, TicketDocument, _is_int, require_game
from grattage.games.money import format_euros
from grattage.games.randomness import WORD_SPACE, Randomness, weighted
from grattage.games.table import PrizeTable

NUMBERS: tuple[int, ...] = tuple(n for n in range(1, 41) if n not in (5, 10, 20))
STARS = 20
CLOVERS = 5
MAX_MATCHES = CLOVERS
_NUMBER_SET = frozenset(NUMBERS)

Decomposition = tuple[int, ...]


def decompositions(prize: int, amounts: tuple[int, ...], max_parts: int) -> list[Decomposition]:
    """Every multiset of at most ``max_parts`` ``amounts`` summing to ``prize``, largest first."""
    ordered = sorted(set(amounts), reverse=True)
    found: list[Decomposition] = []

    def extend(remaining: int, start: int, parts: tuple[int, ...]) -> None:
        if remaining == 0:
            found.append(parts)
            return
        if len(parts) == max_parts:
            return
        for i in range(start, len(ordered)):
            amount = ordered[i]
            if amount <= remaining and amount * (max_parts - len(parts)) >= remaining:
                extend(remaining - amount, i, (*parts, amount))

    extend(prize, 0, ())
    return found


class _CashRules(ShownInWays[Decomposition]):
    """What every rules version of Cash shares: the ticket, its zones and the win rule."""

    name = "cash"
    title = "Cash 500 000 €"
    regulation_date = date(2009, 3, 16)
    price_cents = 500
    base_block_size = 12_000_000
    allows_block_multiples = False
    choices = ()
    amounts: tuple[int, ...]
    """The amounts a star may show (checked by :meth:`_read`)."""
    _amount_set: frozenset[int]
    reveals_after_inactivity = True  # art. 4.3
    zones = (
        *(f"your_numbers/{i}" for i in range(STARS)),
        *(f"winning_numbers/{i}" for i in range(CLOVERS)),
    )

    def _read(self, ticket: Mapping[str, Any]) -> tuple[list[int], list[tuple[int, int]]]:
        """The visible content, checked against every rule of art. 4.2."""
        require_game(ticket, self.name)
        winning = ticket.get("winning_numbers")
        if not isinstance(winning, list):
            raise InvalidTicket(f"winning_numbers must be a list, got {winning!r}")
        if len(winning) != CLOVERS:
            raise InvalidTicket(
                f"winning_numbers holds exactly {CLOVERS} numbers, got {len(winning)}: {winning!r}"
            )
        for number in winning:
            self._check_number(number, "winning_numbers")
        if len(set(winning)) != CLOVERS:
            raise InvalidTicket(f"a winning number appears twice in {winning!r}")
        stars = ticket.get("your_numbers")
        if not isinstance(stars, list):
            raise InvalidTicket(f"your_numbers must be a list, got {stars!r}")
        if len(stars) != STARS:
            raise InvalidTicket(f"your_numbers holds exactly {STARS} stars, got {len(stars)}")
        read: list[tuple[int, int]] = []
        seen: set[int] = set()
        numbers, amounts = _NUMBER_SET, self._amount_set
        for position, star in enumerate(stars):
            # ``type(x) is int`` on purpose: it is fast and refuses bools, which equal 0 and 1
            if type(star) is not dict or len(star) != 2 or "number" not in star:
                raise InvalidTicket(
                    f"your_numbers/{position} must be {{number, amount_cents}}, got {star!r}"
                )
            number, amount = star["number"], star.get("amount_cents")
            if type(number) is not int or number not in numbers:
                self._check_number(number, f"your_numbers/{position}")
            if number in seen:
                raise InvalidTicket(f"the number {number!r} appears twice in your_numbers")
            seen.add(number)
            if type(amount) is not int or amount not in amounts:
                raise InvalidTicket(
                    f"your_numbers/{position} shows the amount {amount!r}, "
                    f"not one of the table's amounts"
                )
            read.append((number, amount))
        return winning, read

    @staticmethod
    def _check_number(number: object, where: str) -> None:
        if not _is_int(number) or number not in _NUMBER_SET:
            raise InvalidTicket(
                f"{where}: {number!r} is not one of the game's 37 numbers (1–40 without 5, 10, 20)"
            )

    def evaluate(self, ticket: Mapping[str, Any]) -> int:
        winning, stars = self._read(ticket)
        winning_set = set(winning)
        return sum(amount for number, amount in stars if number in winning_set)

    def validate(self, ticket: Mapping[str, Any]) -> None:
        won = self.evaluate(ticket)
        self._check_stated_prize(ticket, won)

    def zone_content(self, ticket: Mapping[str, Any], zone: str) -> Any:
        self.check_zone(zone)
        area, _, index = zone.partition("/")
        return ticket[area][int(index)]


class CashDesignV1(_CashRules):
    """design-v1: decoy amounts uniform over the table's amounts (kept to re-derive its blocks)."""

    rules_version = "cash/2009-03-16/design-v1"

    def _prepare(self, table: PrizeTable) -> None:  # design-v1's checks, kept exactly
        self.amounts = table.amounts_cents or tuple(
            sorted((t.prize_cents for t in table.tiers), reverse=True)
        )
        self._amount_set = frozenset(self.amounts)
        for tier in table.tiers:
            if tier.shows:
                raise InvalidPrizeTable(
                    f"row {tier.index}: Cash tiers take no 'shows' (a prize is a sum of amounts)"
                )
            self._keep_ways(
                tier,
                decompositions(tier.prize_cents, self.amounts, MAX_MATCHES),
                f"no sum of at most {MAX_MATCHES} of the table's amounts makes the prize "
                f"{format_euros(tier.prize_cents)} ({tier.prize_cents!r} cents)",
            )

    def design(
        self, prize_cents: int, rng: Randomness, choice: str | None = None
    ) -> TicketDocument:
        if choice is not None:
            raise InvalidChoice(f"cash takes no choice, got {choice!r}")
        if prize_cents == 0:
            parts: Decomposition = ()
        else:
            parts = self._draw_way(prize_cents, rng)
        matches = len(parts)
        pool = list(NUMBERS)
        size = len(pool)
        drawn = CLOVERS + STARS - matches
        for i in range(drawn):  # partial Fisher–Yates over rng.below (see randomness)
            j = i + rng.below(size - i)
            pool[i], pool[j] = pool[j], pool[i]
        winning = pool[:CLOVERS]
        amounts = self.amounts
        stars = [{"number": winning[i], "amount_cents": parts[i]} for i in range(matches)]
        stars.extend(
            {"number": number, "amount_cents": amounts[rng.below(len(amounts))]}
            for number in pool[CLOVERS:drawn]
        )
        for i in range(STARS - 1):
            j = i + rng.below(STARS - i)
            stars[i], stars[j] = stars[j], stars[i]
        return {
            "game": self.name,
            "winning_numbers": sorted(winning),
            "your_numbers": stars,
            "prize_cents": prize_cents,
        }


class Cash(_CashRules):
    """design-v2, the current rules: decoys drawn from the winners' matched amounts."""

    rules_version = "cash/2009-03-16/design-v2"

    def _prepare(self, table: PrizeTable) -> None:
        prizes = {t.prize_cents for t in table.tiers if t.count > 0}
        listed = table.amounts_cents or tuple(sorted(prizes, reverse=True))
        self.amounts = tuple(a for a in listed if a in prizes)
        self._amount_set = frozenset(self.amounts)
        for tier in table.tiers:
            if tier.shows:
                raise InvalidPrizeTable(
                    f"row {tier.index}: Cash tiers take no 'shows' (a prize is a sum of amounts)"
                )
            if tier.count == 0:  # no ticket shows it, and its amount is no star's
                continue
            self._keep_ways(
                tier,
                decompositions(tier.prize_cents, self.amounts, MAX_MATCHES),
                f"no sum of at most {MAX_MATCHES} of the table's amounts makes the prize "
                f"{format_euros(tier.prize_cents)} ({tier.prize_cents!r} cents)",
            )
        for position, amount in enumerate(table.amounts_cents):  # after the rows: they name one
            if amount not in prizes:
                raise InvalidPrizeTable(
                    f"amounts_cents[{position}]: {format_euros(amount)} ({amount!r} cents) is not "
                    "a prize of the table (art. 4.2: a star shows one of the table's prizes only)"
                )
        self.decoy_amounts, self.decoy_weights = decoy_distribution(table, self._ways)
        self._decoy_cumulative = tuple(accumulate(self.decoy_weights))
        self._decoy_total = self._decoy_cumulative[-1]

    def design(
        self, prize_cents: int, rng: Randomness, choice: str | None = None
    ) -> TicketDocument:
        if choice is not None:
            raise InvalidChoice(f"cash takes no choice, got {choice!r}")
        if prize_cents == 0:
            parts: Decomposition = ()
        else:
            parts = self._draw_way(prize_cents, rng)
        matches = len(parts)
        pool = list(NUMBERS)
        size = len(pool)
        drawn = CLOVERS + STARS - matches
        for i in range(drawn):  # partial Fisher–Yates over rng.below (see randomness)
            j = i + rng.below(size - i)
            pool[i], pool[j] = pool[j], pool[i]
        winning = pool[:CLOVERS]
        decoys, cumulative, total = self.decoy_amounts, self._decoy_cumulative, self._decoy_total
        stars = [{"number": winning[i], "amount_cents": parts[i]} for i in range(matches)]
        if total <= WORD_SPACE:  # weighted() inlined, the same draw: the hot loop of a design
            below = rng.below
            stars.extend(
                {"number": number, "amount_cents": decoys[bisect_right(cumulative, below(total))]}
                for number in pool[CLOVERS:drawn]
            )
        else:
            stars.extend(
                {"number": number, "amount_cents": decoys[weighted(rng, cumulative)]}
                for number in pool[CLOVERS:drawn]
            )
        for i in range(STARS - 1):
            j = i + rng.below(STARS - i)
            stars[i], stars[j] = stars[j], stars[i]
        return {
            "game": self.name,
            "winning_numbers": sorted(winning),
            "your_numbers": stars,
            "prize_cents": prize_cents,
        }


def decoy_distribution(
    table: PrizeTable, ways: Mapping[int, list[Decomposition]]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """design-v2's decoy amounts and their integer weights (largest amount first, gcd 1).

    The weight of amount *a* is ``sum over the rows with a prize of count × (L / n_ways) ×
    (parts equal to a, over all the row's ways)``, ``L`` the least common multiple of the rows'
    numbers of ways: how many matched stars show *a* in ``L`` copies of the block's winners.
    Amounts of weight 0 are left out."""
    live = [t for t in table.tiers if t.count > 0]
    if not live:
        raise InvalidPrizeTable("the table has no prize to give (every count is 0)")
    common = reduce(lcm, (len(ways[t.prize_cents]) for t in live), 1)
    weight: dict[int, int] = {}
    for tier in live:
        share = tier.count * (common // len(ways[tier.prize_cents]))
        for way in ways[tier.prize_cents]:
            for part in way:
                weight[part] = weight.get(part, 0) + share
    divisor = reduce(gcd, weight.values())
    amounts = tuple(sorted(weight, reverse=True))
    return amounts, tuple(weight[a] // divisor for a in amounts)
