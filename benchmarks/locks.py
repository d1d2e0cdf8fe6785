"""What the lock-based designs cost to simulate: one run of each of their heaviest cells (CPU time, transactions,
lock requests and grants, events per CPU second), as benchmarks/writers.py does for writer workloads.

    python benchmarks/locks.py [--repeat 3]      # prints a table; writes benchmarks/locks.json

Per configuration: the minimum CPU time (`time.process_time`) of `--repeat` runs in this process after a warm-up
run (numba's cache compiled). `events` is `sim.run`'s count (transaction starts, catalog reads and conditional
writes) plus the lock's effect points the records count (requests and grants; an HMS waiter's polls and a racing
poller's GETs are more, uncounted). The cells: 64 periodic writers a second on one table (HMS polled with its
waiters 5 s apart; Hudi's ZooKeeper with parked waiters), an open-loop overload of each lock design (a queue that
grows for the whole hour, timeouts and re-requests), and Delta's DynamoDB log store throttled (the SDK's resends).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from writers import time_run as writers_time_run  # noqa: E402

HOUR = {"duration_ms": 3_600_000, "warmup_ms": 600_000, "cooldown_ms": 600_000}
WORK = {"median_ms": 2000, "sigma": 0.5, "min_ms": 0}
PERIODIC = {"writers": {"count": 64, "mode": "periodic", "interval_ms": 1000}, "runtime": WORK}
CONFIGS = {
    "periodic 64 x 1 s, hive, s3": {**HOUR, "design": "hive", "catalog": {"latency_ms": 10},
                                    "storage": {"provider": "s3"}, "workload": PERIODIC},
    "periodic 64 x 1 s, hudi, s3": {**HOUR, "design": "hudi", "lock": {"latency_ms": 10},
                                    "storage": {"provider": "s3"}, "workload": PERIODIC},
    "open loop 10/s, hive, s3": {**HOUR, "design": "hive", "catalog": {"latency_ms": 10},
                                 "storage": {"provider": "s3"}, "workload": {"inter_arrival": {"mean_ms": 100}}},
    "open loop 10/s, hudi, s3": {**HOUR, "design": "hudi", "lock": {"latency_ms": 10},
                                 "storage": {"provider": "s3"}, "workload": {"inter_arrival": {"mean_ms": 100}}},
    "open loop 10/s, hudi dynamodb lock, s3": {
        **HOUR, "design": "hudi", "lock": {"variant": "dynamodb", "latency_ms": 10}, "storage": {"provider": "s3"},
        "workload": {"inter_arrival": {"mean_ms": 100}}},
    "open loop 10/s over 10 tables, delta-dynamodb, s3": {
        **HOUR, "design": "delta-dynamodb", "log_store": {"latency_ms": 10}, "storage": {"provider": "s3"},
        "workload": {"inter_arrival": {"mean_ms": 100}, "num_tables": 10}},
}


def time_run(data: dict, repeat: int) -> dict:
    """writers.py's timing, the lock's requests and grants counted as events."""
    r, summary = writers_time_run(data, repeat, lambda s: int(s["lock_requests"]) + int(s["lock_grants"]))
    return {**r, "lock_requests": int(summary["lock_requests"]), "lock_timeouts": int(summary["lock_timeouts"]),
            "success_rate": summary["success_rate"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    out = {}
    print("| run | CPU | events | events/s | window transactions | lock requests | timeouts | success |")
    print("|---|---|---|---|---|---|---|---|")
    for name, data in CONFIGS.items():
        r = out[name] = time_run(data, args.repeat)
        print(f"| {name} | {r['cpu_s']:.3f} s | {r['events']:,} | {r['events_per_s'] / 1e6:.2f} M | "
              f"{r['transactions']:,} | {r['lock_requests']:,} | {r['lock_timeouts']:,} | {r['success_rate']:.3f} |")
    (ROOT / "benchmarks" / "locks.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
