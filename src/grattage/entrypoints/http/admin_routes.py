"""The operator's API under ``/api/admin`` (see docs/back-office.md); each route calls the
service, and every route but the log-in needs an operator."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from grattage.adapters.passwords import HashingSlots
from grattage.entrypoints.http.admin_auth import (
    ADMIN_COOKIE,
    ADMIN_DEVICE_COOKIE,
    current_operator,
)
from grattage.entrypoints.http.answers import (
    ERRORS,
    AuditLog,
    AuditVerification,
    BlockList,
    JobList,
    JobStarted,
    OperatorMe,
    ReportAnswer,
    SessionOpened,
)
from grattage.entrypoints.http.auth import (
    client_address,
    first_log_in_refusal,
    keep_device,
    limit_log_ins,
    platform_of,
    request_token,
    require_csrf,
    set_session_cookie,
)
from grattage.entrypoints.http.schemas import EmissionBody, LoginBody
from grattage.errors import Busy, RateLimited
from grattage.games import find_game, load_table_bytes
from grattage.service import audit_trail, back_office, charts, emission_jobs, emissions, operators
from grattage.service.emission_jobs import JobRunner
from grattage.service.operators import OperatorCaller
from grattage.service.records import BlockDetail, EmissionJobRecord
from grattage.service.tool_ports import ChartRenderer

public = APIRouter(prefix="/api/admin", tags=["back-office"], responses=ERRORS)
router = APIRouter(prefix="/api/admin", tags=["back-office"], responses=ERRORS)

OperatorDep = Annotated[OperatorCaller, Depends(current_operator)]
BlockId = Annotated[int, Path(ge=1, le=2**31 - 1)]
JobId = Annotated[int, Path(ge=1, le=2**31 - 1)]
Format = Annotated[str, Query(pattern="^(csv|json)$")]
Day = Annotated[str | None, Query(max_length=10)]


@public.post("/sessions")
async def log_in(body: LoginBody, request: Request, response: Response) -> SessionOpened:
    """The rate limit and the hashing slot are taken here rather than as dependencies, so
    that a refusal (429, 503) can be audited with the address tried: the first of each
    minute per client (see docs/back-office.md)."""
    platform = platform_of(request)
    device = request.cookies.get(ADMIN_DEVICE_COOKIE, "")
    client = client_address(request)
    try:
        limit_log_ins(request)
        slots: HashingSlots = request.app.state.hashing_slots
        async with slots.slot():
            session = await run_in_threadpool(
                operators.log_in, platform, body.email, body.password, device, client
            )
    except (RateLimited, Busy) as refusal:
        if first_log_in_refusal(request):
            reason: Literal["rate_limited", "busy"] = (
                "rate_limited" if isinstance(refusal, RateLimited) else "busy"
            )
            await run_in_threadpool(
                operators.record_refused_log_in, platform, body.email, client, reason
            )
        raise
    set_session_cookie(request, response, ADMIN_COOKIE, session.token, samesite="strict")
    keep_device(request, response, ADMIN_DEVICE_COOKIE, "/api/admin/sessions", session.device)
    return SessionOpened(token=session.token, expires_at=session.expires_at)


@router.delete("/sessions", status_code=204)
def log_out(operator: OperatorDep, request: Request) -> Response:
    token, from_cookie = request_token(request, ADMIN_COOKIE)
    require_csrf(request, from_cookie)
    operators.log_out(platform_of(request), token, operator, client_address(request))
    response = Response(status_code=204)
    response.delete_cookie(ADMIN_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@router.get("/me")
def me(operator: OperatorDep) -> OperatorMe:
    return OperatorMe(email=operator.email, role="operator")


@router.post("/emissions", status_code=202)
def create_emission(
    body: EmissionBody, operator: OperatorDep, request: Request, response: Response
) -> JobStarted:
    """Checks the request, then makes the emission in the background: follow the job."""
    find_game(body.game)
    table = None
    if body.prize_table is not None:
        # surrogatepass: a lone surrogate (valid JSON "\ud800") becomes bytes the loader refuses
        table = load_table_bytes(
            body.game,
            body.prize_table.encode("utf-8", "surrogatepass"),
            body.prize_table_name or "prize table",
        )
    runner: JobRunner = request.app.state.jobs
    job_id = runner.start(body.game, body.blocks, table=table, actor=operator.actor)
    location = f"/api/admin/jobs/{job_id}"
    response.headers["Location"] = location
    return JobStarted(job_id=job_id, location=location)


@router.get("/jobs")
def jobs(operator: OperatorDep, request: Request) -> JobList:
    return JobList(jobs=emission_jobs.latest_jobs(platform_of(request)))


@router.get("/jobs/{job_id}")
def job(job_id: JobId, operator: OperatorDep, request: Request) -> EmissionJobRecord:
    return emission_jobs.job(platform_of(request), job_id)


@router.get("/blocks")
def blocks(
    operator: OperatorDep,
    request: Request,
    game: Annotated[str | None, Query(max_length=32)] = None,
) -> BlockList:
    return BlockList(blocks=back_office.blocks(platform_of(request), game))


@router.get("/blocks/{block_id}")
def block(block_id: BlockId, operator: OperatorDep, request: Request) -> BlockDetail:
    return back_office.block(platform_of(request), block_id)


def _change(request: Request, block_id: int, operator: OperatorCaller, action: str) -> BlockDetail:
    change = {
        "suspend": emissions.suspend_block,
        "resume": emissions.resume_block,
        "close": emissions.close_block,
        "open": emissions.open_block,
    }[action]
    change(platform_of(request), block_id, actor=operator.actor)
    return back_office.block(platform_of(request), block_id)


@router.post("/blocks/{block_id}/suspend")
def suspend(block_id: BlockId, operator: OperatorDep, request: Request) -> BlockDetail:
    return _change(request, block_id, operator, "suspend")


@router.post("/blocks/{block_id}/resume")
def resume(block_id: BlockId, operator: OperatorDep, request: Request) -> BlockDetail:
    return _change(request, block_id, operator, "resume")


@router.post("/blocks/{block_id}/close")
def close(block_id: BlockId, operator: OperatorDep, request: Request) -> BlockDetail:
    return _change(request, block_id, operator, "close")


@router.post("/blocks/{block_id}/open")
def open_(block_id: BlockId, operator: OperatorDep, request: Request) -> BlockDetail:
    return _change(request, block_id, operator, "open")


CHART_MEDIA_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


@router.get(
    "/blocks/{block_id}/charts/{chart}.{fmt}",
    response_class=Response,
    responses={200: {"content": {media: {} for media in CHART_MEDIA_TYPES.values()}}},
)
def chart(
    block_id: BlockId,
    chart: Annotated[str, Path(pattern="^(payout|tiers)$")],
    fmt: Annotated[str, Path(pattern="^(png|svg)$")],
    operator: OperatorDep,
    request: Request,
) -> Response:
    draw = charts.payout_chart if chart == "payout" else charts.tiers_chart
    renderer: ChartRenderer = request.app.state.charts
    image = draw(platform_of(request), renderer, block_id, fmt)
    return Response(image, media_type=CHART_MEDIA_TYPES[fmt], headers={"Cache-Control": "no-store"})


@router.get(
    "/reports/{kind}",
    response_model=ReportAnswer,
    responses={200: {"content": {"text/csv": {}}, "description": "JSON, or CSV if asked"}},
)
def report(
    kind: back_office.ReportKind,
    operator: OperatorDep,
    request: Request,
    format: Format = "json",
    from_: Annotated[str | None, Query(alias="from", max_length=10)] = None,
    to: Day = None,
) -> Response | ReportAnswer:
    since = back_office.parse_day(from_, "from")
    until = back_office.parse_day(to, "to")
    rows = back_office.report(platform_of(request), kind, since, until)
    if format == "csv":
        return PlainTextResponse(
            back_office.to_csv(kind, rows),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="grattage-{kind}.csv"'},
        )
    return ReportAnswer(report=kind, rows=rows)


@router.get("/audit")
def audit(
    operator: OperatorDep,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> AuditLog:
    entries = audit_trail.latest(platform_of(request), limit)
    return AuditLog(entries=entries)


@router.get("/audit/verify")
def audit_verify(operator: OperatorDep, request: Request) -> AuditVerification:
    result = audit_trail.verify(platform_of(request))
    return AuditVerification(
        clean=result.clean,
        entries=result.entries,
        first_bad=result.first_bad,
        problem=result.problem,
    )
