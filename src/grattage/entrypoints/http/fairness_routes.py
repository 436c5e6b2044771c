"""Public fairness routes (docs/fairness.md): commitments, ticket proofs, disclosures."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from grattage.entrypoints.http.auth import current_caller, platform_of
from grattage.service import fairness
from grattage.service.model import Caller

router = APIRouter(prefix="/api", tags=["fairness"])

BlockId = Annotated[int, Path(ge=1, le=2**31 - 1)]
TicketId = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.get("/blocks")
def blocks(request: Request, game: Annotated[str | None, Query(max_length=32)] = None) -> Any:
    """Every block with its state, sales and Merkle root."""
    return {"blocks": fairness.public_blocks(platform_of(request), game)}


@router.get("/blocks/{block_id}/commitment")
def commitment(block_id: BlockId, request: Request) -> dict[str, Any]:
    """The block's commitment, published from its creation, before it opens; never changes."""
    return fairness.commitment(platform_of(request), block_id)


@router.get("/blocks/{block_id}/disclosure")
def disclosure(block_id: BlockId, request: Request) -> dict[str, Any]:
    """An exhausted or closed block's key and every tier (409 while it is pending or open)."""
    return fairness.disclosure(platform_of(request), block_id)


@router.get("/tickets/{ticket_id}/proof")
def ticket_proof(
    ticket_id: TicketId, caller: Annotated[Caller, Depends(current_caller)], request: Request
) -> dict[str, Any]:
    """The proof of one of the caller's finished tickets: check it with
    ``grattage verify-ticket``."""
    return fairness.ticket_proof(platform_of(request), caller.player_id, ticket_id)
