"""Engine commands: games, block generate/verify, ticket design/check, simulate."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    pass
