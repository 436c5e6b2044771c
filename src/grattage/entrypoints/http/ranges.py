"""The Range header of a file answer, read as RFC 9110 §14 says before Starlette serves it.

Starlette answers a malformed Range with a plain-text 400, and a set of ranges of which one
starts past the end with 416; RFC 9110 says instead that a server ignores an invalid Range
(§14.2: the whole file, 200) and answers 416 only when no range of the set is satisfiable
(§15.5.17). So the header is read here first: ignored when invalid or not in bytes, 416
(a JSON error, ``Content-Range: bytes */size``) when nothing is satisfiable, and otherwise
reduced to its satisfiable ranges, which Starlette serves (206, one part or multipart).
"""

from __future__ import annotations

import re

from fastapi.responses import FileResponse
from starlette.types import Receive, Scope, Send

from grattage.entrypoints.http.errors import error_response

_INT_RANGE = re.compile(r"^(\d+)-(\d*)$")
_SUFFIX_RANGE = re.compile(r"^-(\d+)$")
_MAX_RANGES = 100  # Starlette's bound too: a longer set is refused as a waste of the server


class Unsatisfiable(Exception):
    """No range of the header starts inside the file."""


def satisfiable_ranges(header: str, size: int) -> str | None:
    """The header keeping only its satisfiable ranges; None when it is to be ignored.

    Raises :class:`Unsatisfiable` for a valid set of ranges none of which is satisfiable."""
    unit, equals, specs = header.partition("=")
    if not equals or unit.strip().lower() != "bytes":
        return None  # an unknown range unit is ignored (RFC 9110 §14.2)
    parts = [part.strip() for part in specs.split(",")]
    if not 1 <= len(parts) <= _MAX_RANGES:
        return None
    kept = []
    for part in parts:
        if (whole := _INT_RANGE.match(part)) is not None:
            first, last = whole.group(1), whole.group(2)
            if last and int(last) < int(first):
                return None  # invalid: the whole header is ignored (RFC 9110 §14.1.1)
            if int(first) < size:
                kept.append(part)
        elif (suffix := _SUFFIX_RANGE.match(part)) is not None:
            if int(suffix.group(1)) > 0 and size > 0:
                kept.append(part)
        else:
            return None
    if not kept:
        raise Unsatisfiable
    return "bytes=" + ",".join(kept)


class RangedFile(FileResponse):
    """A FileResponse that serves the Range header read by :func:`satisfiable_ranges`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(name, value) for name, value in scope["headers"] if name != b"range"]
        size = self.stat_result.st_size if self.stat_result is not None else 0
        asked = [value for name, value in scope["headers"] if name == b"range"]
        if asked:
            try:
                kept = satisfiable_ranges(asked[0].decode("latin-1"), size)
            except Unsatisfiable:
                answer = error_response(
                    416, "range_not_satisfiable", f"no range asked starts within {size} bytes"
                )
                answer.headers["Content-Range"] = f"bytes */{size}"
                await answer(scope, receive, send)
                return
            if kept is not None:
                headers.append((b"range", kept.encode("latin-1")))
        await super().__call__({**scope, "headers": headers}, receive, send)
