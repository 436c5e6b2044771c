"""Partial reveals tell nothing beyond the win rule (issue 12, item 4): measured over many designs.

The measure lives in grattage.games.reveal_audit (the loader runs it on every operator's table,
on a smaller sample); here it runs at full size on the packaged tables.

Prizes are drawn with the packaged table's weights (tier *i* with probability count / block
size, NumPy's ``default_rng`` with a fixed seed), each designed from one ``SeededRandomness``
stream. The base rate ``p`` is the table's exact share of winning units. For each condition
("star 0 shows amount a", "exactly k stars show a", "the Gain shows g") with ``n`` tickets, ``w``
of them winning:

* **bounds** — the condition's win rate must not be shown to lie outside [0.8 p, 1.25 p]: a
  one-sided binomial z-test against each bound (the normal approximation; every condition tested
  has n ≥ 1 000 tickets, and the k's are those on ≥ 1 % of tickets), α = 0.001 in all,
  Bonferroni-divided over the 2 × conditions tests;
* **equality** — where design-v2 makes the rate exactly ``p`` (a given star's amount, the Gain),
  a two-sided z-test of rate = p at the same α, Bonferroni over those conditions;
* Cash: losing tickets' stars show the top prize's amount no more often than winning tickets'
  non-matching stars (a one-sided two-proportion z-test at α = 0.001);
* Astro: no losing ticket shows a multiplying phrase, no win without multiplier the consolation
  phrase (exact counts).

``make test`` designs 200 000 tickets per game (Cash designs at ≈ 5 000–25 000 tickets/s on
this machine's shared core, so 1 000 000 take more than a minute); ``GRATTAGE_SOAK=1`` (or
``GRATTAGE_LEAK_DESIGNS=1000000``) runs 1 000 000 — the figures in docs/games.md are from that
size. The same checks, run on design-v1, find its leaks: that test is here too.
"""

from __future__ import annotations

import os

import pytest

from grattage.games import find_game
from grattage.games.astro import LOSING_PHRASES
from grattage.games.reveal_audit import CONSOLATION, FINDINGS

DESIGNS = int(
    os.environ.get(
        "GRATTAGE_LEAK_DESIGNS",
        "1000000" if os.environ.get("GRATTAGE_SOAK") == "1" else "200000",
    )
)
V1 = {"cash": "cash/2009-03-16/design-v1", "astro": "astro/2005-08-29/design-v1"}
assert set(LOSING_PHRASES) >= {CONSOLATION}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cash", "astro"])
def test_what_a_partial_reveal_shows_moves_the_chance_of_a_win_by_no_more_than_the_bounds(name):
    findings = FINDINGS[name](find_game(name), DESIGNS)
    assert findings.violations == [], "\n".join(findings.violations)
    assert len(findings.rates) >= 5


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cash", "astro"])
def test_the_same_measure_finds_design_v1s_leaks(name):
    findings = FINDINGS[name](find_game(name, rules_version=V1[name]), 50_000)
    assert findings.violations, "design-v1 leaks, and the measure must see it"


if (
    __name__ == "__main__"
):  # the figures of docs/games.md: python tests/unit/test_partial_reveals.py
    for game_name, measure in FINDINGS.items():
        for version in (V1[game_name], None):
            game = find_game(game_name, rules_version=version)
            found = measure(game, DESIGNS)
            print(f"== {game.rules_version}: {DESIGNS} designs, base rate {found.base_rate:.4f}")
            for condition, (tickets, ratio) in found.rates.items():
                print(f"  {condition:<48} {tickets:>8}  {ratio:.3f}")
            print(f"  violations: {len(found.violations)}")
            for line in found.violations[:12]:
                print(f"    {line}")
