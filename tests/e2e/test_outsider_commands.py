"""What an outsider runs against the operator, as real processes: ``verify-ticket``,
``verify-block`` and ``monitor`` load the standard library, ``click`` and ``cryptography``
only; an ended block's disclosure file is logged once (``disclosure.published``, the SHA-256
of its bytes) after the block's end, and ``verify-block --log`` checks the file's bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grattage.service import transparency
from grattage.service.emissions import close_block
from support import World

from .conftest import cli_env
from .forger import get_all_entries, grattage
from .test_forgeries import Shop, open_shop

HEAVY = {"sqlalchemy", "fastapi", "starlette", "numpy", "psycopg", "pydantic", "uvicorn"}


@pytest.fixture
def disclosed(world: World, tmp_path: Path) -> Iterator[tuple[Shop, Path]]:
    """A shop whose block was closed after its sales, swept: its disclosure file written."""
    with open_shop(world, tmp_path) as shop:
        close_block(world.platform, shop.block_row)
        swept = sweep(world)
        assert swept.returncode == 0, swept.stderr
        transparency.integrate_all(world.platform)
        path = world.settings.disclosure_dir / f"disclosure-block-{shop.block_row}.json"
        assert path.exists()
        yield shop, path


def sweep(world: World) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "grattage"), "sweep"],
        env={**cli_env(world), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


def modules_loaded_by(*args: str | Path) -> tuple[int, set[str]]:
    """Run ``grattage ARGS`` in a fresh interpreter; its exit code and the top-level
    packages it imported beyond the standard library."""
    script = (
        "import atexit, json, sys\n"
        "def report():\n"
        "    names = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)\n"
        "    sys.stderr.write('\\nMODULES ' + json.dumps(sorted(names)) + '\\n')\n"
        "atexit.register(report)\n"
        f"sys.argv = ['grattage', *{[str(a) for a in args]!r}]\n"
        "from grattage.entrypoints.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("MODULES "), done.stderr
    return done.returncode, set(json.loads(line.removeprefix("MODULES ")))


def test_verify_ticket_verify_block_and_monitor_load_no_database_web_or_numeric_stack(
    disclosed: tuple[Shop, Path],
) -> None:
    shop, disclosure = disclosed
    proof = shop.write("proof.json", shop.proofs[0])
    for command in (
        ("verify-ticket", proof, "--sth", shop.pinned),
        ("verify-ticket", proof, "--log", shop.base),
        ("verify-block", disclosure, "--log", shop.base),
        ("monitor", shop.base, "--state", shop.state),
    ):
        code, loaded = modules_loaded_by(*command)
        assert code == 0, command
        assert not loaded & HEAVY, (command, sorted(loaded & HEAVY))
        assert "cryptography" in loaded


def test_a_disclosure_is_logged_once_after_its_block_ended_and_verify_block_checks_its_bytes(
    disclosed: tuple[Shop, Path],
) -> None:
    shop, disclosure = disclosed
    entries = get_all_entries(shop.base)
    kinds = [entry["kind"] for entry in entries]
    assert kinds[-2:] == ["block.ended", "disclosure.published"]
    assert kinds.count("disclosure.published") == 1
    logged = entries[-1]
    assert logged["key"] == json.loads(disclosure.read_text("utf-8"))["key"]
    checked = grattage("verify-block", disclosure, "--log", shop.base)
    assert checked.returncode == 0, checked.stderr
    assert "the file is the one whose publication is logged" in checked.stdout
    watched = grattage("monitor", shop.base, "--state", shop.state)
    assert watched.returncode == 0, watched.stderr
    # the same disclosure re-encoded: the same content, not the bytes everyone was given
    other = shop.directory / "re-encoded.json"
    other.write_text(json.dumps(json.loads(disclosure.read_text("utf-8")), indent=1), "utf-8")
    refused = grattage("verify-block", other, "--log", shop.base)
    assert refused.returncode == 1, refused.stdout
    assert "not the one logged at its publication" in refused.stderr
    assert sweep(shop.world).returncode == 0  # a second sweep logs no second entry
    transparency.integrate_all(shop.world.platform)
    assert [e["kind"] for e in get_all_entries(shop.base)].count("disclosure.published") == 1
