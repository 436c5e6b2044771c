"""Files named on the command line, read as the commands need them: a file that cannot be read,
or is not UTF-8 text, is bad input (one line, exit 2), never a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import click

from grattage.errors import InvalidInput

MAX_FILE_BYTES = 256 * 1024 * 1024
"""The largest file a command reads (a 12 000 000-unit block's disclosure is about 16 MB): a
bigger one, or an endless one such as /dev/zero, is refused after that many bytes."""

BLOCK_ID = click.IntRange(1, 2**63 - 1)
"""A block id as the database stores it (a 64-bit integer)."""


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise file_error(error) from None
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(f"{str(path)!r} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    return decode_utf8(data, repr(str(path)))


def lines_of(source: BinaryIO) -> Iterator[bytes]:
    """The lines of ``source``, each at most :data:`MAX_FILE_BYTES` (an endless line is refused)."""
    while line := source.readline(MAX_FILE_BYTES + 1):
        if len(line) > MAX_FILE_BYTES:
            raise InvalidInput(f"a line is longer than {MAX_FILE_BYTES // 2**20} MiB")
        yield line


def parse_json(text: str, what: str) -> Any:
    """A JSON document; malformed, too deeply nested or with a number too long is bad input."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what} is not a JSON document: {exc}") from None
    except RecursionError:
        raise InvalidInput(f"{what} is nested too deeply") from None
    except ValueError as exc:  # an integer of more digits than Python converts (PEP 651's limit)
        raise InvalidInput(f"{what}: {exc}") from None


def file_error(error: OSError) -> InvalidInput:
    """A file named on the command line that cannot be read or written, as bad input."""
    where = f": {error.filename!r}" if error.filename is not None else ""
    return InvalidInput(f"{error.strerror or error}{where}")


def decode_utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidInput(
            f"{what} is not UTF-8 text (byte {error.start}: {data[error.start : error.end]!r})"
        ) from None
