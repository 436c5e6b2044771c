"""A player's responsible-gaming routes: limits, self-exclusion, activity (docs/back-office.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from grattage.entrypoints.http.auth import current_caller, platform_of
from grattage.entrypoints.http.schemas import ExclusionBody, LimitsBody
from grattage.service import responsible
from grattage.service.model import Caller

router = APIRouter(prefix="/api/me", tags=["responsible gaming"])

CallerDep = Annotated[Caller, Depends(current_caller)]


@router.get("/limits")
def limits(caller: CallerDep, request: Request) -> dict[str, Any]:
    return responsible.limits(platform_of(request), caller.player_id)


@router.put("/limits")
def set_limits(body: LimitsBody, caller: CallerDep, request: Request) -> dict[str, Any]:
    return responsible.set_limits(
        platform_of(request),
        caller.player_id,
        deposit_cents=body.deposit_weekly_cents,
        stake_cents=body.stake_weekly_cents,
    )


@router.get("/exclusion")
def exclusion(caller: CallerDep, request: Request) -> dict[str, Any]:
    return responsible.limits(platform_of(request), caller.player_id)["exclusion"]  # type: ignore[no-any-return]


@router.post("/exclusion", status_code=201)
def exclude(body: ExclusionBody, caller: CallerDep, request: Request) -> dict[str, Any]:
    return responsible.exclude(platform_of(request), caller.player_id, body.period)


@router.get("/activity")
def activity(
    caller: CallerDep,
    request: Request,
    days: Annotated[int, Query(ge=1, le=366)] = responsible.HISTORY_DAYS,
) -> dict[str, Any]:
    return responsible.activity(platform_of(request), caller.player_id, days)
