"""Files named on the command line, read as the commands need them: a file that cannot be read,
or is not UTF-8 text, is bad input (one line, exit 2), never a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from grattage.errors import InvalidInput

if TYPE_CHECKING:
    from grattage.games import PrizeTable

MAX_FILE_BYTES = 256 * 1024 * 1024
"""The largest file a command reads (a 12 000 000-unit block's disclosure is about 16 MB): a
bigger one, or an endless one such as /dev/zero, is refused after that many bytes."""

BLOCK_ID = click.IntRange(1, 2**63 - 1)
"""A block id as the database stores it (a 64-bit integer)."""


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``."""
    data = read_bytes(path, MAX_FILE_BYTES)
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(f"{str(path)!r} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    return decode_utf8(data, repr(str(path)))


def read_bytes(path: Path, most: int) -> bytes:
    """The bytes of ``path``, read no further than ``most + 1`` bytes (so that the caller can
    refuse a bigger file, or an endless one such as /dev/zero, without reading it all)."""
    try:
        with path.open("rb") as file:
            return file.read(most + 1)
    except OSError as error:
        raise file_error(error) from None


def read_prize_table(game: str | None, path: Path) -> PrizeTable:
    """The operator's table file ``path`` (``--prize-table``), for ``game`` or, if ``None``, for
    the game it names: every rule checked, any bytes refused in one line (exit 2)."""
    from grattage.games import load_table_bytes  # the games load only for commands using them
    from grattage.games.table_limits import MAX_TABLE_FILE_BYTES

    return load_table_bytes(game, read_bytes(path, MAX_TABLE_FILE_BYTES), str(path))


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


def read_document(path: Path, what: str, *formats: str) -> dict[str, Any]:
    """A JSON object whose ``format`` is one of ``formats``. A file that is not such a document
    at all (another kind of file, an array, no format) is bad input, exit 2; a document that
    claims the format and then fails its checks is the verifier's to refuse (exit 1)."""
    data = parse_json(read_text(path), repr(str(path)))
    if not isinstance(data, dict) or data.get("format") not in formats:
        expected = " or ".join(formats)
        raise InvalidInput(f"{str(path)!r} is not {what} (format {expected} expected)")
    return data


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
