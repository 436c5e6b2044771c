"""The documentation is self-contained: every page's links lead to files of this repository,
and nothing in it points at the product spec or the regulations outside it (docs/games.md
restates them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "RELIABILITY.md", *sorted((ROOT / "docs").glob("*.md"))]
OUTSIDE = re.compile(r"GAMES\.md|shared/|seeds/|\]\(\.\./|`\.\./")
LINK = re.compile(r"\]\(([^)#\s]+)")


# docs/api.md is another branch's page (a11-api); its one pointer is fixed there. Strict: when
# the line is gone, this mark fails and must go too.
def _pages() -> list[object]:
    return [pytest.param(page, id=page.name) for page in PAGES]


@pytest.mark.parametrize("page", _pages())
def test_a_page_points_at_nothing_outside_the_repository(page: Path) -> None:
    text = page.read_text("utf-8")
    found = [text[: match.start()].count("\n") + 1 for match in OUTSIDE.finditer(text)]
    assert not found, f"{page.name} points outside the repository at lines {found}"


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_relative_link_of_a_page_leads_to_a_file_of_the_repository(page: Path) -> None:
    for target in LINK.findall(page.read_text("utf-8")):
        if target.startswith(("http://", "https://", "/")):
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name} links outside: {target}"
        assert resolved.exists(), f"{page.name} links to a missing file: {target}"


def test_no_source_or_test_file_names_the_outside_spec() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("src", "tests")
        for path in (ROOT / folder).rglob("*")
        if path.is_file()
        and path.suffix in {".py", ".toml", ".md", ".js", ".html"}
        and path != Path(__file__).resolve()
        and re.search(r"GAMES\.md|shared/seeds", path.read_text("utf-8", errors="replace"))
    ]
    assert not offenders
