"""Run every benchmark: ``python -m bench`` (``make bench``); each prints its own figures."""

from __future__ import annotations

from bench import draw, draw_platform, engine, fairness, platform, storage, transparency


def main() -> None:
    engine.main()
    print()
    fairness.main()
    print()
    transparency.main()
    print()
    draw.main()
    print()
    platform.main()
    print()
    draw_platform.main()
    print()
    storage.main()


if __name__ == "__main__":
    main()
