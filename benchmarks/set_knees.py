"""The knees under both provider profile sets (docs/MODEL.md, "Profile sets"): the designs knee (open-loop
arrivals, FastAppends, the model's 1 h runs) of four designs on s3, s3x and azure at one table and on s3 at 10
tables, and the writers knee (periodic writers on one s3 table, a commit every 10 s, ~2 s of work before each, as
experiments/writers-knee.yaml), each under `storage.profile_set` seed and measured (rest's database at a stated
10 ms). Each cell is one `python -m sim knee` search (its defaults; writers from 1,128), run one after another.
gcp is left out: under both sets its per-object limit is the provider's bucket, which does not reproduce its
one-writer loop.

    python benchmarks/set_knees.py                  # prints the table
    python benchmarks/set_knees.py --designs file fs-table      # some designs (log's s3x searches are the slowest)
    python benchmarks/set_knees.py --out DIR        # keep the searches' runs and knee.json files in DIR
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server_knees import WRITERS_BASE as _WRITERS, _cell, knee  # noqa: E402

DESIGNS = ("file", "fs-table", "log", "rest")
SETS = ("seed", "measured")
DESIGN_CELLS = (("s3", 1), ("s3x", 1), ("azure", 1), ("s3", 10))
DESIGNS_BASE = {"workload": {"inter_arrival": {"distribution": "exponential"}, "fast_append_ratio": 1.0}}
WRITERS_BASE = {k: v for k, v in _WRITERS.items() if k != "catalog"}
#: a service design's database latency, stated (no public figure), as server_knees.py's; a storage catalog has none
SERVICE_DB = {"rest": {"catalog.latency_ms": 10.0}}
WRITERS_INTERVAL_MS = 10_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "set-knees")
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=DESIGNS)
    args = ap.parse_args(argv)
    head = " | ".join(f"{p}, {n} table{'s' if n > 1 else ''}" for p, n in DESIGN_CELLS)
    rows = [f"| design | set | {head} | writers, s3, every {WRITERS_INTERVAL_MS // 1000} s |",
            "|---" * (len(DESIGN_CELLS) + 3) + "|"]
    for design in args.designs:
        for profile_set in SETS:
            sets = {"design": design, "storage.profile_set": profile_set, **SERVICE_DB.get(design, {})}
            cells = [_cell(knee(DESIGNS_BASE, {**sets, "storage.provider": p, "workload.num_tables": n},
                                args.out / f"designs-{design}-{profile_set}-{p}-{n}"), "cps")
                     for p, n in DESIGN_CELLS]
            cells.append(_cell(knee(WRITERS_BASE, {**sets, "workload.writers.interval_ms": WRITERS_INTERVAL_MS},
                                    args.out / f"writers-{design}-{profile_set}", ("--start", "1,128")), "writers"))
            rows.append(f"| {design} | {profile_set} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
