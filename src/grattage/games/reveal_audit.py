"""Partial reveals tell nothing beyond the win rule: measured on designs of one table.

The claim of design-v2 (docs/games.md, "Partial reveals") is made for every table we accept, so
it is measured on each operator's table when it is loaded (:func:`check_partial_reveals`), and
at full size by tests/unit/test_partial_reveals.py on the packaged tables.

Prizes are drawn with the table's weights (tier *i* with probability count / block size, NumPy's
``default_rng``), each designed from one ``SeededRandomness`` stream; both seeds are fixed (by
the caller, or from the table's digest), so a table is always judged the same way. The base
rate ``p`` is the table's exact share of winning units. For each condition ("star 0 shows *a*",
"exactly *k* stars show *a*" for the *k* on ≥ 1 % of tickets, "the Gain shows *g*") with ``n``
tickets (at least ``min_tickets``), ``w`` of them winning:

* **bounds** — the condition's win rate must not be shown to lie outside [0.8 p, 1.25 p]: a
  one-sided binomial z-test against each bound (normal approximation), α = 0.001 in all,
  Bonferroni-divided over the 2 × conditions tests;
* **equality** — where design-v2 makes the rate exactly ``p`` (a given star's amount, the Gain),
  a two-sided z-test of rate = p at the same α, Bonferroni over those conditions;
* Cash: losing tickets' stars show the top prize's amount no more often than winning tickets'
  non-matching stars (a one-sided two-proportion z-test at α = 0.001);
* Astro: no losing ticket shows a multiplying phrase, no win without multiplier the consolation
  phrase (exact counts).

A table honest under design-v2 is therefore refused with probability at most α = 0.001; a leak
is found when it is larger than the sampling noise of the sample (see docs/games.md for the
sizes). Cash's one structural cause of a leak — a prize that is not among the star amounts, so
that it can only be shown as several smaller stars — is refused directly, before any sampling
(:func:`check_partial_reveals`).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from grattage.errors import InvalidPrizeTable
from grattage.games.astro import MULTIPLYING_PHRASES
from grattage.games.base import Game
from grattage.games.money import format_euros
from grattage.games.randomness import SeededRandomness

ALPHA = 0.001
LOW, HIGH = 0.8, 1.25
MIN_SHARE_OF_K = 0.01
CONSOLATION = "Votre étoile brillera une autre fois."
LOADER_DESIGNS = 20_000
"""Designs measured when an operator's table is loaded: a few seconds on one shared core."""
LOADER_MIN_TICKETS = 200
"""Fewest tickets a condition needs to be judged at load (n·p ≥ 10 for the rates sold)."""


@dataclass
class Findings:
    base_rate: float
    sampled: int
    """Tickets designed for the measure."""
    min_tickets: int = 1_000
    rates: dict[str, tuple[int, float]] = field(default_factory=dict)
    """condition → (tickets, win rate / base rate)"""
    violations: list[str] = field(default_factory=list)
    """One sentence per condition outside its bound, beyond sampling noise."""
    _bounded: list[tuple[str, int, int]] = field(default_factory=list)
    _exact: list[tuple[str, int, int]] = field(default_factory=list)

    def condition(self, name: str, tickets: int, wins: int, *, exact: bool) -> None:
        if tickets < self.min_tickets:
            return
        self.rates[name] = (tickets, wins / tickets / self.base_rate)
        self._bounded.append((name, tickets, wins))
        if exact:
            self._exact.append((name, tickets, wins))

    def judge(self) -> None:
        p = self.base_rate
        z_bound = NormalDist().inv_cdf(1 - ALPHA / (2 * max(1, len(self._bounded))))
        for name, n, w in self._bounded:
            for bound, sign in ((HIGH * p, 1), (LOW * p, -1)):
                if not 0 < bound < 1:  # a win rate cannot pass it: nothing to test
                    continue
                z = sign * (w - n * bound) / (n * bound * (1 - bound)) ** 0.5
                if z > z_bound:
                    self.violations.append(
                        f"when {name}, a ticket wins {w / n / p:.2f} × as often as on average "
                        f"(allowed {LOW}–{HIGH}; {n} of {self.sampled} tickets designed, "
                        f"z = {z:.1f})"
                    )
        z_exact = NormalDist().inv_cdf(1 - ALPHA / (2 * max(1, len(self._exact))))
        for name, n, w in self._exact if 0 < p < 1 else ():
            z = (w - n * p) / (n * p * (1 - p)) ** 0.5
            if abs(z) > z_exact:
                self.violations.append(
                    f"when {name}, a ticket wins {w / n / p:.2f} × as often as on average "
                    f"(design-v2 makes it 1; {n} tickets, z = {z:.1f})"
                )


