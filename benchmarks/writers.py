"""What writer workloads cost: one run of each kind of writers (CPU time, events, events/s), and the writers
experiments as whole commands.

    python benchmarks/writers.py               # prints a table; writes benchmarks/writers.json
    python benchmarks/writers.py --sweeps      # also times the three writers experiments (fresh result dirs)

Per configuration: the minimum CPU time (`time.process_time`) of `--repeat` runs in this process after a
warm-up run (numba's cache compiled), the run's events (transaction starts, catalog reads and conditional
writes, as `sim.run` counts them) and events per CPU second. The configurations are the heaviest cells of the
experiments: the microbenchmark at 16 threads on s3x (5 min), periodic writers at 64 per table on a 1 s cadence
(file on s3, log on azurex; 1 h), closed-loop writers at 32 on one s3 table (1 h).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim import api  # noqa: E402

HOUR = {"duration_ms": 3_600_000, "warmup_ms": 600_000, "cooldown_ms": 600_000}
WORK = {"median_ms": 2000, "sigma": 0.5, "min_ms": 0}
CONFIGS = {
    "cas-bench s3x 16 threads": {
        "duration_ms": 300_000, "warmup_ms": 0, "cooldown_ms": 0, "storage": {"provider": "s3x"},
        "commit": {"shape": "object", "max_retries": 0},
        "workload": {"writers": {"count": 16}, "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}},
    "periodic 64 x 1 s, file, s3": {
        **HOUR, "design": "file", "storage": {"provider": "s3"},
        "workload": {"writers": {"count": 64, "mode": "periodic", "interval_ms": 1000}, "runtime": WORK}},
    "periodic 64 x 1 s, log, azurex": {
        **HOUR, "design": "log", "storage": {"provider": "azurex"},
        "workload": {"writers": {"count": 64, "mode": "periodic", "interval_ms": 1000}, "runtime": WORK}},
    "closed 32, file, s3": {
        **HOUR, "storage": {"provider": "s3"}, "workload": {"writers": {"count": 32}, "runtime": WORK}},
}
SWEEPS = ("experiments/cas-bench.yaml", "experiments/writers.yaml", "experiments/writers-knee.yaml")


def time_run(data: dict, repeat: int, extra_events=lambda summary: 0) -> tuple[dict, dict]:
    """The best CPU time of `repeat` runs after a warm-up, events per CPU second (the run's count plus
    `extra_events` of its summary), and the last run's summary."""
    cfg = api.config(data)
    api.run(cfg)   # warm-up
    best, summary = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        summary = api.run(cfg).summary
        best = min(best, time.process_time() - t0)
    events = int(summary["events"]) + extra_events(summary)
    return {"cpu_s": best, "events": events, "events_per_s": events / best,
            "transactions": int(summary["arrived"])}, summary


def time_sweep(path: str) -> dict:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sim", "sweep", path, "--out", out, "--no-progress"], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        return {"wall_s": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sweeps", action="store_true", help="also time the writers experiments")
    args = ap.parse_args()
    out = {"runs": {}, "sweeps": {}}
    for name, data in CONFIGS.items():
        r = out["runs"][name] = time_run(data, args.repeat)[0]
        print(f"{name:32s} {r['cpu_s']:7.3f} s CPU  {r['events']:>11,} events  {r['events_per_s'] / 1e6:6.2f} M/s  "
              f"{r['transactions']:>9,} transactions", flush=True)
    if args.sweeps:
        for path in SWEEPS:
            r = out["sweeps"][path] = time_sweep(path)
            print(f"{path:32s} {r['wall_s']:7.1f} s wall", flush=True)
    (ROOT / "benchmarks" / "writers.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
