"""The bounds of a prize table file, and how its raw bytes become text or one line of refusal.

Every bound says why it is there; docs/games.md ("The table file") lists them for operators.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from grattage.errors import InvalidPrizeTable

if TYPE_CHECKING:
    from grattage.games.table import Tier

MAX_TABLE_FILE_BYTES = 1024 * 1024
"""A prize table is a few kilobytes (255 tiers fill about 15 kB): a bigger file is refused
before it is parsed."""

MAX_TIERS = 255
"""Tier indexes are stored on one byte per unit, 0 being the losing tier."""

MAX_BLOCK_UNITS = 100_000_000
MAX_UNITS_REASON = (
    "generating a block holds one byte per unit twice (tiers and their shuffle) and hashes "
    "every unit into the commitment: 100 000 000 units is about 200 MB and up to half an hour "
    "on this 2-core machine"
)
"""The largest block this machine generates in reasonable memory and time (the reason is part
of the refusal, so that an operator knows it is not arbitrary). Measured: a 4 500 000-unit
block's shuffle takes 1.3 s and its commitment tree 72 s on one core of the shared machine
(57 MB resident), i.e. about 16 µs a unit."""

MAX_INT64 = 2**63 - 1
"""Amounts and the block's total prizes are stored in signed 64-bit database integers."""

MAX_PRICE_CENTS = 10_000
"""100 €: French scratch games cost 0,50 € to 10 €; anything dearer is a typo in cents."""

MAX_TITLE_CHARS = 200
MAX_SOURCE_CHARS = 500
"""The title is shown in the lobby and on the game page; the source in the back office."""

MAX_SHOWS = 16
MAX_AMOUNTS = 32
"""Cash lists every sum of up to 5 of its amounts (the real game has 11): with 255 amounts a
3 kB table kept the check busy for minutes; with 32, 40 rows take 0.3 s."""

LEGACY_PRICES_CENTS: dict[str, int] = {"cash": 500, "astro": 200}
"""The price of every table of these games committed before tables carried ``price_cents``
(it was then fixed in the game's code): a stored table without a price has this one."""

_SHOWN_CHARS = 60


def decode_table_bytes(data: bytes, where: str) -> str:
    """UTF-8 text from a file's bytes (a leading UTF-8 byte-order mark is dropped), or one line.

    A UTF-8 BOM is what Windows' Notepad and spreadsheet exports put first: it carries no
    content, so it is stripped rather than refused. UTF-16 and UTF-32 are refused by name
    (they are what "Unicode" means in those tools), any NUL byte as binary data."""
    if len(data) > MAX_TABLE_FILE_BYTES:
        raise InvalidPrizeTable(
            f"{where}: {len(data):,} bytes is larger than a prize table "
            f"(at most {MAX_TABLE_FILE_BYTES // 1024} KiB)"
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InvalidPrizeTable(
            f"{where}: UTF-16 or UTF-32 text (byte-order mark {data[:2].hex(' ')}): "
            "save the file as UTF-8"
        )
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidPrizeTable(
            f"{where}: not UTF-8 text (byte {error.start}: {data[error.start : error.end]!r})"
        ) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise InvalidPrizeTable(f"{where}: binary data (a NUL character at {nul}), not a text file")
    return text


def bad_text(value: str, most: int, *, may_be_empty: bool = False) -> str | None:
    """What is wrong with ``value`` as a one-line label of at most ``most`` characters, if any."""
    if not value.strip() and not (may_be_empty and value == ""):
        return "is empty"
    if len(value) > most:
        return f"is {len(value):,} characters long (at most {most})"
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            return f"holds the control or invisible character U+{ord(char):04X}"
    return None


_UNSHOWN = frozenset(("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"))
"""Unicode categories a message never carries: line breaks, and the invisible and bidi
controls (U+202E would turn the rest of a line around), as titles refuse them."""


def one_line(text: str) -> str:
    """``text`` with every control or invisible character replaced by U+FFFD, so that a message
    stays one line and reads in the order it was written."""
    return "".join("�" if unicodedata.category(c) in _UNSHOWN else c for c in text)


def shown(value: object) -> str:
    """``value`` as a refusal quotes it: its repr, cut short (a 10 MB title is not echoed)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 96:
        return f"an integer of {value.bit_length():,} bits"
    try:
        text = repr(value)
    except RecursionError:
        return "a value nested too deeply"
    return text if len(text) <= _SHOWN_CHARS else f"{text[: _SHOWN_CHARS - 1]}…"


def check_totals(tiers: tuple[Tier, ...], block_size: int, where: str) -> None:
    """Distinct prizes, and running totals within the block and within 64 bits, row by row."""
    seen: dict[int, int] = {}
    prizes = total = 0
    for tier in tiers:
        if tier.prize_cents in seen:
            raise InvalidPrizeTable(
                f"{where}: row {tier.index} repeats the prize {tier.prize_cents!r} "
                f"of row {seen[tier.prize_cents]}"
            )
        seen[tier.prize_cents] = tier.index
        prizes += tier.count
        total += tier.count * tier.prize_cents
        if prizes > block_size:
            raise InvalidPrizeTable(
                f"{where}: row {tier.index}: the block is too small for its prizes: "
                f"{prizes:,} prizes up to this row in a block of {block_size:,}"
            )
        if total > MAX_INT64:
            raise InvalidPrizeTable(
                f"{where}: row {tier.index}: the block's prizes up to this row exceed "
                "2^63 - 1 cents (the largest total the books hold)"
            )


def int_within(value: object, low: int, high: int) -> bool:
    """An integer (never a bool, never a float) from ``low`` to ``high``."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


MAX_NESTING = 8
"""The deepest a table file's values go (a row's ``shows`` are 4 levels down): deeper is
refused whatever the interpreter's recursion limit, which other code may have raised."""


def nested_deeper_than(value: object, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` (parsed TOML) holds lists or tables more than ``limit`` levels deep;
    walked without recursion."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = list(item)
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