def _prizes(game: Game, count: int, seed: int) -> list[int]:
    table = game.table
    weights = np.array(table.counts_by_tier(), dtype=np.float64) / table.block_size
    weights /= weights.sum()  # the losing row is one of the tiers: the sum is 1 up to rounding
    tiers = np.random.default_rng(seed).choice(len(weights), size=count, p=weights)
    prize_of = [table.prize_of_tier(i) for i in range(len(weights))]
    return [prize_of[t] for t in tiers.tolist()]


def cash_findings(
    game: Game,
    count: int,
    *,
    seed: int = 12,
    stream: bytes = b"grattage partial reveals cash",
    min_tickets: int = 1_000,
) -> Findings:
    table = game.table
    amounts = sorted({t.prize_cents for t in table.tiers} | set(table.amounts_cents))
    code_of = {a: i for i, a in enumerate(amounts)}
    codes = array("b")
    prizes = _prizes(game, count, seed)
    rng = SeededRandomness(stream)
    for prize in prizes:
        ticket = game.design(prize, rng)
        winning = set(ticket["winning_numbers"])
        codes.extend(
            code_of[star["amount_cents"]] + (32 if star["number"] in winning else 0)
            for star in ticket["your_numbers"]
        )
    grid = np.frombuffer(codes, dtype=np.int8).reshape(count, 20)
    shown, matched = grid % 32, grid >= 32
    win = np.array(prizes) > 0
    findings = Findings(table.prizes_count / table.block_size, count, min_tickets)
    for code, amount in enumerate(amounts):
        euros = format_euros(amount)
        first = shown[:, 0] == code
        findings.condition(
            f"star 0 shows {euros}", int(first.sum()), int(win[first].sum()), exact=True
        )
        per_ticket = (shown == code).sum(axis=1)
        tickets = np.bincount(per_ticket, minlength=21)
        wins = np.bincount(per_ticket, weights=win, minlength=21)
        for k in range(21):
            if tickets[k] >= MIN_SHARE_OF_K * count:
                star_s = "star shows" if k == 1 else "stars show"
                findings.condition(
                    f"{k} {star_s} {euros}", int(tickets[k]), int(wins[k]), exact=False
                )
    top = code_of[max(amounts)]
    losing_top = int((shown[~win] == top).sum())
    losing_stars = int((~win).sum()) * 20
    decoys = ~matched & win[:, None]
    winning_top = int((shown[decoys] == top).sum())
    winning_stars = int(decoys.sum())
    if losing_stars and winning_stars:
        pooled = (losing_top + winning_top) / (losing_stars + winning_stars)
        spread = (pooled * (1 - pooled) * (1 / losing_stars + 1 / winning_stars)) ** 0.5
        excess = (losing_top / losing_stars - winning_top / winning_stars) / (spread or 1)
        findings.rates["top amount per star, losing / winning decoys"] = (
            losing_top + winning_top,
            (losing_top / losing_stars) / max(winning_top / winning_stars, 1e-12),
        )
        if excess > NormalDist().inv_cdf(1 - ALPHA):
            findings.violations.append(
                f"losing stars show the top prize {losing_top / losing_stars:.2e} of the time, "
                f"winning tickets' other stars {winning_top / winning_stars:.2e} "
                f"(z = {excess:.1f})"
            )
    findings.judge()
    return findings


