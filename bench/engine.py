"""Engine benchmarks (issue 2).

1. Generate + write + verify a 12 000 000-unit Cash block, against the bare CSPRNG permutation
   of a 12 000 000-element array measured in the same run (target ratio ≤ 3), each in a fresh
   child process so that its peak resident memory is its own (target ≤ 300 MB).
2. ``design`` + ``evaluate`` per game on one core, prizes drawn as a real block sells them
   (target ≥ 20 000 tickets/s).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

BLOCK_SIZE = 12_000_000

_BASELINE = """
import json, resource, time
from grattage.blocks.shuffle import bare_permutation, secure_generator
start = time.perf_counter()
bare_permutation({size}, secure_generator())
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds,
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""

_BLOCK = """
import json, resource, tempfile, time
from pathlib import Path
from grattage.blocks.blockfile import verify_block_file
from grattage.blocks.generation import generate_block_file
from grattage.games import find_game
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "cash.block"
    start = time.perf_counter()
    generate_block_file(find_game("cash"), path)
    written = time.perf_counter()
    verify_block_file(path)
    done = time.perf_counter()
print(json.dumps({{"seconds": done - start, "generate_write": written - start,
                  "verify": done - written,
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""

_IDLE = """
import json, resource
import grattage.blocks.generation, grattage.blocks.blockfile
print(json.dumps({"peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _child(code: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def block_benchmark(rounds: int = 3) -> None:
    idle = _child(_IDLE)["peak_kib"]
    baselines = [_child(_BASELINE.format(size=BLOCK_SIZE)) for _ in range(rounds)]
    blocks = [_child(_BLOCK.format()) for _ in range(rounds)]
    base = min(b["seconds"] for b in baselines)
    best = min(blocks, key=lambda b: b["seconds"])
    print(f"Cash block of 12 000 000 units (best of {rounds}, each in a fresh process)")
    print(f"  bare CSPRNG permutation     {base:7.3f} s")
    print(
        f"  generate + write + verify   {best['seconds']:7.3f} s "
        f"(generate+write {best['generate_write']:.3f} s, verify {best['verify']:.3f} s)"
    )
    print(f"  ratio                       {best['seconds'] / base:7.2f}   (target ≤ 3)")
    peak = max(b["peak_kib"] for b in blocks) / 1024
    print(
        f"  peak memory                 {peak:7.1f} MB  (target ≤ 300 MB; "
        f"the interpreter with numpy alone: {idle / 1024:.1f} MB)"
    )


def _designs_per_second(game: Any, tickets: int) -> float:
    from grattage.blocks.sealing import design_unit, new_block_key, unit_salt
    from grattage.blocks.shuffle import secure_generator, shuffled_tiers

    tiers = shuffled_tiers(game.table, secure_generator())[:tickets].tolist()
    prizes = [game.table.prize_of_tier(t) for t in tiers]
    choice = game.choices[0] if game.choices else None
    key = new_block_key()
    salts = [unit_salt(key, position) for position in range(tickets)]
    start = time.process_time()  # CPU time: the figure of one core, even on a shared machine
    for salt, prize in zip(salts, prizes, strict=True):
        document = design_unit(game, salt, prize, choice)
        if game.evaluate(document) != prize:
            raise AssertionError("a design does not show its prize")
    return tickets / (time.process_time() - start)


def design_benchmark(tickets: int = 100_000) -> None:
    """design + evaluate under today's rules (design-v2), against design-v1 in the same run."""
    from grattage.games import find_game, rules_versions

    for name in ("cash", "astro"):
        first, current = rules_versions(name)[0], rules_versions(name)[-1]
        baseline = _designs_per_second(find_game(name, rules_version=first), tickets)
        rate = _designs_per_second(find_game(name, rules_version=current), tickets)
        print(
            f"  {name:<6} design + evaluate  {rate:10,.0f} tickets per CPU second "
            f"(target ≥ 20 000; {current.rsplit('/', 1)[1]}), "
            f"{rate / baseline:.2f} × design-v1's {baseline:,.0f}"
        )


def main(sections: Sequence[str] = ("blocks", "designs")) -> None:
    if "blocks" in sections:
        block_benchmark()
    if "designs" in sections:
        print("Ticket designs, as a block sells them (salted per unit, evaluated back)")
        design_benchmark()


if __name__ == "__main__":  # python -m bench.engine designs: the design section alone
    main(sys.argv[1:] or ("blocks", "designs"))
