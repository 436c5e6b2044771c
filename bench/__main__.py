"""Run every benchmark: ``python -m bench`` (``make bench``)."""

from __future__ import annotations

import importlib

from bench import engine

OPTIONAL = ("bench.platform", "bench.fairness")


def main() -> None:
    engine.main()
    for name in OPTIONAL:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as missing:
            if missing.name != name:
                raise
            continue
        print()
        module.main()


if __name__ == "__main__":
    main()
