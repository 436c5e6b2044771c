"""The pages' HTML as the web module renders it (no browser needed): what the site's CSP and the
one base layout promise of every page."""

from __future__ import annotations

import re

import pytest

from grattage.entrypoints.web import PAGES, STATIC_DIR, render_pages


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return render_pages()


def test_every_page_has_a_template_and_an_address(pages: dict[str, str]) -> None:
    assert set(pages) == set(PAGES)
    assert all(PAGES[name] for name in PAGES)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_page_has_an_inline_script_or_style_the_csp_would_block(
    pages: dict[str, str], name: str
) -> None:
    html = pages[name]
    scripts = re.findall(r"<script\b[^>]*>", html)
    assert scripts and all(re.search(r'\bsrc="/js/[a-z_]+\.js"', tag) for tag in scripts), scripts
    assert "<style" not in html
    assert not re.search(r"\sstyle=", html)
    assert not re.search(r"\son[a-z]+=", html)  # no inline event handlers either


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_page_loads_the_stylesheet_before_its_body_and_files_that_exist(
    pages: dict[str, str], name: str
) -> None:
    html = pages[name]
    head, _, _ = html.partition("<body")
    for sheet in ("base", "games", "pages"):  # in the head: no flash of an unstyled page
        assert f'<link rel="stylesheet" href="/css/{sheet}.css">' in head
    for path in re.findall(r'(?:src|href)="(/(?:js|css|img)/[^"]+)"', html):
        assert (STATIC_DIR / path.lstrip("/")).is_file(), path


def test_the_game_pages_name_their_game_for_the_shared_controller(pages: dict[str, str]) -> None:
    for game in ("cash", "astro"):
        html = pages[f"{game}.html"]
        assert f'data-game="{game}"' in html
        assert 'src="/js/game_page.js"' in html
