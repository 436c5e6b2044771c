"""The operator's API under /api/admin and the player's responsible-gaming API, on SQLite and
PostgreSQL: role separation, emissions, blocks, reports against the ledger, charts."""

from __future__ import annotations

import re
import time
from collections import defaultdict
from fractions import Fraction
from xml.etree import ElementTree

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from grattage.service import operators
from support import FIXTURES, PASSWORD, World, bought

CSRF = {"X-Grattage-CSRF": "1"}
OPERATOR = "boss@operator.example"
SAMPLE_PATH_VALUES = {
    "block_id": "1",
    "job_id": "1",
    "chart": "payout",
    "fmt": "svg",
    "kind": "blocks",
    "player_id": "1",
}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def admin(world: World, client: TestClient) -> dict[str, str]:
    operators.create(world.platform, OPERATOR, PASSWORD)
    return admin_log_in(client)


def admin_log_in(client: TestClient) -> dict[str, str]:
    response = client.post("/api/admin/sessions", json={"email": OPERATOR, "password": PASSWORD})
    assert response.status_code == 200, response.text
    client.cookies.clear()
    return bearer(response.json()["token"])


def player_token(world: World, client: TestClient, balance: int = 5_000) -> str:
    email = f"player{balance}@example.org"
    world.player(balance, email=email)
    token = client.post("/api/sessions", json={"email": email, "password": PASSWORD}).json()
    client.cookies.clear()
    return str(token["token"])


def admin_routes(client: TestClient) -> list[tuple[str, str]]:
    """Every (method, path) the app serves under /api/admin, from its OpenAPI description, so
    that a route added later is covered without touching this test."""
    found = []
    for path, operations in client.app.openapi()["paths"].items():  # type: ignore[attr-defined]
        if not path.startswith("/api/admin"):
            continue
        concrete = re.sub(r"\{(\w+)\}", lambda m: SAMPLE_PATH_VALUES[m.group(1)], path)
        for method in operations:
            if (method, path) != ("post", "/api/admin/sessions"):  # the log-in itself
                found.append((method.upper(), concrete))
    return found


def test_a_players_credentials_get_403_on_every_admin_route_and_none_get_401(
    world: World, client: TestClient
) -> None:
    world.stock("cash")
    token = player_token(world, client)
    routes = admin_routes(client)
    assert len(routes) >= 12
    for method, path in routes:
        assert client.request(method, path, headers=bearer(token)).status_code == 403, path
        client.cookies.set("grattage_session", token)
        answer = client.request(method, path, headers=CSRF)
        client.cookies.clear()
        assert answer.status_code == 403, path
        assert answer.json()["error"] == "forbidden"
        assert client.request(method, path).status_code == 401, path


def test_an_operators_token_is_not_a_players(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    assert client.get("/api/me", headers=admin).status_code == 401
    assert client.get("/api/admin/me", headers=admin).json()["role"] == "operator"


def test_the_admin_cookie_is_httponly_and_its_writes_need_the_csrf_header(
    world: World, client: TestClient
) -> None:
    world.stock("cash")
    operators.create(world.platform, OPERATOR, PASSWORD)
    response = client.post("/api/admin/sessions", json={"email": OPERATOR, "password": PASSWORD})
    cookie = response.headers["set-cookie"]
    assert "grattage_admin=" in cookie and "HttpOnly" in cookie
    assert client.post("/api/admin/blocks/1/suspend").status_code == 403
    assert client.post("/api/admin/blocks/1/suspend", headers=CSRF).status_code == 200


def test_an_operator_creates_an_emission_from_an_uploaded_table(
    client: TestClient, admin: dict[str, str]
) -> None:
    table = (FIXTURES / "tables" / "tiny_cash_on_sale.toml").read_text("utf-8")
    body = {"game": "cash", "blocks": 2, "prize_table": table, "prize_table_name": "tiny.toml"}
    response = client.post("/api/admin/emissions", json=body, headers=admin)
    assert response.status_code == 202, response.text
    job = client.get(response.headers["Location"], headers=admin).json()
    for _ in range(500):  # the job makes the blocks in the background
        if job["state"] != "running":
            break
        time.sleep(0.02)
        job = client.get(response.headers["Location"], headers=admin).json()
    assert (job["state"], job["opened"]) == ("succeeded", [1])
    blocks = client.get("/api/admin/blocks", headers=admin).json()["blocks"]
    assert [(b["state"], b["size"], b["units_remaining"]) for b in blocks] == [
        ("open", 40, 40),
        ("pending", 40, 40),
    ]


def test_a_table_the_game_cannot_dress_is_refused_naming_the_row(
    client: TestClient, admin: dict[str, str]
) -> None:
    table = (FIXTURES / "tables" / "tiny_cash_on_sale.toml").read_text("utf-8")
    table = table.replace("10000\n", "10001\n", 1)
    body = {"game": "cash", "blocks": 1, "prize_table": table, "prize_table_name": "bad.toml"}
    response = client.post("/api/admin/emissions", json=body, headers=admin)
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_prize_table",
        "message": "bad.toml: row 1: no sum of at most 5 of the table's amounts makes the prize "
        "100,01 € (10001 cents)",
    }


