"""Public fairness routes (docs/fairness.md): commitments, ticket proofs, disclosures."""

from __future__ import annotations

import os
from pathlib import Path as FilePath
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import JSONResponse

from grattage.entrypoints.disclosures import disclosure_file
from grattage.entrypoints.draws_files import draws_path
from grattage.entrypoints.http.answers import ERRORS, PublicBlockList
from grattage.entrypoints.http.auth import current_caller, platform_of
from grattage.entrypoints.http.proof_answers import (
    Commitment,
    Disclosure,
    DrawnCommitment,
    TicketProof,
)
from grattage.entrypoints.http.ranges import RangedFile
from grattage.errors import NotFound
from grattage.service import draws_publication, fairness
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


@router.get("/blocks/{block_id}/commitment", response_model=Commitment | DrawnCommitment)
def commitment(block_id: BlockId, request: Request) -> JSONResponse:
    """The block's commitment, published from its creation, before it opens; never changes."""
    return JSONResponse(fairness.commitment(platform_of(request), block_id))


@router.get(
    "/blocks/{block_id}/disclosure",
    response_model=Disclosure,
    responses={206: {"description": "the part asked for by a Range header"}},
)
def disclosure(block_id: BlockId, request: Request) -> Response:
    """An exhausted or closed block's key and every tier (409 while it is pending or open),
    served from the file it was written to once, with ETag and Range support (an invalid
    Range is ignored; 416 when no range asked is satisfiable)."""
    directory: FilePath = request.app.state.settings.disclosure_dir
    path = disclosure_file(platform_of(request), directory, block_id)
    answer = RangedFile(path, media_type="application/json", stat_result=os.stat(path))
    if _matches(request.headers.get("if-none-match"), answer.headers["etag"]):
        # Starlette's FileResponse answers Range but not If-None-Match: the file is unchanged.
        return Response(status_code=304, headers={"ETag": answer.headers["etag"]})
    return answer


IMMUTABLE = "public, max-age=31536000, immutable"
"""A published draws file never changes: its SHA-256 is in the log."""


@router.get(
    "/blocks/{block_id}/draws",
    response_class=Response,
    responses={
        200: {
            "content": {"application/octet-stream": {}},
            "description": "the block's draws file (grattage-draws/1, docs/draw.md)",
        },
        206: {"description": "the part asked for by a Range header"},
        304: {"description": "unchanged: the ETag given is the file's SHA-256"},
    },
)
def draws(block_id: BlockId, request: Request) -> Response:
    """A drawn block's draws file (grattage-draws/1), once its ``disclosure.published`` entry
    binds its SHA-256 (404 before, and for a block that is not drawn): the file as written,
    its ``ETag`` that SHA-256, cacheable for ever; Range as the disclosure's."""
    sha256 = draws_publication.published_sha256(platform_of(request), block_id)
    path = draws_path(request.app.state.settings.disclosure_dir, block_id)
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        raise NotFound(f"block {block_id!r}'s draws file is not published here") from None
    headers = {"ETag": f'"{sha256}"', "Cache-Control": IMMUTABLE}
    if _matches(request.headers.get("if-none-match"), headers["ETag"]):
        return Response(status_code=304, headers=headers)
    return RangedFile(
        path,
        media_type="application/octet-stream",
        stat_result=stat,
        headers=headers,
        filename=path.name,
    )


def _matches(if_none_match: str | None, etag: str) -> bool:
    if if_none_match is None:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags


@router.get("/tickets/{ticket_id}/proof", response_model=TicketProof)
def ticket_proof(
    ticket_id: TicketId,
    caller: Annotated[Caller, Depends(current_caller)],
    request: Request,
    tree_size: Annotated[int | None, Query(ge=1, le=2**62)] = None,
) -> JSONResponse:
    """The proof of one of the caller's finished tickets, against the log's newest head or
    the one of ``tree_size`` (the head you pinned): check it with ``grattage verify-ticket``."""
    return JSONResponse(
        fairness.ticket_proof(platform_of(request), caller.player_id, ticket_id, tree_size)
    )
