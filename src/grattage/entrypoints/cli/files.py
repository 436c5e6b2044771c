"""Files named on the command line, read as the commands need them: a file that cannot be read,
or is not UTF-8 text, is bad input (one line, exit 2), never a traceback."""

from __future__ import annotations

from pathlib import Path

from grattage.errors import InvalidInput


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise file_error(error) from None
    return decode_utf8(data, repr(str(path)))


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
