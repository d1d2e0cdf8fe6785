"""Closed-loop stress of the REST catalog servers (docs/MODEL.md, "Server capacity"): 2 to 32 writers x 50 commits
on one table, client retries off, a barrier start (every writer starts at 0), no work between commits, s3, the
database at a stated 10 ms; one row per server variant and writer count.

    python benchmarks/server_stress.py                       # every variant this checkout has; prints the table
    python benchmarks/server_stress.py --out FILE.json       # also writes the rows
    python benchmarks/server_stress.py --latency-ms 50       # a slower database
    python benchmarks/server_stress.py --variants rest rest-lakekeeper service-pointer   # designs, for a checkout
                                                             # without catalog.server's capacity (model version 4)

Per row: successes (commits), attempts (POSTs; one per transaction with retries off) and the attempt's latency,
P50 and P99 over every transaction: from its runtime's end (no runtime: its base read's answer) to its answer,
so the refresh, the prepare and the POST with the server's work and its waits. One replication (0): 100 to 1600
transactions a row. The same runs are experiments/server-stress.yaml as a sweep.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim import api  # noqa: E402

WRITERS = (2, 4, 8, 16, 32)
COMMITS = 50
BASE = {
    "duration_ms": 36_000_000, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 36_000_000,
    "storage": {"provider": "s3"}, "catalog": {"latency_ms": 10.0}, "commit": {"max_retries": 0},
    "workload": {"num_tables": 1, "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0},
                 "writers": {"count": 1, "commits": COMMITS}},
}
# a variant: (its name in the table, the design it runs, its catalog.server variant or None for the design's own)
VARIANTS = {
    "reference": ("rest", "reference"),
    "polaris": ("rest", "polaris"),
    "lakekeeper": ("rest-lakekeeper", "lakekeeper"),
    "lakekeeper-0.9": ("rest-lakekeeper", "lakekeeper-0.9"),
    "jdbc": ("service-pointer", None),
    "nessie": ("rest", "nessie"),   # its one-table commit: one commit on its branch, its ref's CAS retried up to 5 s
    # Lakekeeper >= 0.10 as version 10 ran it: one CAS request, no wait for the row (version 11's row hold off)
    "lakekeeper-no-row-wait": ("rest-lakekeeper", "lakekeeper", {"lock_scope": "statement"}),
    # designs as such (before catalog.server had capacity: the designs' own servers)
    "rest": ("rest", None),
    "rest-lakekeeper": ("rest-lakekeeper", None),
    "service-pointer": ("service-pointer", None),
}
AFTER = ("reference", "polaris", "lakekeeper", "lakekeeper-0.9", "jdbc", "nessie")


def config(variant: str, writers: int, latency_ms: float = 10.0) -> dict:
    design, server, *extra = VARIANTS[variant]
    data = json.loads(json.dumps(BASE))
    data["catalog"]["latency_ms"] = latency_ms
    data["design"] = design
    data["workload"]["writers"]["count"] = writers
    if server is not None:
        data["catalog"]["server"] = {"variant": server, **(extra[0] if extra else {})}
    return data


def row(variant: str, writers: int, latency_ms: float = 10.0) -> dict:
    t0 = time.perf_counter()
    rec = api.run(api.config(config(variant, writers, latency_ms))).records
    latency = (rec["end_ms"] - rec["runtime_end_ms"]).to_numpy()
    return {"variant": variant, "writers": writers, "transactions": int(len(rec)),
            "successes": int((rec["outcome"] == "committed").sum()), "attempts": int(rec["attempts"].sum()),
            "attempt_p50_ms": float(np.percentile(latency, 50)), "attempt_p99_ms": float(np.percentile(latency, 99)),
            "pool_wait_max_ms": float(rec["pool_wait_ms"].max()) if "pool_wait_ms" in rec else 0.0,
            "makespan_s": float(rec["end_ms"].max() / 1000.0), "wall_s": time.perf_counter() - t0}


def markdown(rows: list[dict]) -> str:
    out = ["| variant | writers | successes | attempts | attempt P50 (ms) | attempt P99 (ms) |",
           "|---|---|---|---|---|---|"]
    out += [f"| {r['variant']} | {r['writers']} | {r['successes']} | {r['attempts']} | {r['attempt_p50_ms']:.0f} | "
            f"{r['attempt_p99_ms']:.0f} |" for r in rows]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", nargs="+", default=list(AFTER), choices=sorted(VARIANTS))
    ap.add_argument("--latency-ms", type=float, default=10.0, help="the database's latency (default 10)")
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = ap.parse_args(argv)
    rows = [row(v, n, args.latency_ms) for v in args.variants for n in WRITERS]
    print(markdown(rows))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
