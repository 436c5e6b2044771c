"""Run every benchmark: ``python -m bench`` (``make bench``); each prints its own figures."""

from __future__ import annotations

from bench import engine, fairness, platform


def main() -> None:
    engine.main()
    print()
    fairness.main()
    print()
    platform.main()


if __name__ == "__main__":
    main()
