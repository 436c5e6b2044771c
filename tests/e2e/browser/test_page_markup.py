"""The pages' HTML as the web module renders it (no browser needed): what the site's CSP and the
one base layout promise of every page."""

from __future__ import annotations

import re

import pytest

from grattage.entrypoints.web import PAGES, STATIC_DIR, TRY_PAGES, render_pages, render_try_pages


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return {**render_pages(), **render_try_pages()}


def test_every_page_has_a_template_and_an_address(pages: dict[str, str]) -> None:
    assert set(pages) == set(PAGES) | set(TRY_PAGES)
    assert all(PAGES[name] for name in PAGES)


@pytest.mark.parametrize("name", sorted(PAGES) + sorted(TRY_PAGES))
def test_no_page_has_an_inline_script_or_style_the_csp_would_block(
    pages: dict[str, str], name: str
) -> None:
    html = pages[name]
    scripts = re.findall(r"<script\b[^>]*>", html)
    assert scripts and all(re.search(r'\bsrc="/js/[a-z_]+\.js"', tag) for tag in scripts), scripts
    assert "<style" not in html
    assert not re.search(r"\sstyle=", html)
    assert not re.search(r"\son[a-z]+=", html)  # no inline event handlers either


@pytest.mark.parametrize("name", sorted(PAGES) + sorted(TRY_PAGES))
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


def test_the_try_pages_are_the_game_pages_in_the_try_mode_marked_as_such(
    pages: dict[str, str],
) -> None:
    for game in ("cash", "astro"):
        html = pages[f"/essai/{game}"]
        assert f'data-game="{game}" data-mode="try"' in html
        assert 'src="/js/game_page.js"' in html
        assert "Mode essai — argent fictif, aucun gain réel" in html
        assert "Solde fictif" in html and 'id="logout"' not in html
        assert 'data-mode="try"' not in pages[f"{game}.html"]
        assert "<title>Essai gratuit — " in html and "Essai" not in pages[f"{game}.html"][:300]
        assert f'href="/essai/{game}"' in pages[f"{game}.html"]
        assert f'href="/essai/{game}"' in pages[f"{game}_rules.html"]
    # The log-in page lists the try pages of the games on offer from /api/games (login.js), as
    # it does their rules; the browser test follows its « Essayer Cash » link.
    assert 'id="try-links"' in pages["login.html"]
    assert "/essai/" not in pages["login.html"]


def test_every_game_has_a_public_rules_page_at_the_address_the_api_names(
    pages: dict[str, str],
) -> None:
    from grattage.entrypoints.http.answers import rules_page
    from grattage.games import game_names

    for game in game_names():
        assert PAGES[f"{game}_rules.html"] == (rules_page(game),)
        html = pages[f"{game}_rules.html"]
        assert f'data-game="{game}"' in html
        assert 'src="/js/rules.js"' in html
        assert f'href="/regles/{game}"' in pages[f"{game}.html"]  # the game page links it
