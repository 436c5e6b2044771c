"""The texts printed on the tickets meet WCAG AA's contrast (issue 16): 4.5:1 against every
pixel of the background they sit on. axe cannot judge a text on a gradient (it leaves it
« incomplete »), so the background is measured here: the text is hidden, the box photographed,
and its lightest pixel compared with the text's colour."""

from __future__ import annotations

import io
from typing import Any

import pytest
from browser_helpers import player_with_balance, wait_for_result
from PIL import Image

pytestmark = pytest.mark.browser

AA_NORMAL_TEXT = 4.5
# What is written on a ticket's own background (not on a zone's, which is plain cream).
TICKET_TEXTS = {
    "cash": [".area-title", ".ticket-foot > span", ".ticket-foot strong"],
    "astro": [".sign-name", ".sign-summary > span"],
}

HIDE_TEXT_JS = """(element) => {
  const color = getComputedStyle(element).color;
  element.style.setProperty('color', 'transparent', 'important');
  element.style.setProperty('text-shadow', 'none', 'important');
  for (const child of element.querySelectorAll('*')) child.style.setProperty('visibility', 'hidden');
  // The text lies in the content box: not in the padding, where a pill's round corners end.
  const r = element.getBoundingClientRect();
  const style = getComputedStyle(element);
  const [top, right, bottom, left] = ['Top', 'Right', 'Bottom', 'Left'].map(
    (side) => parseFloat(style['padding' + side]) + parseFloat(style['border' + side + 'Width']));
  return {color, x: r.x + left, y: r.y + top, width: r.width - left - right,
          height: r.height - top - bottom};
}"""


def luminance(red: int, green: int, blue: int) -> float:
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def worst_contrast(page: Any, element: Any) -> float:
    """The text's contrast against the pixel of its background that is closest to it."""
    element.scroll_into_view_if_needed()
    found = element.evaluate(HIDE_TEXT_JS)
    page.wait_for_timeout(50)
    red, green, blue = (int(part) for part in found["color"][4:-1].split(",")[:3])
    text = luminance(red, green, blue)
    clip = {key: found[key] for key in ("x", "y", "width", "height")}
    picture = Image.open(io.BytesIO(page.screenshot(clip=clip))).convert("RGB")
    ratios = []
    for pixel in set(picture.getdata()):
        background = luminance(*pixel)
        light, dark = max(text, background), min(text, background)
        ratios.append((light + 0.05) / (dark + 0.05))
    return min(ratios)


@pytest.mark.parametrize("viewport", [(360, 740), (1366, 768)], ids=["phone", "laptop"])
@pytest.mark.parametrize("game", ["cash", "astro"])
def test_every_text_on_the_ticket_has_a_contrast_of_at_least_4_5_to_1(
    new_page: Any, live_server: Any, game: str, viewport: tuple[int, int]
) -> None:
    page = new_page(live_server.url, width=viewport[0], height=viewport[1])
    player_with_balance(page, 1000)
    page.goto(f"/{game}.html")
    page.wait_for_selector("#balance[data-cents='1000']")
    if game == "astro":
        page.get_by_role("radio", name="Gémeaux").click()
    page.get_by_role("button", name="Auto", exact=True).click()
    wait_for_result(page)
    if page.locator("#big-win").count():
        page.get_by_role("button", name="Continuer").click()
    low = []
    for selector in TICKET_TEXTS[game]:
        elements = page.locator(selector)
        assert elements.count() > 0, f"nothing matches {selector}"
        for index in range(elements.count()):
            ratio = worst_contrast(page, elements.nth(index))
            if ratio < AA_NORMAL_TEXT:
                low.append(f"{selector} #{index}: {ratio:.2f}:1")
    assert low == []