def astro_findings(
    game: Game,
    count: int,
    *,
    seed: int = 13,
    stream: bytes = b"grattage partial reveals astro",
    min_tickets: int = 1_000,
) -> Findings:
    table = game.table
    gains: dict[int, list[int]] = {}
    prizes = _prizes(game, count, seed)
    rng = SeededRandomness(stream)
    multiplying = {text for texts in MULTIPLYING_PHRASES.values() for text in texts}
    losers_multiplying = plain_wins_consoled = losers_x1000 = 0
    for prize in prizes:
        ticket = game.design(prize, rng, "leo")
        gains.setdefault(ticket["gain_cents"], [0, 0])[prize > 0] += 1
        text, multiplier = ticket["banner"]["text"], ticket["banner"]["multiplier"]
        if prize == 0:
            losers_multiplying += text in multiplying
            losers_x1000 += multiplier == 1000
        elif multiplier is None:
            plain_wins_consoled += text == CONSOLATION
    findings = Findings(table.prizes_count / table.block_size, count, min_tickets)
    for gain, (lost, won) in sorted(gains.items()):
        findings.condition(f"the Gain shows {format_euros(gain)}", lost + won, won, exact=True)
    findings.judge()  # the win rates first: the sentence a refusal gives
    losers = prizes.count(0)
    if losers:
        findings.rates["losers showing a multiplying phrase"] = (
            losers,
            losers_multiplying / losers,
        )
        findings.rates["losers showing × 1 000"] = (losers, losers_x1000 / losers)
    if losers_multiplying:
        findings.violations.append(f"{losers_multiplying} losing tickets multiply on the banner")
    if plain_wins_consoled:
        findings.violations.append(
            f"{plain_wins_consoled} wins without multiplier show « {CONSOLATION} »"
        )
    return findings


FINDINGS = {"cash": cash_findings, "astro": astro_findings}


def prizes_shown_only_as_smaller_stars(game: Game) -> list[str]:
    """Cash: the rows whose prize is not a star amount, one sentence each. Such a prize can only
    be shown as several smaller stars (5 € as 1 € × 5 when the amounts are 7 € and 1 €), so its
    winners carry many stars of one small amount, and counting those stars tells a win."""
    amounts = set(getattr(game, "amounts", ()))
    if game.name != "cash" or not amounts:
        return []
    return [
        f"row {tier.index}: the prize {format_euros(tier.prize_cents)} is not one of the star "
        f"amounts, so it could only be shown as several smaller stars, and how many stars show "
        f"{format_euros(min(amounts))} would tell a win; add it to amounts_cents"
        for tier in game.table.tiers
        if tier.count > 0 and tier.prize_cents > 0 and tier.prize_cents not in amounts
    ]


def table_seed(game: Game) -> tuple[int, bytes]:
    """The sample's seeds, from the table's digest: the same table is always judged the same."""
    digest = bytes.fromhex(game.table.digest())
    return int.from_bytes(digest[:8], "big"), b"grattage reveal audit " + digest


def check_partial_reveals(game: Game, designs: int = LOADER_DESIGNS) -> None:
    """Refuse (one line, :class:`InvalidPrizeTable`) a table on which a partial reveal would
    tell something about the win: the structural cause first, then the measure on ``designs``
    designs drawn with the table's weights."""
    structural = prizes_shown_only_as_smaller_stars(game)
    if structural:
        raise InvalidPrizeTable(f"a partial reveal would tell: {structural[0]}")
    measure = FINDINGS.get(game.name)
    if measure is None:  # a game registered later brings its own measure with its tests
        return
    seed, stream = table_seed(game)
    findings = measure(game, designs, seed=seed, stream=stream, min_tickets=LOADER_MIN_TICKETS)
    if findings.violations:
        raise InvalidPrizeTable(f"a partial reveal would tell: {findings.violations[0]}")
