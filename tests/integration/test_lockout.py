"""The lock-out bounds password checks, whatever the concurrency, and tells nobody who has an
account; a device that logged in before is spared its address's lock; log-ins and sign-ups
are rate-limited. SQLite and PostgreSQL, real threads."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from grattage.entrypoints.http import create_app
from grattage.errors import AccountLocked, GrattageError, Unauthorized
from grattage.service import accounts, operators
from grattage.service.tool_ports import PasswordHasher
from support import PASSWORD, World

WRONG = "not the password"


class CountingPasswords:
    """The platform's hasher, counting the checks; ``reached`` is set at ``threshold``."""

    def __init__(self, inner: PasswordHasher, threshold: int) -> None:
        self.inner = inner
        self.checks = 0
        self.threshold = threshold
        self.reached = threading.Event()
        self._lock = threading.Lock()

    def hash(self, password: str) -> str:
        return self.inner.hash(password)

    def verify(self, password_hash: str, password: str) -> bool:
        with self._lock:
            self.checks += 1
            if self.checks >= self.threshold:
                self.reached.set()
        return self.inner.verify(password_hash, password)


def counting(world: World) -> CountingPasswords:
    counter = CountingPasswords(world.platform.passwords, world.platform.policy.lockout_threshold)
    world.platform.passwords = counter
    return counter


def concurrent_guesses(
    log_in: object, count: int, right_at: int | None, counter: CountingPasswords
) -> dict[int, str]:
    """``count`` log-ins released at once, all wrong but the one at ``right_at``, which goes
    once the threshold's checks have begun: what each answered (an error code or "ok")."""
    start = threading.Barrier(count)

    def attempt(i: int) -> str:
        start.wait()
        if i == right_at:
            assert counter.reached.wait(30)
        try:
            log_in(PASSWORD if i == right_at else WRONG)  # type: ignore[operator]
        except GrattageError as error:
            return error.code
        return "ok"

    with ThreadPoolExecutor(count) as pool:
        return dict(enumerate(pool.map(attempt, range(count))))


def test_120_concurrent_guesses_get_at_most_the_threshold_of_checks_and_the_right_one_is_refused(
    world: World,
) -> None:
    world.player(email="ana@example.org")
    counter = counting(world)
    answers = concurrent_guesses(
        lambda password: accounts.log_in(world.platform, "ana@example.org", password),
        120,
        57,
        counter,
    )
    assert counter.checks == world.platform.policy.lockout_threshold
    assert answers[57] == "account_locked"
    assert set(answers.values()) == {"unauthorized", "account_locked"}


def test_120_concurrent_guesses_at_an_unknown_address_get_at_most_the_threshold_of_checks(
    world: World,
) -> None:
    counter = counting(world)
    answers = concurrent_guesses(
        lambda password: accounts.log_in(world.platform, "nobody@example.org", password),
        120,
        None,
        counter,
    )
    assert counter.checks == world.platform.policy.lockout_threshold
    assert set(answers.values()) == {"unauthorized", "account_locked"}


def test_40_concurrent_operator_guesses_get_at_most_the_threshold_of_checks(
    world: World,
) -> None:
    operators.create(world.platform, "boss@example.org", PASSWORD)
    counter = counting(world)
    answers = concurrent_guesses(
        lambda password: operators.log_in(world.platform, "boss@example.org", password),
        40,
        23,
        counter,
    )
    assert counter.checks == world.platform.policy.lockout_threshold
    assert answers[23] == "account_locked"


def test_during_a_lock_the_right_password_is_refused_and_after_the_window_it_opens(
    world: World,
) -> None:
    world.player(email="ana@example.org")
    threshold = world.platform.policy.lockout_threshold
    for _ in range(threshold):
        with pytest.raises(Unauthorized):
            accounts.log_in(world.platform, "ana@example.org", WRONG)
    with pytest.raises(AccountLocked):
        accounts.log_in(world.platform, "ana@example.org", PASSWORD)
    world.clock.advance(world.platform.policy.lockout_seconds)
    assert accounts.log_in(world.platform, "ana@example.org", PASSWORD).token


def test_a_success_starts_the_count_over(world: World) -> None:
    world.player(email="ana@example.org")
    threshold = world.platform.policy.lockout_threshold
    for _ in range(2):
        for _ in range(threshold - 1):
            with pytest.raises(Unauthorized) as refused:
                accounts.log_in(world.platform, "ana@example.org", WRONG)
            assert not isinstance(refused.value, AccountLocked)
        accounts.log_in(world.platform, "ana@example.org", PASSWORD)


@pytest.fixture
def client(world: World) -> Iterator[TestClient]:
    app = create_app(world.settings, platform=world.platform, mount_web=False)
    with TestClient(app) as test_client:
        yield test_client


