"""The national exclusion register as a file: a CSV of last name, first name, birth date.

France: the ANJ's « fichier des interdits de jeux », as the operator receives it. The file is
UTF-8 (a BOM is allowed), one person a row: ``last_name,first_name,birth_date`` with the
birth date as YYYY-MM-DD; a first row naming those columns is skipped, blank rows too. Names
are normalised as at sign-up (:func:`grattage.service.identity.person`), so a row matches
whatever the spelling of case, accents, spaces, hyphens and apostrophes.

A bad file (not UTF-8, over :data:`MAX_BYTES`, a row without three fields, a bad date or name)
is refused when the server starts, naming the row. The file is re-read when it changes (its
modification time or size); a change that cannot be read is logged and the previous list is
kept, so a request never fails for it and no one listed slips through meanwhile.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import threading
from datetime import date
from pathlib import Path

from grattage.errors import GrattageError, InvalidInput
from grattage.service.identity import person

log = logging.getLogger("grattage.exclusion_register")

MAX_BYTES = 64 * 1024 * 1024
"""About a million rows: far above any national register, far below a memory problem."""
HEADER = ["last_name", "first_name", "birth_date"]


def _birth_date(text: str) -> date:
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        raise ValueError("not YYYY-MM-DD")
    return date.fromisoformat(text)


def parse_register(data: bytes, where: str) -> frozenset[str]:
    """The person keys of a register file's bytes; InvalidInput naming the bad row."""
    if len(data) > MAX_BYTES:
        raise InvalidInput(f"the exclusion register {where} is over {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidInput(
            f"the exclusion register {where} is not UTF-8 (byte {error.start})"
        ) from None
    keys: set[str] = set()
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        for row in reader:
            cells = [cell.strip() for cell in row]
            if not any(cells) or [cell.lower() for cell in cells] == HEADER:
                continue
            line = reader.line_num
            if len(cells) != 3:
                raise InvalidInput(
                    f"the exclusion register {where}, row {line}: expected "
                    f"last_name,first_name,birth_date, got {len(cells)} fields"
                )
            last, first, born = cells
            try:
                birth = _birth_date(born)
            except ValueError:
                raise InvalidInput(
                    f"the exclusion register {where}, row {line}: birth date {born[:40]!r} "
                    "is not YYYY-MM-DD"
                ) from None
            try:
                keys.add(person(first, last, birth).key)
            except InvalidInput:
                # The row's names stay out of the message, so out of the logs: the register
                # is personal data of the most sensitive kind.
                raise InvalidInput(
                    f"the exclusion register {where}, row {line}: a name is 1 to 100 letters,"
                    " spaces, hyphens and apostrophes, in one script"
                ) from None
    except csv.Error as error:
        raise InvalidInput(f"the exclusion register {where} is not CSV: {error}") from None
    return frozenset(keys)


class FileExclusionRegister:
    """:class:`~grattage.service.tool_ports.ExclusionRegister` over a CSV file, re-read
    on change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp, self._keys = self._read()
        log.info("exclusion register %s: %d people", path, len(self._keys))

    def _read(self) -> tuple[tuple[int, int], frozenset[str]]:
        where = repr(str(self.path))
        try:
            stat = os.stat(self.path)
            if stat.st_size > MAX_BYTES:
                raise InvalidInput(f"the exclusion register {where} is over {MAX_BYTES} bytes")
            with open(self.path, "rb") as file:
                data = file.read(MAX_BYTES + 1)
        except OSError as error:
            raise InvalidInput(
                f"cannot read the exclusion register {where}: {error.strerror}"
            ) from None
        return (stat.st_mtime_ns, stat.st_size), parse_register(data, where)

    def _current(self) -> frozenset[str]:
        try:
            stat = os.stat(self.path)
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = (-1, -1)  # gone: reading it below fails, is logged, keeps the list
        if stamp == self._stamp:
            return self._keys
        with self._lock:
            if stamp != self._stamp:
                try:
                    self._stamp, self._keys = self._read()
                    log.info("exclusion register %s re-read: %d people", self.path, len(self._keys))
                except GrattageError as error:
                    log.error("%s; keeping the previous list", error.message)
                    self._stamp = stamp  # logged once per change, not once per request
        return self._keys

    def lists(self, person_key: str) -> bool:
        return person_key in self._current()
