"""``make run`` (``grattage demo``): a witness of its own for development, as a separate
process beside the server, when ``GRATTAGE_WITNESS_URL`` names none.

A real deployment runs the witness elsewhere, by someone else (docs/witness.md); the demo
needs one so that its blocks are drawn like a real platform's. Its data lives in
``GRATTAGE_WITNESS_DATA_DIR`` (default ``var/witness``), made on the first start; it listens on
``GRATTAGE_WITNESS_PORT`` (8700) and stops with the demo. The settings it is given are set in
this process's environment, so the server's workers find it as they would a real one.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click

from grattage.settings import WitnessSettings

STARTUP_SECONDS = 60.0


@contextlib.contextmanager
def demo_witness(operator_public_key: bytes) -> Iterator[None]:
    """Start the demo's witness (initialised on first use) unless one is configured."""
    if os.environ.get("GRATTAGE_WITNESS_URL"):
        yield
        return
    from grattage.adapters.witness_client import WitnessClient
    from grattage.adapters.witness_store import SqliteWitnessStore
    from grattage.blocks.signing import Signer
    from grattage.entrypoints.http.witness_app import wall_clock_ms
    from grattage.errors import GrattageError, Unavailable
    from grattage.service.witness import initialise

    os.environ["GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY"] = operator_public_key.hex()
    settings = WitnessSettings()
    directory = Path(settings.data_dir)
    store = SqliteWitnessStore(directory, create=True)
    if not store.chains():
        initialise(
            store,
            wall_clock_ms(),
            period_ms=round(settings.beacon_seconds * 1000),
            length=settings.chain_length,
        )
    key = Signer(store.signing_key()).public_key
    grattage = str(Path(sys.executable).parent / "grattage")
    from grattage.entrypoints.cli.beside import BESIDE_MASTER_VARIABLE

    # Told to die with the demo: uvicorn ends a SIGTERMed demo by raising the signal again
    # once it has shut down, so the finally below never ran and the witness (an outsider
    # found) stayed on its port, where the next demo silently used it.
    process = subprocess.Popen(
        [grattage, "witness", "serve", "--port", str(settings.port)],
        env={**os.environ, BESIDE_MASTER_VARIABLE: str(os.getpid())},
    )
    url = f"http://{settings.host}:{settings.port}"
    try:
        client = WitnessClient(url, key, timeout=2)
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                client.chain()
                break
            except Unavailable:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise GrattageError(f"the demo's witness did not start on {url}") from None
                time.sleep(0.1)
        os.environ["GRATTAGE_WITNESS_URL"] = url
        os.environ["GRATTAGE_WITNESS_PUBLIC_KEY"] = key.hex()
        click.echo(f"witness: {url} (key {key.hex()[:16]}…, data in {directory})")
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
