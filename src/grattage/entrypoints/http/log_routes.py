"""The transparency log's public routes (docs/fairness.md, "The transparency log"): what a
monitor or a verifier asks, answered as RFC 9162's get-sth, get-entries, get-proof and
get-sth-consistency are, over JSON."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from grattage.entrypoints.http.answers import (
    ERRORS,
    ConsistencyProof,
    DrawRule,
    InclusionProof,
    LogEntries,
    LogKey,
    SignedTreeHead,
)
from grattage.entrypoints.http.auth import platform_of
from grattage.service import transparency

router = APIRouter(prefix="/api/log", tags=["transparency log"], responses=ERRORS)

Index = Annotated[int, Query(ge=0, le=2**62)]
Size = Annotated[int, Query(ge=1, le=2**62)]


@router.get("/key")
def key(request: Request) -> LogKey:
    """The operator's Ed25519 public key: commitments, receipts and tree heads are signed by it."""
    return LogKey(**transparency.operator_key(platform_of(request)))


@router.get("/draw-rule")
def draw_rule(request: Request) -> DrawRule:
    """The server's draw margin: each drawn receipt names the first round at least this long
    after its time (or its block's previous receipt's round, if later)."""
    return DrawRule(draw_margin_ms=platform_of(request).policy.draw_margin_ms)


@router.get("/sth")
def signed_tree_head(request: Request, tree_size: Size | None = None) -> SignedTreeHead:
    """The newest signed tree head, or the one signed at ``tree_size`` (404 if none was)."""
    return SignedTreeHead(**transparency.current_head(platform_of(request), tree_size).to_json())


@router.get("/entries")
def entries(request: Request, start: Index, end: Index) -> LogEntries:
    """Entries ``start`` to ``end`` inclusive, at most 1 000: ask again from the next index."""
    return LogEntries.model_validate(
        {"entries": transparency.entries(platform_of(request), start, end)}
    )


@router.get("/proof")
def inclusion_proof(request: Request, index: Index, tree_size: Size) -> InclusionProof:
    """The RFC 9162 inclusion proof (audit path) of entry ``index`` in the tree of
    ``tree_size`` entries."""
    return InclusionProof(**transparency.inclusion(platform_of(request), index, tree_size))


@router.get("/consistency")
def consistency_proof(request: Request, first: Size, second: Size) -> ConsistencyProof:
    """The RFC 9162 consistency proof from the tree of ``first`` entries to ``second``."""
    return ConsistencyProof(**transparency.consistency(platform_of(request), first, second))
