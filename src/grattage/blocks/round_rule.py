"""The round a drawn sale's receipt must name (docs/draw.md, "The round of a sale"): fixed by
the receipt's own ``time`` and the block's previous receipt, so that the operator cannot pick
the round — and so the witness's value — a sale is drawn with. Standard library only.

The server names the round with :func:`round_by_rule`; a monitor checks it with
:func:`check_round_rule`, exactly when it is told the server's margin, else with what holds
for every margin up to a period.
"""

from __future__ import annotations

from collections.abc import Sequence

from grattage.blocks.beacon import BeaconChain
from grattage.errors import VerificationFailed

Beacon = tuple[str, int]
"""(chain id, round number)."""


def round_by_rule(
    chains: Sequence[BeaconChain], time_ms: int, margin_ms: int, not_before_ms: int | None
) -> tuple[BeaconChain, int] | None:
    """The first round at least ``margin_ms`` (at most one period) after ``time_ms``, or the
    block's previous receipt's round (its time ``not_before_ms``) if that one is later — in
    the first of ``chains`` (in the order of their start) that still has one; None if none
    has."""
    for chain in sorted(chains, key=lambda chain: chain.start_ms):
        margin = min(margin_ms, chain.period_ms)
        target = max(time_ms + margin, not_before_ms or 0)
        elapsed = target - chain.start_ms
        number = max(1, -(-elapsed // chain.period_ms) + 1)
        if number <= chain.length:
            return chain, number
    return None


def check_round_rule(
    n: int,
    named: Beacon,
    time_ms: int,
    previous: tuple[Beacon, int | None] | None,
    chains: Sequence[BeaconChain],
    margin_ms: int | None,
) -> None:
    """Sale ``n``'s receipt names round ``named`` at ``time_ms``; ``previous`` is the block's
    previous receipt's round and its time (None for the first sale; its time None when its
    chain is unknown), ``chains`` those known. With ``margin_ms`` the round must be the rule's;
    without, it is the previous receipt's, or one whose time is at least ``time_ms`` and the
    round before it earlier than ``time_ms`` + a period. A round not on a chain known is left
    to the draw's own checks (it cannot be drawn)."""
    chain = next((chain for chain in chains if chain.chain_id == named[0]), None)
    if chain is None:
        return
    if margin_ms is not None:
        not_before = None if previous is None else previous[1]
        if previous is not None and not_before is None:
            return  # the previous receipt's round is on a chain not logged: its time unknown
        expected = round_by_rule(chains, time_ms, margin_ms, not_before)
        if expected is None or (expected[0].chain_id, expected[1]) != named:
            rule = "none" if expected is None else f"round {expected[1]}"
            raise VerificationFailed(
                f"receipt {n} names round {named[1]}, but its time and the previous receipt's "
                f"round give {rule} (margin {margin_ms} ms): a round the operator chose"
            )
        return
    if previous is not None and previous[0] == named:
        return
    round_ms = chain.round_time_ms(named[1])
    if round_ms < time_ms or round_ms - chain.period_ms >= time_ms + chain.period_ms:
        raise VerificationFailed(
            f"receipt {n} names round {named[1]} (at {round_ms} ms) for a sale at {time_ms} ms: "
            "neither the previous receipt's round nor one of the two the rule allows for any "
            "margin — a round the operator chose"
        )
