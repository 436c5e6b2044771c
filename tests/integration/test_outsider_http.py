"""What an outsider's fuzzing of the API found (issue 11's review): bodies that are not UTF-8
are bad input (422, as documented), and a 405 says which methods the route allows."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


@pytest.mark.parametrize(
    "route", ["/api/players", "/api/sessions", "/api/games/cash/tickets", "/api/admin/sessions"]
)
def test_a_body_that_is_not_utf8_is_bad_input_422(client: TestClient, route: str) -> None:
    answer = client.post(route, content=b"\xff\xfe{", headers={"content-type": "application/json"})
    assert answer.status_code == 422
    assert answer.json() == {"error": "invalid_input", "message": "the body is not UTF-8 JSON"}


def test_a_method_a_route_does_not_take_answers_405_with_allow(client: TestClient) -> None:
    answer = client.delete("/api/games")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "GET"
    assert answer.json()["error"] == "method_not_allowed"
