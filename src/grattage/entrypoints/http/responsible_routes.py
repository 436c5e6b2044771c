"""A player's responsible-gaming routes: limits, self-exclusion, activity (docs/back-office.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from grattage.entrypoints.http.answers import ERRORS, ActivityAnswer
from grattage.entrypoints.http.auth import COOKIE, current_caller, platform_of
from grattage.entrypoints.http.schemas import ExclusionBody, LimitsBody
from grattage.service import responsible
from grattage.service.model import Caller
from grattage.service.records import Exclusion, Limits

router = APIRouter(prefix="/api/me", tags=["responsible gaming"], responses=ERRORS)

CallerDep = Annotated[Caller, Depends(current_caller)]


@router.get("/limits")
def limits(caller: CallerDep, request: Request) -> Limits:
    return responsible.limits(platform_of(request), caller.player_id)


@router.put("/limits")
def set_limits(body: LimitsBody, caller: CallerDep, request: Request) -> Limits:
    return responsible.set_limits(
        platform_of(request),
        caller.player_id,
        deposit_cents=body.deposit_weekly_cents,
        stake_cents=body.stake_weekly_cents,
    )


@router.get("/exclusion")
def exclusion(caller: CallerDep, request: Request) -> Exclusion:
    return responsible.exclusion(platform_of(request), caller.player_id)


@router.post("/exclusion", status_code=201)
def exclude(
    body: ExclusionBody, caller: CallerDep, request: Request, response: Response
) -> Exclusion:
    """The exclusion ends the account's sessions: the browser's cookie goes with them."""
    done = responsible.exclude(platform_of(request), caller.player_id, body.period)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="lax")
    return done


@router.get("/activity")
def activity(
    caller: CallerDep,
    request: Request,
    days: Annotated[int, Query(ge=1, le=366)] = responsible.HISTORY_DAYS,
) -> ActivityAnswer:
    found = responsible.activity(platform_of(request), caller.player_id, days)
    return ActivityAnswer(
        from_=found.since, to=found.until, days=list(found.days), totals=found.totals
    )
