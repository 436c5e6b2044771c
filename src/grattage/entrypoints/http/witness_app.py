"""The witness's HTTP API (``grattage witness serve``; docs/witness.md): an app of its own, never
mounted in the operator's. Errors answer as the operator's API does (one table,
:mod:`grattage.entrypoints.http.errors`): ``{"error": code, "message": text}``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, FastAPI, Query, Request, Response
from fastapi import Path as InPath
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from grattage import __version__
from grattage.adapters.witness_store import SqliteWitnessStore
from grattage.entrypoints.http.errors import install_error_handlers
from grattage.entrypoints.http.limits import BodyLimits, LimitBodies
from grattage.errors import InvalidInput, NotFound
from grattage.service.witness import Witness
from grattage.settings import WitnessSettings

log = logging.getLogger("grattage.witness")

MAX_BODY_BYTES = 64 * 1024
RoundNumber = Annotated[int, Field(ge=1, le=2**62)]
ChainId = Annotated[str | None, Query(min_length=64, max_length=64, pattern="^[0-9a-f]{64}$")]


class CosignRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sth: dict[str, Any]
    """The operator's signed tree head, as its ``GET /api/log/sth`` answers it."""
    round: RoundNumber
    consistency: list[Annotated[str, Field(max_length=64)]] = Field(max_length=64)
    """RFC 9162 consistency proof from the last head this witness cosigned to ``sth``."""
    chain_id: Annotated[str | None, Field(pattern="^[0-9a-f]{64}$")] = None
    """The chain the round is of; the current chain when absent."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def create_witness_app(
    settings: WitnessSettings | None = None, clock: Callable[[], int] = wall_clock_ms
) -> FastAPI:
    settings = settings or WitnessSettings()
    if settings.operator_public_key is None:
        raise InvalidInput(
            "the witness cosigns only the heads of one operator: set "
            "GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY to its public key (hex)"
        )
    witness = Witness(
        SqliteWitnessStore(Path(settings.data_dir)),
        clock,
        bytes.fromhex(settings.operator_public_key),
        period_ms=round(settings.beacon_seconds * 1000),
        chain_length=settings.chain_length,
    )
    period = settings.beacon_seconds

    async def tick_forever() -> None:
        while True:
            try:
                await anyio.to_thread.run_sync(witness.tick)
            except Exception:  # the beacon needs no storage to go on; retry next period
                log.exception("the witness's tick failed; retrying")
            await asyncio.sleep(period)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(witness.tick)
        task = asyncio.create_task(tick_forever())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    app = FastAPI(
        title="grattage witness",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.witness = witness
    app.add_middleware(LimitBodies, limits=BodyLimits(default=MAX_BODY_BYTES))
    install_error_handlers(app)
    app.include_router(_routes(witness))

    @app.middleware("http")
    async def never_cached(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        # A 404 for a round not yet published must not be kept by a cache past its time.
        answer = await call_next(request)
        answer.headers["Cache-Control"] = "no-store"
        return answer

    return app


def _routes(witness: Witness) -> APIRouter:
    app = APIRouter(tags=["witness"])

    @app.get("/witness/key")
    def key() -> dict[str, str]:
        """The witness's Ed25519 public key: every document it publishes is signed by it."""
        return witness.key()

    @app.get("/witness/chain")
    def chain(chain_id: ChainId = None) -> dict[str, Any]:
        """The signed chain document of the current chain (or of ``chain_id``)."""
        return witness.chain_document(chain_id)

    @app.get("/witness/chains")
    def chains() -> dict[str, Any]:
        """Every chain this witness published, oldest first (the next one before it starts)."""
        return {"chains": witness.chain_documents()}

    @app.get("/witness/rounds/latest")
    def latest_round() -> dict[str, Any]:
        return witness.latest_round_document()

    @app.get("/witness/rounds/{round_number}")
    async def one_round(
        round_number: Annotated[int, InPath(ge=1, le=2**62)],
        wait: Annotated[bool, Query()] = False,
        chain_id: ChainId = None,
    ) -> dict[str, Any]:
        """Round ``round_number`` (404 before its time); ``wait=1``: wait for it, when it is at
        most two periods away."""
        if wait:
            delay = witness.round_wait_seconds(round_number, chain_id)
            deadline = time.monotonic() + delay + 1.0
            await asyncio.sleep(delay)
            while True:
                try:
                    return await run_in_threadpool(witness.round_document, round_number, chain_id)
                except NotFound:
                    if time.monotonic() > deadline:
                        raise
                    await asyncio.sleep(0.005)  # the clock's millisecond not yet reached
        # on a thread: publishing a round first waits for the cosignings still being stored
        return await run_in_threadpool(witness.round_document, round_number, chain_id)

    @app.post("/witness/cosign")
    def cosign(request: CosignRequest) -> dict[str, Any]:
        """Cosign the operator's tree head for a round not yet published (409 otherwise, and for
        a head that does not extend the last one cosigned)."""
        return witness.cosign(request.sth, request.round, request.consistency, request.chain_id)

    @app.get("/witness/cosigned")
    def cosigned(
        round_number: Annotated[int, Query(alias="round", ge=1, le=2**62)],
        chain_id: ChainId = None,
    ) -> dict[str, Any]:
        """Every head cosigned for the round, as ``{"sth", "cosignature"}``, oldest first."""
        return {"round": round_number, "heads": witness.cosigned(round_number, chain_id)}

    @app.get("/witness/cosigned/last")
    def last_cosigned() -> dict[str, Any]:
        """The last head cosigned: the next head's consistency proof starts from it."""
        return witness.last_cosigned()

    return app


def witness_app_from_environment() -> FastAPI:
    """The app of ``grattage witness serve`` (a uvicorn factory)."""
    return create_witness_app(WitnessSettings())
