"""One replay of a trace of 100,000 commits (docs/model/workload.md, "Trace"): what reading the file, resolving the
config, building the replay and running it cost, against an open-loop run of the same arrivals per second.

    python benchmarks/trace_replay.py              # writes benchmarks/trace_replay.json
    python benchmarks/trace_replay.py --rows 20000 # a smaller trace

The trace is synthetic (`experiments/traces/make_traces.py`'s `synthetic`): 40 tables (Zipf 1.1), a day of commits,
12 named writers owning a fifth of them (each one at a time), the rest open loop, half of the rows with a runtime
(lognormal, median 30 s), the others drawn from `workload.runtime` (median 30 s). s3, design file, one replication,
the compiled engine's cache warm (a first small run compiles it), each figure the best of `--repeats` fresh processes:
the trace's read (pandas and pyarrow imported), the config's resolve (the file read again and hashed), the run
(which loads the compiled loop from numba's cache, as every first run of a process does), and the same run again in
that process. Beside it, an open-loop run of as many arrivals a second and about the same operations (Zipf 1.1 on
40 tables; appends, 10 % overwrites, 4 % row deltas, one partition), which has no writers nor maintenance."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "experiments" / "traces"))

BASE = {"design": "file", "warmup_ms": 3_600_000, "cooldown_ms": 3_600_000, "drain_limit_ms": 3_600_000,
        "workload": {"runtime": {"median_ms": 30_000, "sigma": 1.0, "min_ms": 1_000}}}

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import pandas, pyarrow.parquet
from sim.trace import read_trace
from sim.config import from_dict
from sim.run import run
t1 = time.perf_counter()
spec = json.loads(sys.argv[1])
t = time.perf_counter(); read_trace(spec["path"]); read_s = time.perf_counter() - t
t = time.perf_counter(); cfg = from_dict(spec["config"]); resolve_s = time.perf_counter() - t
t = time.perf_counter(); res = run(cfg, 0, stream=False); run_s = time.perf_counter() - t
t = time.perf_counter(); run(cfg, 0, stream=False); again_s = time.perf_counter() - t
s = res.summary
print(json.dumps({"import_s": t1 - t0, "read_s": read_s, "resolve_s": resolve_s, "run_s": run_s,
                  "again_s": again_s, "transactions": s["transactions_total"], "events": s["events"],
                  "committed": s["committed"], "success_rate": s["success_rate"]}))
"""


def child(spec: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def best(spec: dict, repeats: int) -> dict:
    runs = [child(spec) for _ in range(repeats)]
    return {k: min(r[k] for r in runs) if k.endswith("_s") else runs[0][k] for k in runs[0]}


def main() -> None:
    from make_traces import synthetic
    from sim.trace import write_trace
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "trace_replay.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.parquet"
        t = time.perf_counter()
        df = synthetic(args.rows, seed=1)
        write_trace(df, path)
        made_s = time.perf_counter() - t
        day_ms = 24 * 3_600_000.0
        trace = {"path": str(path), "config": {**BASE, "workload": {**BASE["workload"], "trace": {"path": str(path)}}}}
        child({"path": str(path), "config": {**trace["config"], "duration_ms": 8 * 3_600_000}})   # compiles
        replay = best(trace, args.repeats)
        gap_ms = day_ms / args.rows
        open_loop = {"path": str(path), "config": {**BASE, "duration_ms": day_ms, "workload": {
            **BASE["workload"], "num_tables": 40, "table_selection": {"distribution": "zipf", "alpha": 1.1},
            "inter_arrival": {"mean_ms": gap_ms}, "operations": {
                "partitions": 1, "overwrite_share": 0.10, "row_delta_share": 0.04}}}}
        open_run = best(open_loop, args.repeats)
    out = {"rows": args.rows, "trace_made_s": made_s, "replay": replay, "open_loop": open_run,
           "date": time.strftime("%Y-%m-%d"), "python": sys.version.split()[0], "cpus": os.cpu_count()}
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    for name in ("replay", "open_loop"):
        r = out[name]
        print(f"{name}: read {r['read_s']:.3f} s, resolve {r['resolve_s']:.3f} s, run {r['run_s']:.2f} s, again "
              f"{r['again_s']:.2f} s ({r['transactions']:,} transactions, {r['events']:,} events, "
              f"{1e6 * r['again_s'] / r['events']:.2f} us an event again); success {r['success_rate']:.4f}")


if __name__ == "__main__":
    main()
