"""``grattage witness init`` and ``grattage witness serve``: the independent witness
(docs/witness.md), run by a regulator or an auditor on a machine of its own. Its settings are
:class:`grattage.settings.WitnessSettings` (prefix ``GRATTAGE_WITNESS_``), never the
operator's."""

from __future__ import annotations

from pathlib import Path

import click
from pydantic import ValidationError

from grattage.adapters.witness_store import SqliteWitnessStore
from grattage.blocks.signing import Signer
from grattage.entrypoints.http.witness_app import create_witness_app, wall_clock_ms
from grattage.service.witness import initialise
from grattage.settings import WitnessSettings, one_line


def _settings() -> WitnessSettings:
    try:
        return WitnessSettings()
    except ValidationError as error:
        raise one_line(error, "GRATTAGE_WITNESS_") from None


@click.group()
def witness() -> None:
    """The independent witness: a beacon, and cosignatures of the operator's tree heads."""


@witness.command("init")
def init() -> None:
    """Make the witness's key and first chain in GRATTAGE_WITNESS_DATA_DIR."""
    settings = _settings()
    store = SqliteWitnessStore(Path(settings.data_dir), create=True)
    stored = initialise(
        store,
        wall_clock_ms(),
        period_ms=round(settings.beacon_seconds * 1000),
        length=settings.chain_length,
    )
    click.echo(f"witness key {Signer(store.signing_key()).public_key.hex()}")
    click.echo(f"chain {stored.chain.chain_id}: {stored.chain.length} rounds")


@witness.command("serve")
@click.option("--host", default=None, help="Default: GRATTAGE_WITNESS_HOST (127.0.0.1).")
@click.option("--port", type=int, default=None, help="Default: GRATTAGE_WITNESS_PORT (8700).")
def serve(host: str | None, port: int | None) -> None:
    """Publish the beacon and cosign heads (one process: the witness's clock is one)."""
    import uvicorn

    from grattage.entrypoints.cli.beside import die_with_serve
    from grattage.entrypoints.serving import DeadlineHttpToolsProtocol

    die_with_serve()  # the demo's own witness dies with the demo, whatever ends it

    settings = _settings()
    app = create_witness_app(settings)  # a bad setting or a missing witness: one line, exit 2
    uvicorn.run(
        app,
        host=host or settings.host,
        port=settings.port if port is None else port,
        access_log=False,
        log_level="info",
        http=DeadlineHttpToolsProtocol,
        timeout_graceful_shutdown=5,
    )


def register(cli: click.Group) -> None:
    cli.add_command(witness)
