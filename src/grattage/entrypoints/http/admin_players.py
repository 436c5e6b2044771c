"""The operator's routes about players, under ``/api/admin/players`` (docs/back-office.md,
"Players"): look-up, a player's file, suspending the account and lifting the suspension."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from grattage.entrypoints.http.admin_routes import OperatorDep
from grattage.entrypoints.http.answers import ERRORS, PlayerSearch
from grattage.entrypoints.http.auth import platform_of
from grattage.entrypoints.http.schemas import ReasonBody
from grattage.service import player_lookup, suspensions
from grattage.service.player_records import PlayerFile

router = APIRouter(prefix="/api/admin/players", tags=["back-office"], responses=ERRORS)

PlayerId = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.get("")
def search(
    operator: OperatorDep,
    request: Request,
    q: Annotated[str, Query(max_length=254)] = "",
    limit: Annotated[int, Query(ge=1, le=player_lookup.MAX_PAGE)] = 20,
    offset: Annotated[int, Query(ge=0, le=player_lookup.MAX_OFFSET)] = 0,
) -> PlayerSearch:
    """Accounts whose e-mail contains ``q``, whose names hold its words, or whose id it is."""
    found, following = player_lookup.search(platform_of(request), q, limit, offset)
    return PlayerSearch(players=found, next_offset=following)


@router.get("/{player_id}")
def player(player_id: PlayerId, operator: OperatorDep, request: Request) -> PlayerFile:
    return player_lookup.player_file(platform_of(request), player_id)


@router.post("/{player_id}/suspend")
def suspend(
    player_id: PlayerId, body: ReasonBody, operator: OperatorDep, request: Request
) -> PlayerFile:
    platform = platform_of(request)
    suspensions.suspend(platform, player_id, body.reason, actor=operator.actor)
    return player_lookup.player_file(platform, player_id)


@router.post("/{player_id}/reinstate")
def reinstate(
    player_id: PlayerId, body: ReasonBody, operator: OperatorDep, request: Request
) -> PlayerFile:
    platform = platform_of(request)
    suspensions.reinstate(platform, player_id, body.reason, actor=operator.actor)
    return player_lookup.player_file(platform, player_id)
