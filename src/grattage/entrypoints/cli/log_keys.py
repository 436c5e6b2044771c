"""The operator's log commands: ``grattage log key`` (the public key a witness pins,
docs/deploy.md) and ``grattage log rotate-key`` (docs/fairness.md, "Key rotation").
Errors go through the group's one table of exit codes (:mod:`grattage.entrypoints.cli`)."""

from __future__ import annotations

import json

import click

from grattage.entrypoints.cli.platform import _platform
from grattage.settings import Settings


@click.group("log")
def log_group() -> None:
    """The transparency log's operator commands."""


@log_group.command("key")
def key_command() -> None:
    """Print the operator's public key in force and its history, as GET /api/log/key answers
    them (JSON); the first key (and the players' pseudonym key) is made here if none exists
    yet. Needs a migrated database and
    no witness: it is what the witness pins (GRATTAGE_WITNESS_OPERATOR_PUBLIC_KEY) before
    the servers can be given the witness's settings (docs/deploy.md, step 6)."""
    from grattage.service.transparency import operator_key

    # The witness's settings are ignored: this is how they get made in the first place.
    settings = Settings().model_copy(update={"witness_url": None, "witness_public_key": None})
    platform = _platform(settings)
    # The players' pseudonym key too: this runs where the key store is writable, and the app
    # hosts, whose key store is read-only, could not make it at their first sale.
    platform.keys.pseudonym_key()
    click.echo(json.dumps(operator_key(platform), indent=2))


@log_group.command("rotate-key")
def rotate_key_command() -> None:
    """Make a new operator signing key and put it in force by a key.change entry signed by the
    old key (and countersigned by the new): entries and heads from the next index on are
    signed by the new key. The old key's file stays in the key store, retired."""
    from grattage.service.key_rotation import rotate_key

    rotation = rotate_key(_platform(), actor="cli")
    click.echo(
        f"key.change at index {rotation.change_index:,}: key {rotation.old_key_id} retired, "
        f"key {rotation.new_key_id} signs from index {rotation.from_index:,} "
        f"({rotation.integrated:,} queued entries placed before the change); head of size "
        f"{rotation.head.tree_size:,} signed by the new key. Publish the new key "
        f"{rotation.new_public_key.hex()} (docs/fairness.md) and back up the key store."
    )


def register(group: click.Group) -> None:
    group.add_command(log_group)