def test_buying_from_a_suspended_game_says_it_is_suspended(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    world.stock("cash")
    token = player_token(world, client)
    assert client.post("/api/admin/blocks/1/suspend", headers=admin).json()["state"] == "suspended"
    answer = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=bearer(token))
    assert answer.status_code == 409
    assert answer.json() == {
        "error": "not_on_sale",
        "message": "cash is suspended by the operator: no ticket is on sale until it resumes",
    }
    assert client.post("/api/admin/blocks/1/resume", headers=admin).status_code == 200
    answer = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=bearer(token))
    assert answer.status_code == 201
    assert client.post("/api/admin/blocks/1/close", headers=admin).json()["state"] == "closed"
    assert client.post("/api/admin/blocks/1/resume", headers=admin).status_code == 409


def _ledger_sums(world: World) -> tuple[dict, dict]:
    """Stakes, prizes, units and players per block and per day, straight from the movements'
    legs on the players' accounts."""
    by_block: dict = defaultdict(lambda: [0, 0, 0, set()])
    by_day: dict = defaultdict(lambda: [0, 0, 0, set()])
    with world.platform.uow.read() as repos:
        rows = repos.blocks.db.execute(  # type: ignore[attr-defined]
            text(
                "SELECT m.kind, m.player_id, m.created_at, t.block_id, "
                "CASE WHEN a.id = m.to_account_id THEN m.amount_cents ELSE -m.amount_cents END "
                "FROM movements m "
                "JOIN accounts a ON a.id IN (m.from_account_id, m.to_account_id) "
                "AND a.kind = 'player' JOIN tickets t ON t.id = m.ticket_id"
            )
        ).all()
    for kind, player, created, block, amount in rows:
        day = str(created)[:10]
        for sums in (by_block[block], by_day[day]):
            if kind == "stake":
                sums[0] += 1
                sums[1] += -amount
                sums[3].add(player)
            else:
                sums[2] += amount
    return by_block, by_day


