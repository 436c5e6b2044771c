"""The service answers reconciliation as data; the CLI words every check and every rule."""

from __future__ import annotations

from typing import get_args

from grattage.entrypoints.cli.books import CHECK_TEXT, RULE_TEXT, describe
from grattage.service.reconcile import CHECKS, Check, Discrepancy, Rule


def test_every_check_runs_and_has_words() -> None:
    assert set(CHECKS) == set(get_args(Check)) == set(CHECK_TEXT)


def test_every_rule_has_words() -> None:
    assert set(get_args(Rule)) == set(RULE_TEXT)


def test_a_discrepancy_is_worded_with_its_exact_figures() -> None:
    found = Discrepancy(
        "prize_not_paid_once",
        {"ticket": 7, "prize_cents": 2000, "prize_movements": 2, "credited_cents": 4000},
    )
    assert describe(found) == (
        "ticket 7: won 2000 cents but has 2 prize movements crediting 4000 cents"
    )
