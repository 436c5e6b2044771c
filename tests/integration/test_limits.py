"""Bounded inputs (issue 13): bodies over their route's limit are refused with 413 before they
are read whole, report days and periods are bounded (422, never a 500), and a block's
disclosure is built once and served from its file with ETag and Range."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.requests import Request

from grattage.blocks.proofs_v2 import verify_disclosure
from grattage.entrypoints import disclosures
from grattage.entrypoints.http.limits import BodyLimits, BodyTooLarge, LimitBodies
from grattage.service import emissions, fairness, operators
from support import PASSWORD, World

OPERATOR = "limits-operator@example.org"


@pytest.fixture
def admin(world: World, client: TestClient) -> dict[str, str]:
    operators.create(world.platform, OPERATOR, PASSWORD)
    response = client.post("/api/admin/sessions", json={"email": OPERATOR, "password": PASSWORD})
    client.cookies.clear()
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _too_large(response: Any) -> bool:
    status = getattr(response, "status_code", None)
    return status == 413 and response.json()["error"] == "too_large"


def test_a_json_body_over_64_kib_is_refused_with_413_from_its_content_length(
    client: TestClient, world: World
) -> None:
    body = json.dumps({"email": "a@b.fr", "password": "x" * (64 * 1024)}).encode()
    response = client.post(
        "/api/sessions", content=body, headers={"Content-Type": "application/json"}
    )
    assert _too_large(response), response.text
    assert "65536" in response.json()["message"]


def test_a_chunked_body_is_refused_with_413(client: TestClient, world: World) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: Transfer-Encoding chunked
        yield b'{"email": "a@b.fr", "password": "'
        for _ in range(10):
            yield b"x" * 16_384
        yield b'"}'

    response = client.post(
        "/api/sessions", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert _too_large(response), response.text


def test_reading_a_body_without_a_length_stops_the_moment_it_passes_the_limit() -> None:
    # The TestClient reads a body whole before the app sees it: the middleware is driven here.
    taken = []

    async def receive() -> dict[str, object]:
        taken.append(1)
        return {"type": "http.request", "body": b"x" * 16_384, "more_body": True}

    async def reads_everything(scope: object, receive: object, send: object) -> None:
        request = Request(scope, receive)  # type: ignore[arg-type]
        await request.body()

    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/api/sessions", "headers": []}
    limited = LimitBodies(reads_everything, BodyLimits(default=64 * 1024))
    raised: list[BaseException] = []

    def drive() -> None:  # a thread of its own: the browser tests leave a loop in this one
        try:
            asyncio.run(limited(scope, receive, send))  # type: ignore[arg-type]
        except BaseException as error:
            raised.append(error)

    driver = threading.Thread(target=drive)
    driver.start()
    driver.join()
    assert [type(error) for error in raised] == [BodyTooLarge]  # the app's handlers: 413
    assert len(taken) == 5  # 5 × 16 KiB passes 64 KiB: not one chunk more was read


def test_a_body_under_the_limit_is_served_as_before(client: TestClient, world: World) -> None:
    response = client.post("/api/sessions", json={"email": "a@b.fr", "password": "x" * 60_000})
    assert response.status_code == 422, response.text  # read whole, then refused by its schema
    assert "256 characters" in response.json()["message"]


def test_the_table_upload_takes_up_to_1_mib_and_no_more(
    client: TestClient, admin: dict[str, str]
) -> None:
    padding = "# a comment\n" * (500 * 1024 // 12)  # 500 KiB of a valid TOML file
    table = padding + 'game = "cash"\n'
    body = {"game": "cash", "blocks": 1, "prize_table": table}
    response = client.post("/api/admin/emissions", json=body, headers=admin)
    assert response.status_code == 422, response.text  # read, then refused as a bad table
    assert response.json()["error"] == "invalid_prize_table"
    body["prize_table"] = padding * 3
    response = client.post("/api/admin/emissions", json=body, headers=admin)
    assert _too_large(response), response.text


def test_a_5000_deep_toml_table_is_a_422(client: TestClient, admin: dict[str, str]) -> None:
    deep = "x = " + "[" * 5000 + "]" * 5000 + "\n"
    body = {"game": "cash", "blocks": 1, "prize_table": deep}
    response = client.post("/api/admin/emissions", json=body, headers=admin)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_prize_table"


@pytest.mark.parametrize(
    "query",
    [
        "to=9999-12-31",
        "from=0001-01-01",
        "from=1999-12-31",
        "to=2101-01-01",
        "from=2024-01-01&to=2025-01-02",  # 368 days
        "from=2025-01-02&to=2024-01-01",
        "from=20240101",
        "to=2024-W01-1",
        "to=2024-02-30",
    ],
)
def test_a_report_day_outside_2000_to_2100_or_a_period_over_366_days_is_a_422(
    client: TestClient, admin: dict[str, str], query: str
) -> None:
    response = client.get(f"/api/admin/reports/days?{query}", headers=admin)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_input"


def test_a_report_of_a_whole_leap_year_is_served(client: TestClient, admin: dict[str, str]) -> None:
    response = client.get("/api/admin/reports/days?from=2024-01-01&to=2024-12-31", headers=admin)
    assert response.status_code == 200, response.text


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    kind=st.sampled_from(["days", "blocks", "x"]),
    start=st.one_of(st.none(), st.text(max_size=12), st.dates().map(str)),
    end=st.one_of(st.none(), st.text(max_size=12), st.dates().map(str)),
    fmt=st.sampled_from(["json", "csv", "xml"]),
)
def test_no_report_query_answers_a_5xx(
    client: TestClient,
    admin: dict[str, str],
    kind: str,
    start: str | None,
    end: str | None,
    fmt: str,
) -> None:
    params = {"format": fmt}
    if start is not None:
        params["from"] = start
    if end is not None:
        params["to"] = end
    response = client.get(f"/api/admin/reports/{kind}", params=params, headers=admin)
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert set(response.json()) == {"error", "message"}


def _ended_block(world: World) -> int:
    world.stock("cash")
    emissions.close_block(world.platform, 1, actor="test")
    return 1


def test_a_disclosure_is_built_once_and_served_from_its_file(
    client: TestClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_id = _ended_block(world)
    built = []
    real = fairness.disclosure

    def counted(platform: object, wanted: int) -> dict[str, object]:
        built.append(wanted)
        return real(platform, wanted)  # type: ignore[arg-type]

    monkeypatch.setattr(fairness, "disclosure", counted)
    answers = [client.get(f"/api/blocks/{block_id}/disclosure") for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert built == [block_id]
    path = disclosures.disclosure_path(world.settings.disclosure_dir, block_id)
    assert answers[0].content == path.read_bytes()
    verify_disclosure(answers[2].json(), workers=1)


def test_a_disclosure_answers_etag_and_ranges(client: TestClient, world: World) -> None:
    block_id = _ended_block(world)
    whole = client.get(f"/api/blocks/{block_id}/disclosure")
    etag = whole.headers["etag"]
    assert whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["content-type"] == "application/json"
    again = client.get(f"/api/blocks/{block_id}/disclosure", headers={"If-None-Match": etag})
    assert again.status_code == 304
    part = client.get(f"/api/blocks/{block_id}/disclosure", headers={"Range": "bytes=10-19"})
    assert part.status_code == 206
    assert part.content == whole.content[10:20]
    assert part.headers["content-range"] == f"bytes 10-19/{len(whole.content)}"


@pytest.mark.parametrize("header", ["bytes=5-1", "bytes=abc", "bytes=", "pages=0-9", "bytes=0-1,x"])
def test_an_invalid_range_is_ignored_and_the_whole_disclosure_answered(
    client: TestClient, world: World, header: str
) -> None:
    block_id = _ended_block(world)
    whole = client.get(f"/api/blocks/{block_id}/disclosure")
    answer = client.get(f"/api/blocks/{block_id}/disclosure", headers={"Range": header})
    assert answer.status_code == 200
    assert answer.content == whole.content


def test_an_unsatisfiable_range_answers_416_with_a_json_error(
    client: TestClient, world: World
) -> None:
    block_id = _ended_block(world)
    size = len(client.get(f"/api/blocks/{block_id}/disclosure").content)
    answer = client.get(
        f"/api/blocks/{block_id}/disclosure", headers={"Range": f"bytes={size}-,-0"}
    )
    assert answer.status_code == 416
    assert answer.json()["error"] == "range_not_satisfiable"
    assert answer.headers["content-range"] == f"bytes */{size}"


def test_of_several_ranges_only_the_satisfiable_ones_are_served(
    client: TestClient, world: World
) -> None:
    block_id = _ended_block(world)
    whole = client.get(f"/api/blocks/{block_id}/disclosure").content
    answer = client.get(
        f"/api/blocks/{block_id}/disclosure", headers={"Range": f"bytes=10-19,{len(whole)}-"}
    )
    assert answer.status_code == 206
    assert answer.content == whole[10:20]


def test_an_open_block_has_no_disclosure_and_leaves_no_file(
    client: TestClient, world: World
) -> None:
    world.stock("cash")
    response = client.get("/api/blocks/1/disclosure")
    assert response.status_code == 409
    assert not disclosures.disclosure_path(world.settings.disclosure_dir, 1).exists()
    assert client.get("/api/blocks/99/disclosure").status_code == 404


def test_every_postgres_connection_carries_the_three_time_limits(world: World) -> None:
    if world.settings.database_url.startswith("sqlite"):
        pytest.skip("PostgreSQL's settings")
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        shown = [
            db.exec_driver_sql(f"SHOW {name}").scalar_one()
            for name in ("lock_timeout", "statement_timeout", "idle_in_transaction_session_timeout")
        ]
        search_path = db.exec_driver_sql("SHOW search_path").scalar_one()
    assert shown == ["2s", "5s", "30s"]
    assert search_path.startswith("grattage_test_")  # the URL's own options are kept


def test_every_postgres_connection_gives_up_on_a_silent_peer_on_both_ends(world: World) -> None:
    """A cut link fails a request within the TCP limit, not the kernel's 15 minutes of
    retransmissions, and ends the server's backend (its row locks) as soon."""
    if world.settings.database_url.startswith("sqlite"):
        pytest.skip("PostgreSQL's settings")
    with world.platform.uow.read() as repos:
        db = repos.connection  # type: ignore[attr-defined]
        server = [
            db.exec_driver_sql(f"SHOW {name}").scalar_one()
            for name in ("tcp_user_timeout", "tcp_keepalives_idle", "tcp_keepalives_interval")
        ]
        fd = db.connection.dbapi_connection.pgconn.socket
        with socket.socket(fileno=os.dup(fd)) as client:  # a copy: closing it leaves libpq's
            user_timeout = client.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT)
            keepalive = client.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
            idle = client.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
        timeout = db.connection.dbapi_connection.info.get_parameters().get("connect_timeout")
    assert server == ["5000", "3", "1"]  # milliseconds, seconds, seconds
    assert (user_timeout, keepalive, idle) == (5000, 1, 3)
    assert timeout == "3"
