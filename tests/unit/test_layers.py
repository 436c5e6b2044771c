"""The five layers of docs/architecture.md: an import only ever points down.

games → blocks → service → adapters → entrypoints, each importing only from the layers before
it; ``grattage.errors`` and ``grattage.clock`` sit beneath all of them. Imports made only for
type checking count too: they are a dependency all the same."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "grattage"
LAYERS = ("games", "blocks", "service", "adapters", "entrypoints")


def _imported_modules(source: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "grattage" or len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = []
    for source in PACKAGE.rglob("*.py"):
        module = ".".join(("grattage", *source.relative_to(PACKAGE).with_suffix("").parts))
        own = _layer(module)
        if own is None:
            continue
        for imported in _imported_modules(source):
            layer = _layer(imported)
            if layer is not None and layer > own:
                upward.append(f"{module} imports {imported}")
    assert not upward


def test_the_layers_are_the_packages_of_the_source_tree() -> None:
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert packages == set(LAYERS)
