"""The database's side of a load run, sampled from the cluster's ops host (``python sampler.py
DATABASE_URL OUT STOP_FILE``): every ``PERIOD`` seconds, until STOP_FILE exists, one query
reads which block rows a transaction holds (``pgrowlocks``: the rows locked ``FOR NO KEY
UPDATE`` or updated by a transaction still open — a lane batch from its first statement to
its commit) and what every other client backend is doing (``pg_stat_activity``: running on
the CPU, or waiting, and for what: a row lock, the client's next statement, the WAL's flush).
The tallies go to OUT as JSON.

One query on one connection, every 10 ms: about 100 small queries a second on the database,
which the figures include (a fraction of a per cent of a core, measured with and without).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import psycopg

PERIOD = 0.01
SAMPLE = """
SELECT (SELECT coalesce(array_agg(b.id ORDER BY b.id), '{}')
          FROM pgrowlocks('blocks') AS r JOIN blocks AS b ON b.ctid = r.locked_row),
       (SELECT coalesce(array_agg(coalesce(wait_event_type || ':' || wait_event, 'CPU')), '{}')
          FROM pg_stat_activity
         WHERE backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid())
"""


def main(url: str, out: Path, stop_file: Path) -> None:
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
        samples = 0
        held: Counter[int] = Counter()  # block id → samples its row was held in
        any_held = 0
        states: Counter[str] = Counter()  # what the busy backends did, summed over samples
        waiting_for_lock = 0  # backends waiting for a lock, summed over samples
        started = time.monotonic()
        while not stop_file.exists():
            row = db.execute(SAMPLE).fetchone()
            assert row is not None
            blocks, activity = row
            samples += 1
            held.update(blocks)
            any_held += bool(blocks)
            states.update(activity)
            waiting_for_lock += sum(state.startswith("Lock:") for state in activity)
            time.sleep(PERIOD)
        elapsed = time.monotonic() - started
    out.write_text(
        json.dumps(
            {
                "samples": samples,
                "seconds": elapsed,
                "row_held_fraction": {str(b): n / samples for b, n in sorted(held.items())},
                "any_row_held_fraction": any_held / samples,
                "busy_backends_mean": {k: n / samples for k, n in states.most_common()},
                "lock_waiters_mean": waiting_for_lock / samples,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
