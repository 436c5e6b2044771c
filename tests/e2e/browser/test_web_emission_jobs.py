"""An emission made from the back office in a real browser, under the site's CSP: the page
follows the job (its stage and a progress bar), lists the blocks once sealed, and shows a
failure as one line in the page's language."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import PASSWORD, api_get, screenshot
from playwright.sync_api import expect

from grattage.service import emissions, operators
from grattage.service.emission_jobs import PROGRESS_SECONDS

pytestmark = pytest.mark.browser

OPERATOR = "emissions@operator.example"
TABLES = Path(__file__).parent / "tables"
SCALE = 2_500
"""The small Cash table scaled up (100 000 units a block): seconds to commit to, not minutes."""


@pytest.fixture(scope="module")
def operator(live_server: Any) -> str:
    operators.create(live_server.app.state.platform, OPERATOR, PASSWORD)
    return OPERATOR


def scaled_table(directory: Path) -> Path:
    lines = []
    for line in (TABLES / "cash_small.toml").read_text("utf-8").splitlines():
        name, sep, value = line.partition(" = ")
        scale = sep and name in {"block_size", "count"}
        lines.append(f"{name} = {int(value) * SCALE}" if scale else line)
        if name == "game":
            # an operator's upload says its price; at 20 € this table pays out 47.5 %
            lines.append("price_cents = 2000")
    path = directory / "cash_big.toml"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def log_in(page: Any, operator: str) -> None:
    page.goto("/admin/")
    page.locator("#login-form input[name=email]").fill(operator)
    page.locator("#login-form input[name=password]").fill(PASSWORD)
    page.get_by_role("button", name="Se connecter").click()
    expect(page.locator("#who-email")).to_have_text(operator)


def create(page: Any, blocks: int, table: Path) -> None:
    form = page.locator("#emission-form")
    form.locator("select[name=game]").select_option("cash")
    form.locator("input[name=blocks]").fill(str(blocks))
    form.locator("input[name=table]").set_input_files(str(table))
    form.get_by_role("button", name="Créer").click()


def test_the_back_office_follows_an_emission_job_and_lists_its_blocks_once_sealed(
    new_page: Any,
    live_server: Any,
    operator: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = emissions.build_tree_and_chain

    def unhurried_commitment(*args: Any, progress: Any, **kwargs: Any) -> Any:
        # 100 000 units are committed to in a tenth of a second now, well inside one heartbeat
        # (PROGRESS_SECONDS): the page would see the job go from "waiting" to done. Each block
        # lasts a few heartbeats here, so there is a running stage to show.
        def step_slowly(phase: str, done: int, total: int) -> None:
            progress(phase, done, total)
            if done in (1, total):
                time.sleep(4 * PROGRESS_SECONDS)

        return real(*args, progress=step_slowly, **kwargs)

    monkeypatch.setattr(emissions, "build_tree_and_chain", unhurried_commitment)
    page = new_page(live_server.url, width=1366, height=768)
    log_in(page, operator)
    before = {b["id"] for b in api_get(page, "/api/admin/blocks")["blocks"]}
    create(page, 2, scaled_table(tmp_path))
    status = page.locator("#emission-job-text")
    # A quiet machine makes a small block in moments: any stage of either block may be the one
    # the page shows first (CI once saw "committing to block 1" already gone).
    expect(status).to_have_text(
        re.compile(r"^Tâche d'émission \d+\u00a0: .+ bloc [12] sur 2( \(\d+\u00a0%\))?…$"),
        timeout=60_000,
    )
    expect(page.locator("#emission-job-progress")).to_be_visible()
    expect(page.locator("#emission-form button")).to_be_disabled()
    screenshot(page, "back_office_emission_job_running")
    flash = page.locator("#flash")
    expect(flash).to_have_text(
        re.compile(
            r"^Émission \d+\u00a0: blocs n° \d+, n° \d+ créés\u202f; mis en vente\u00a0: aucun\.$"
        ),
        timeout=120_000,
    )
    expect(flash).to_have_class("ok")
    expect(page.locator("#emission-job")).to_be_hidden()
    expect(page.locator("#emission-form button")).to_be_enabled()
    made = sorted({b["id"] for b in api_get(page, "/api/admin/blocks")["blocks"]} - before)
    assert len(made) == 2
    for block_id in made:
        row = page.locator("#blocks-rows").get_by_role("row", name=re.compile(rf"^#{block_id} "))
        expect(row).to_contain_text("en attente")
    screenshot(page, "back_office_emission_job_done")


def test_the_back_office_shows_a_failed_emission_job_and_that_it_stored_no_block(
    new_page: Any,
    live_server: Any,
    operator: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = emissions.build_tree_and_chain

    def failing_commitment(*args: Any, progress: Any, **kwargs: Any) -> Any:
        def fail_once_under_way(phase: str, done: int, total: int) -> None:
            progress(phase, done, total)
            if done:
                raise OSError(28, "No space left on device")

        return real(*args, progress=fail_once_under_way, **kwargs)

    monkeypatch.setattr(emissions, "build_tree_and_chain", failing_commitment)
    page = new_page(live_server.url, width=360, height=740)
    log_in(page, operator)
    before = api_get(page, "/api/admin/blocks")["blocks"]
    create(page, 1, scaled_table(tmp_path))
    flash = page.locator("#flash")
    expect(flash).to_have_text(
        re.compile(
            r"^La tâche d'émission \d+ a échoué \(engagement du bloc 1 sur 1\)\u00a0: le journal "
            r"du serveur en donne la raison\. Aucun bloc n'a été stocké\.$"
        ),
        timeout=60_000,
    )
    expect(flash).to_have_class("error")
    expect(page.locator("#emission-job")).to_be_hidden()
    assert api_get(page, "/api/admin/blocks")["blocks"] == before
    audit = api_get(page, "/api/admin/audit?limit=1")["entries"][0]
    assert audit["action"] == "emission.job.fail"
    expect(page.locator("#audit-rows tr").first).to_contain_text("emission.job.fail")
    screenshot(page, "back_office_emission_job_failed")
