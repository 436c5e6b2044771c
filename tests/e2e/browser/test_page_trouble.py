"""The harness itself: what it counts as trouble on a page, which fails the test that saw it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import PageTrouble

pytestmark = pytest.mark.browser


@pytest.fixture
def watched(browser: Any, live_server: Any) -> Iterator[tuple[Any, PageTrouble]]:
    """A page watched by a PageTrouble of the test's own (not the one that fails tests)."""
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    trouble = PageTrouble()
    trouble.watch(page)
    yield page, trouble
    context.close()


def test_an_inline_script_blocked_by_the_pages_csp_is_trouble(watched: Any) -> None:
    page, trouble = watched
    page.goto("/login")
    page.wait_for_selector("#login-form")
    with pytest.raises(Exception, match="Content Security Policy|Refused"):
        page.add_script_tag(content="document.title = 'inline'")
    page.wait_for_timeout(200)
    assert any("Content Security Policy" in error for error in trouble.errors), trouble.errors


def test_a_console_error_is_trouble(watched: Any) -> None:
    page, trouble = watched
    page.goto("/login")
    page.evaluate("console.error('something broke')")
    page.wait_for_timeout(200)
    assert any("something broke" in error for error in trouble.errors), trouble.errors


def test_a_missing_file_is_trouble_but_the_apis_4xx_answers_are_not(watched: Any) -> None:
    page, trouble = watched
    page.goto("/")  # not logged in: /api/me answers 401 and the page goes to log in
    page.wait_for_url("**/login.html?next=*")
    page.wait_for_selector("#login-form")
    assert trouble.errors == []
    page.evaluate(
        "document.head.append(Object.assign(document.createElement('link'), {rel: 'stylesheet', href: '/css/missing.css'}))"
    )
    page.wait_for_timeout(300)
    assert any("missing.css" in error for error in trouble.errors), trouble.errors