def test_reports_equal_the_sums_of_the_ledger_entries(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    world.stock("cash", blocks=2)
    buyers = [world.player(15_000) for _ in range(3)]  # 27 tickets at most, even if none wins
    for _day in range(3):
        for index, player in enumerate(buyers):
            for _ in range(7 + index):
                bought(world, player, game_name="cash", mode="auto")
        world.clock.advance(24 * 3600)
    admin = admin_log_in(client)  # the session went idle meanwhile
    by_block, by_day = _ledger_sums(world)
    rows = client.get("/api/admin/reports/blocks", headers=admin).json()["rows"]
    assert {r["block_id"]: (r["units_sold"], r["stakes_cents"], r["prizes_cents"], r["players"])
            for r in rows} == {b: (s[0], s[1], s[2], len(s[3])) for b, s in by_block.items()}  # fmt: skip
    assert all(r["ggr_cents"] == r["stakes_cents"] - r["prizes_cents"] for r in rows)
    rows = client.get("/api/admin/reports/days", headers=admin).json()["rows"]
    assert {r["day"]: (r["units_sold"], r["stakes_cents"], r["prizes_cents"], r["players"])
            for r in rows} == {d: (s[0], s[1], s[2], len(s[3])) for d, s in by_day.items()}  # fmt: skip
    one_day = client.get(
        "/api/admin/reports/days?from=2026-12-01&to=2026-12-01&format=csv", headers=admin
    )
    assert one_day.headers["content-type"].startswith("text/csv")
    lines = one_day.text.splitlines()
    assert lines[0] == "day,game,units_sold,stakes_cents,prizes_cents,ggr_cents,players"
    assert len(lines) == 2 and lines[1].startswith("2026-12-01,cash,24,12000,")
    block = client.get("/api/admin/blocks/1", headers=admin).json()
    assert sum(t["paid_cents"] for t in block["tiers"]) == block["prizes_paid_cents"]
    # the tiny test table pays out 127.5 %
    assert Fraction(
        block["table_prizes_total_cents"], block["size"] * block["price_cents"]
    ) == Fraction(255, 200)


def test_block_charts_are_valid_non_empty_png_and_svg(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    world.stock("cash")
    player = world.player(10_000)
    for _ in range(15):
        bought(world, player, game_name="cash", mode="auto")
    for chart in ("payout", "tiers"):
        png = client.get(f"/api/admin/blocks/1/charts/{chart}.png", headers=admin)
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        assert png.content.startswith(b"\x89PNG\r\n\x1a\n") and len(png.content) > 1000
        svg = client.get(f"/api/admin/blocks/1/charts/{chart}.svg", headers=admin)
        assert svg.headers["content-type"].startswith("image/svg+xml")
        assert ElementTree.fromstring(svg.content).tag.endswith("svg")


def test_no_admin_view_shows_the_prize_of_an_unsold_unit(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    world.stock("cash")
    block = client.get("/api/admin/blocks/1", headers=admin).json()
    assert block["prizes_paid_cents"] == 0
    assert all(t["paid_count"] == 0 for t in block["tiers"])
    assert "sealed" not in str(block) and "key" not in block


def test_every_operator_action_is_in_the_audit_log_and_the_chain_verifies(
    world: World, client: TestClient, admin: dict[str, str]
) -> None:
    world.stock("cash")
    client.post("/api/admin/blocks/1/suspend", headers=admin)
    client.post("/api/admin/blocks/1/resume", headers=admin)
    entries = client.get("/api/admin/audit", headers=admin).json()["entries"]
    actions = [(e["action"], e["actor"]) for e in entries]
    assert actions[:2] == [
        ("block.open", f"operator:{OPERATOR}"),
        ("block.suspended", f"operator:{OPERATOR}"),
    ]
    assert ("operator.log_in", f"operator:{OPERATOR}") in actions
    assert ("operator.create", "cli") in actions
    assert client.get("/api/admin/audit/verify", headers=admin).json()["clean"] is True


def test_a_player_sets_limits_at_sign_up_and_sees_them(client: TestClient) -> None:
    body = {"email": "lim@example.org", "password": PASSWORD, "birth_date": "1990-02-03",
            "first_name": "Lim", "last_name": "Ites",
            "deposit_weekly_cents": 5_000, "stake_weekly_cents": 2_000}  # fmt: skip
    assert client.post("/api/players", json=body).status_code == 201
    login = {"email": "lim@example.org", "password": PASSWORD}
    token = client.post("/api/sessions", json=login).json()["token"]
    seen = client.get("/api/me/limits", headers=bearer(token)).json()
    assert seen["deposit"]["weekly_limit_cents"] == 5_000
    assert seen["stake"]["weekly_limit_cents"] == 2_000
    raised = client.put(
        "/api/me/limits", json={"stake_weekly_cents": 9_000}, headers=bearer(token)
    ).json()
    assert raised["stake"]["weekly_limit_cents"] == 2_000
    assert raised["stake"]["pending"]["weekly_limit_cents"] == 9_000
    answer = client.post("/api/me/deposits", json={"amount_cents": 6_000}, headers=bearer(token))
    assert (answer.status_code, answer.json()["error"]) == (409, "limit_reached")
    assert client.get("/api/me/activity", headers=bearer(token)).json()["totals"]["tickets"] == 0


def test_a_purchase_refused_by_a_limit_says_which_what_is_left_and_when_it_resets(
    world: World, client: TestClient
) -> None:

    from grattage.service.responsible import week_end, week_of

    world.stock("cash")
    token = player_token(world, client)
    client.put("/api/me/limits", json={"stake_weekly_cents": 1_200}, headers=bearer(token))
    buy = {"mode": "auto"}
    for _ in range(2):
        assert client.post("/api/games/cash/tickets", json=buy, headers=bearer(token)).is_success
    refused = client.post("/api/games/cash/tickets", json=buy, headers=bearer(token))
    zone = world.platform.policy.operator_time_zone
    resets = week_end(week_of(world.platform.clock.now(), zone), zone)
    assert (refused.status_code, refused.json()["error"]) == (409, "limit_reached")
    assert refused.json()["details"] == {
        "limit": "stake",
        "limit_cents": 1_200,
        "used_cents": 1_000,
        "remaining_cents": 200,
        "resets_at": resets.isoformat().replace("+00:00", "Z"),
    }


def test_a_self_excluded_player_is_logged_out_and_cannot_log_in_buy_or_deposit(
    world: World, client: TestClient
) -> None:
    world.stock("cash")
    token = player_token(world, client)
    bad = client.post("/api/me/exclusion", json={"period": "1h"}, headers=bearer(token))
    assert bad.status_code == 422
    answer = client.post("/api/me/exclusion", json={"period": "30d"}, headers=bearer(token))
    assert answer.status_code == 201 and answer.json()["excluded"]
    # The exclusion ended the account's sessions: the token buys and deposits nothing more.
    buy = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=bearer(token))
    assert (buy.status_code, buy.json()["error"]) == (401, "unauthorized")
    deposit = client.post("/api/me/deposits", json={"amount_cents": 100}, headers=bearer(token))
    assert deposit.status_code == 401
    login = {"email": "player5000@example.org", "password": PASSWORD}
    refused = client.post("/api/sessions", json=login)
    assert (refused.status_code, refused.json()["error"]) == (403, "self_excluded")
    assert refused.json()["details"] == {"until": answer.json()["until"], "permanent": False}


def test_the_operator_pages_are_served_at_admin_and_the_limits_page_at_its_path(
    world: World,
) -> None:
    from grattage.entrypoints.http import create_app

    app = create_app(world.settings, platform=world.platform, mount_web=True)
    with TestClient(app) as pages:
        page = pages.get("/admin/")
        assert page.status_code == 200 and "back-office" in page.text
        assert pages.get("/admin/admin.js").status_code == 200
        assert "m'exclure du jeu" in pages.get("/limits.html").text


def test_a_reality_check_rides_on_the_answers_once_an_hour_of_play_has_passed(
    world: World, client: TestClient
) -> None:
    world.stock("cash")
    token = player_token(world, client)
    buy = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=bearer(token))
    assert "reality_check" not in buy.json()
    world.clock.advance(30 * 60)
    assert "reality_check" not in client.get("/api/me", headers=bearer(token)).json()
    world.clock.advance(31 * 60)
    buy = client.post("/api/games/cash/tickets", json={"mode": "auto"}, headers=bearer(token))
    check = buy.json()["reality_check"]
    assert check["minutes_played"] == 61
    assert check["stakes_cents"] == 1_000
    assert check["interval_minutes"] == 60
    assert "message" not in check  # numbers only: the page words them
    assert "reality_check" not in client.get("/api/me", headers=bearer(token)).json()


def test_me_says_when_the_session_began_and_when_the_next_reality_check_is_due(
    world: World, client: TestClient
) -> None:
    from datetime import datetime, timedelta

    def moment(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))

    token = player_token(world, client)
    me = client.get("/api/me", headers=bearer(token)).json()
    started = moment(me["session_started_at"])
    assert moment(me["next_reality_check_at"]) == started + timedelta(minutes=60)
    world.clock.advance(30 * 60)  # a session idle an hour ends: look once on the way
    assert "reality_check" not in client.get("/api/me", headers=bearer(token)).json()
    world.clock.advance(31 * 60)
    me = client.get("/api/me", headers=bearer(token)).json()
    assert me["reality_check"]["minutes_played"] == 61
    assert moment(me["next_reality_check_at"]) == started + timedelta(minutes=121)
    me = client.get("/api/me", headers=bearer(token)).json()
    assert "reality_check" not in me
    assert moment(me["next_reality_check_at"]) == started + timedelta(minutes=121)


def test_an_operator_is_locked_after_repeated_failed_log_ins_and_each_is_audited_with_why(
    world: World, client: TestClient
) -> None:
    operators.create(world.platform, OPERATOR, PASSWORD)
    wrong = {"email": OPERATOR, "password": "not the password"}
    codes = [client.post("/api/admin/sessions", json=wrong).json()["error"] for _ in range(5)]
    assert codes == ["unauthorized"] * 4 + ["account_locked"]
    right = {"email": OPERATOR, "password": PASSWORD}
    assert client.post("/api/admin/sessions", json=right).json()["error"] == "account_locked"
    world.clock.advance(world.settings.lockout_seconds + 1)
    admin = admin_log_in(client)
    entries = client.get("/api/admin/audit", headers=admin).json()["entries"]
    failed = [e["details"] for e in entries if e["action"] == "operator.log_in_failed"]
    assert [d["reason"] for d in reversed(failed)] == ["wrong_password"] * 5 + ["locked_out"]
    assert {d["email"] for d in failed} == {OPERATOR}
