"""Public fairness routes (docs/fairness.md): commitments, ticket proofs, disclosures."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse

from grattage.entrypoints.http.answers import (
    ERRORS,
    Commitment,
    Disclosure,
    PublicBlockList,
    TicketProof,
)
from grattage.entrypoints.http.auth import current_caller, platform_of
from grattage.service import fairness
from grattage.service.model import Caller

router = APIRouter(prefix="/api", tags=["fairness"], responses=ERRORS)

# The commitment, the proof and the disclosure go out as blocks.proofs made them, byte for
# byte what a verifier reads: their models document them and are not applied (a model
# would drop a field it did not know). test_answers.py checks the two agree.

BlockId = Annotated[int, Path(ge=1, le=2**31 - 1)]
TicketId = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.get("/blocks")
def blocks(
    request: Request, game: Annotated[str | None, Query(max_length=32)] = None
) -> PublicBlockList:
    """Every block with its state, sales and Merkle root."""
    return PublicBlockList(blocks=fairness.public_blocks(platform_of(request), game))


@router.get("/blocks/{block_id}/commitment", response_model=Commitment)
def commitment(block_id: BlockId, request: Request) -> JSONResponse:
    """The block's commitment, published from its creation, before it opens; never changes."""
    return JSONResponse(fairness.commitment(platform_of(request), block_id))


@router.get("/blocks/{block_id}/disclosure", response_model=Disclosure)
def disclosure(block_id: BlockId, request: Request) -> JSONResponse:
    """An exhausted or closed block's key and every tier (409 while it is pending or open)."""
    return JSONResponse(fairness.disclosure(platform_of(request), block_id))


@router.get("/tickets/{ticket_id}/proof", response_model=TicketProof)
def ticket_proof(
    ticket_id: TicketId, caller: Annotated[Caller, Depends(current_caller)], request: Request
) -> JSONResponse:
    """The proof of one of the caller's finished tickets: check it with
    ``grattage verify-ticket``."""
    return JSONResponse(fairness.ticket_proof(platform_of(request), caller.player_id, ticket_id))
