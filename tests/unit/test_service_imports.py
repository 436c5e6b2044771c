"""The service layer reaches storage and password hashing only through its ports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import grattage.service

SERVICE = Path(grattage.service.__file__).parent
BEHIND_PORTS = ("sqlalchemy", "argon2", "grattage.adapters", "grattage.entrypoints")


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


@pytest.mark.parametrize("module", sorted(SERVICE.glob("*.py")), ids=lambda path: path.name)
def test_a_service_module_imports_no_database_driver_hasher_or_outer_layer(module: Path) -> None:
    reached = {
        name
        for name in imported_modules(module)
        if any(name == banned or name.startswith(banned + ".") for banned in BEHIND_PORTS)
    }
    assert reached == set()
