"""The two legs of a movement row, for the queries that read the ledger (migration 0017).

A movement stores one transfer: ``amount_cents`` taken from ``from_account_id`` (its leg:
−amount) and added to ``to_account_id`` (+amount). The reports, the limits and the back office
want the players' side of each movement, reconciliation every account's legs; these are the
two ways to read them, data-driven as the entries were (the side is found by the account's
kind, never assumed from the movement's kind).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, case, or_, select, union_all

from grattage.adapters.tables import accounts, movements

_M = movements.c

_receiver = accounts.alias("receiver")
_payer = accounts.alias("payer")


def legs() -> Any:
    """Every leg as a row (``movement_id``, ``account_id``, ``amount_cents``), as ``entries``
    held them: for the aggregates over every account."""
    return union_all(
        select(
            _M.id.label("movement_id"),
            _M.from_account_id.label("account_id"),
            (-_M.amount_cents).label("amount_cents"),
        ),
        select(_M.id, _M.to_account_id, _M.amount_cents),
    ).subquery("legs")


def with_player_sides(joined: Any) -> Any:
    """``joined`` (a selectable holding ``movements``) with the players' accounts among each
    movement's two: the receiving one and the paying one, each NULL when it is the house's."""
    return joined.outerjoin(
        _receiver, and_(_receiver.c.id == _M.to_account_id, _receiver.c.kind == "player")
    ).outerjoin(_payer, and_(_payer.c.id == _M.from_account_id, _payer.c.kind == "player"))


PLAYERS_AMOUNT: ColumnElement[Any] = case(
    (_receiver.c.id.is_not(None), _M.amount_cents), else_=0
) - case((_payer.c.id.is_not(None), _M.amount_cents), else_=0)
"""What the movement added to players' accounts (negative: took); under
:func:`with_player_sides`."""

ON_A_PLAYER: ColumnElement[bool] = or_(_receiver.c.id.is_not(None), _payer.c.id.is_not(None))
"""The movement has a leg on a player's account (as the join on ``entries`` required)."""


def amount_for(account_id: Any) -> ColumnElement[Any]:
    """What the movement added to ``account_id`` (negative: took; 0: not one of its legs)."""
    return case(
        (_M.to_account_id == account_id, _M.amount_cents),
        (_M.from_account_id == account_id, -_M.amount_cents),
        else_=0,
    )


def touches(account_id: Any) -> ColumnElement[bool]:
    """The movement has a leg on ``account_id``."""
    return or_(_M.to_account_id == account_id, _M.from_account_id == account_id)
