"""What an overloaded `log` run costs: delta-rs's snapshot update reads every entry committed since the last check
on 1000 lanes, thousands of GETs a round at high load, so the lane scheduling (`sim/model/io.py`, `lanes_ms`)
decides the run's cost.

    python benchmarks/log_lanes.py [--repeat 3] [--tree CHECKOUT]

One configuration: design `log`, s3x, one table, FastAppend, Poisson arrivals at 50/s (mean gap 20 ms: past
the log's knee, the top of experiments/designs-knee.yaml's start bracket), 15 simulated minutes (5 of warm-up, a
5-minute drain limit). Prints the run's process CPU seconds (min of `--repeat`, after a warm-up run that compiles),
the GETs it drew and GETs per CPU second. `--tree` runs another checkout's `sim` (e.g. a worktree of the commit
before a change), so before and after are the same script on the same machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

CONFIG = {"design": "log", "storage": {"provider": "s3x"},
          "workload": {"num_tables": 1, "inter_arrival": {"distribution": "exponential", "mean_ms": 20.0}},
          "duration_ms": 900_000.0, "warmup_ms": 300_000.0, "cooldown_ms": 0.0, "drain_limit_ms": 300_000.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tree", default=str(Path(__file__).resolve().parent.parent))
    args = ap.parse_args()
    sys.path.insert(0, args.tree)
    from sim import api
    cfg = api.config(CONFIG)
    api.run(api.config({**CONFIG, "duration_ms": 60_000.0, "warmup_ms": 0.0}))     # compiles, off the clock
    cpu = []
    for _ in range(args.repeat):
        t0 = time.process_time()
        r = api.run(cfg)
        cpu.append(time.process_time() - t0)
    gets = int(r.records["gets"].sum())
    print(f"sim from {Path(sys.modules['sim'].__file__).parent.parent}")
    print(f"CPU s (min of {args.repeat}): {min(cpu):.2f}  [{', '.join(f'{c:.2f}' for c in cpu)}]")
    print(f"GETs drawn: {gets:,}  ({gets / min(cpu) / 1e6:.1f} M per CPU s); committed: {r.summary['committed']:,}; "
          f"success_rate {r.summary['success_rate']:.4f}")


if __name__ == "__main__":
    main()
