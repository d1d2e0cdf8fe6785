"""The designs knees of the lock-service designs with their services' own capacity (docs/MODEL.md, "Iceberg on the
Hive Metastore" and "Delta on S3 with DynamoDB"): `hive` (HMS's NEXT_LOCK_ID row, shared by every table) with HMS at a
stated 10 and 50 ms, and `delta-dynamodb` (the DynamoDB table's read capacity, shared by every table) with DynamoDB
at a stated 10 ms; open-loop arrivals, FastAppends, the model's 1 h runs, on s3 at 1, 10 and 50 tables. Each cell
is one `python -m sim knee` search (its defaults), run one after another, as benchmarks/server_knees.py's.

    python benchmarks/lock_service_knees.py                 # prints the table (about 6 min of CPU)
    python benchmarks/lock_service_knees.py --out DIR       # keep the searches' runs and knee.json files in DIR
    python benchmarks/lock_service_knees.py --row-load      # HMS's row at the 50-table knees: one 1 h run each
    python benchmarks/lock_service_knees.py --hms-versions  # hive only, Hive 4 and Hive 3 (its checkLock mutex)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from server_knees import DESIGNS_BASE, knee  # noqa: E402

TABLES = (1, 10, 50)
# (row label, the design and its service's stated round trip)
SERVICES = (("hive, HMS 10 ms", {"design": "hive", "catalog.latency_ms": 10.0}),
            ("hive, HMS 50 ms", {"design": "hive", "catalog.latency_ms": 50.0}),
            ("delta-dynamodb, DynamoDB 10 ms", {"design": "delta-dynamodb", "log_store.latency_ms": 10.0}))
# `--hms-versions`: hive's rows under Hive 4 (the default: the row only) and Hive 3 (the row, then the checkLock mutex)
HMS_VERSIONS = tuple((f"{label}, Hive {v}", {**sets, **({"lock.hms_version": 3} if v == 3 else {})})
                     for label, sets in SERVICES[:2] for v in (4, 3))


# (HMS round trip ms, arrivals/s): the 50-table knees of the hive rows (model version 8), and the lower CI bounds
ROW_LOAD_CELLS = ((10.0, 61.8), (50.0, 28.6), (50.0, 30.7))
WINDOW_MS = (900_000, 2_700_000)   # the 1 h run's window (warmup and cooldown 15 min)


def row_load() -> list[str]:
    """HMS's NEXT_LOCK_ID row at 50 tables on s3: `lock()` calls a second, the row's busy share (a third of the
    round trip each), its wait a commit, over the transactions that began to commit in the window (replication 0)."""
    from sim.config import from_dict
    from sim.run import run
    lines = ["| HMS | arrivals/s | `lock()` calls/s | row busy | row wait a commit, mean / P99 (ms) | attempts a "
             "commit | success |", "|---" * 7 + "|"]
    for latency_ms, rate in ROW_LOAD_CELLS:
        d = {"design": "hive", "catalog": {"latency_ms": latency_ms}, "storage": {"provider": "s3"},
             "workload": {**DESIGNS_BASE["workload"], "num_tables": 50,
                          "inter_arrival": {"distribution": "exponential", "mean_ms": 1000.0 / rate}}}
        res = run(from_dict(d), 0)
        r = res.records
        w = r[(r.runtime_end_ms >= WINDOW_MS[0]) & (r.runtime_end_ms < WINDOW_MS[1])]
        per_s = w["lock_requests"].sum() / ((WINDOW_MS[1] - WINDOW_MS[0]) / 1000)
        lines.append(f"| {latency_ms:g} ms | {rate} | {per_s:.1f} | {per_s * latency_ms / 3 / 1000:.2f} | "
                     f"{w.pool_wait_ms.mean():.1f} / {w.pool_wait_ms.quantile(0.99):.0f} | {w.attempts.mean():.2f} | "
                     f"{res.summary['success_rate']:.3f} |")
    return lines


def _cell(k: dict) -> str:
    """A knee, commits/s [95 % CI]; an unbounded side is "?" (an undecided search says so)."""
    lo, hi = (f"{b:.3g}" if b is not None else "?" for b in k["offered_cps_ci95"])
    value = f"{k['offered_cps']:.3g} [{lo}, {hi}]"
    return value if k.get("decided", True) else value + " (undecided)"


def service_row(label: str, sets: dict, out: Path) -> str:
    """One design's row: its designs knee at each table count."""
    parts = label.split(", ")
    name = parts[0] + "-" + parts[1].split()[-2] + "".join("-" + p.replace(" ", "").lower() for p in parts[2:])
    base = {"workload": DESIGNS_BASE["workload"]}
    return f"| {label} | " + " | ".join(
        _cell(knee(base, {**sets, "storage.provider": "s3", "workload.num_tables": n}, out / f"{name}-{n}"))
        for n in TABLES) + " |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "lock-service-knees")
    ap.add_argument("--row-load", action="store_true", help="HMS's row at the 50-table knees instead")
    ap.add_argument("--hms-versions", action="store_true", help="hive's rows under Hive 4 and Hive 3 instead")
    args = ap.parse_args(argv)
    if args.row_load:
        print("\n".join(row_load()))
        return 0
    out = args.out
    lines = ["| design | " + " | ".join(f"s3, {n} table{'s' if n > 1 else ''}" for n in TABLES) + " |",
             "|---" * (len(TABLES) + 1) + "|"]
    for label, sets in HMS_VERSIONS if args.hms_versions else SERVICES:
        lines.append(service_row(label, sets, out))
        print(lines[-1], flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