def _answers(client: TestClient, email: str, tries: int) -> list[tuple[int, str, str, bool]]:
    found = []
    for _ in range(tries):
        response = client.post("/api/sessions", json={"email": email, "password": WRONG})
        body = response.json()
        found.append(
            (
                response.status_code,
                body["error"],
                body["message"],
                "retry-after" in response.headers,
            )
        )
    return found


def test_an_unknown_address_answers_exactly_as_an_account_attempt_by_attempt(
    client: TestClient, world: World
) -> None:
    world.player(email="ana@example.org")
    tries = world.platform.policy.lockout_threshold + 2
    known = _answers(client, "ana@example.org", tries)
    unknown = _answers(client, "nobody@example.org", tries)
    assert known == unknown
    assert [code for _, code, _, _ in known].count("account_locked") == 3


def test_a_device_that_logged_in_before_is_spared_its_address_lock(
    client: TestClient, world: World
) -> None:
    world.player(email="ana@example.org")
    owner = client.post("/api/sessions", json={"email": "ana@example.org", "password": PASSWORD})
    device = owner.cookies["grattage_device"]
    assert "path=/api/sessions" in owner.headers["set-cookie"].lower()
    client.cookies.clear()
    _answers(client, "ana@example.org", world.platform.policy.lockout_threshold + 1)  # attacker
    body = {"email": "ana@example.org", "password": PASSWORD}
    assert client.post("/api/sessions", json=body).json()["error"] == "account_locked"
    client.cookies.set("grattage_device", device, path="/api/sessions")
    assert client.post("/api/sessions", json=body).status_code == 200


def test_a_trusted_device_has_its_own_counter_with_the_same_threshold(
    client: TestClient, world: World
) -> None:
    world.player(email="ana@example.org")
    body = {"email": "ana@example.org", "password": PASSWORD}
    assert client.post("/api/sessions", json=body).status_code == 200  # the device is trusted
    tries = world.platform.policy.lockout_threshold + 1
    assert _answers(client, "ana@example.org", tries)[-1][1] == "account_locked"
    assert client.post("/api/sessions", json=body).json()["error"] == "account_locked"


def test_operators_answer_alike_for_an_unknown_address_and_record_each_failed_check(
    client: TestClient, world: World
) -> None:
    operators.create(world.platform, "boss@example.org", PASSWORD)
    answers = {}
    for email in ("boss@example.org", "nobody@example.org"):
        answers[email] = [
            client.post("/api/admin/sessions", json={"email": email, "password": WRONG}).json()
            for _ in range(world.platform.policy.lockout_threshold + 1)
        ]
    assert answers["boss@example.org"] == answers["nobody@example.org"]
    with world.platform.uow.read() as repos:
        entries = repos.audit_log.latest(100)  # type: ignore[attr-defined]
    failed = [json.loads(e.details) for e in entries if e.action == "operator.log_in_failed"]
    checks = [d for d in failed if d["reason"] != "locked_out"]
    assert len(checks) == 2 * world.platform.policy.lockout_threshold
    assert [d["email"] for d in failed if d["reason"] == "locked_out"] == [
        "nobody@example.org",  # newest first: the first refusal of each lock-out, once
        "boss@example.org",
    ]


@pytest.fixture
def limited_client(world: World) -> Iterator[TestClient]:
    """A client of an app that lets one address log in 3 times a minute, sign up twice an hour."""
    settings = world.settings.model_copy(
        update={"log_in_rate_per_client": "3/minute", "sign_up_rate_per_client": "2/hour"}
    )
    app = create_app(settings, platform=world.platform, mount_web=False)
    with TestClient(app) as test_client:
        yield test_client


@pytest.mark.parametrize("path", ["/api/sessions", "/api/admin/sessions"])
def test_log_ins_beyond_the_client_rate_answer_429_with_retry_after(
    limited_client: TestClient, path: str
) -> None:
    client = limited_client
    for _ in range(3):
        response = client.post(path, json={"email": "a@example.org", "password": WRONG})
        assert response.status_code == 401
    response = client.post(path, json={"email": "b@example.org", "password": WRONG})
    assert response.status_code == 429
    assert response.json()["error"] == "rate_limited"
    assert 1 <= int(response.headers["retry-after"]) <= 61


def test_sign_ups_beyond_the_client_rate_answer_429(limited_client: TestClient) -> None:
    client = limited_client
    for i, last_name in enumerate(("Martin", "Bernard")):  # a name is letters only
        body = {
            "email": f"p{i}@example.org",
            "password": PASSWORD,
            "birth_date": "1990-01-01",
            "first_name": "Ana",
            "last_name": last_name,
        }
        assert client.post("/api/players", json=body).status_code == 201
    body = {
        "email": "p9@example.org",
        "password": PASSWORD,
        "birth_date": "1990-01-01",
        "first_name": "Ana",
        "last_name": "Dubois",
    }
    response = client.post("/api/players", json=body)
    assert (response.status_code, response.json()["error"]) == (429, "rate_limited")
    assert int(response.headers["retry-after"]) >= 1
