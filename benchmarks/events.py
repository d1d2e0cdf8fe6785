"""Engine events per committed transaction, per named design: what the fast engine's loop pops from its heap.

    python benchmarks/events.py                              # this checkout; writes benchmarks/events.md
    python benchmarks/events.py --before ../other-checkout   # ... beside another checkout's (e.g. before a change)

Each named design on S3 (measured set), one table, FA 0.9, exponential arrivals at 500 ms and 2000 ms, 10
simulated minutes (2-minute warm-up and cool-down), replication 0; a service, lock or DynamoDB latency of 10 ms
where the design needs one (no public figure). An engine event is one pop of the fast engine's queue; the count is
the eids it handed out less what its queue still holds at the end, so it reads any checkout's engine unchanged.
`effect points` is the summary's `events` (arrivals, catalog reads and conditional writes: engine-independent).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ("file", "service-pointer", "fs-table", "rest", "rest-lakekeeper", "log", "log-spark", "delta-dynamodb",
           "hive", "hudi")
LOADS_MS = (500, 2000)
LATENCY_MS = 10.0


def config(design: str, mean_ms: float) -> dict:
    minutes = 10
    d = {"design": design, "duration_ms": minutes * 60_000.0, "warmup_ms": minutes * 12_000.0,
         "cooldown_ms": minutes * 12_000.0, "storage": {"provider": "s3"},
         "workload": {"num_tables": 1, "fast_append_ratio": 0.9,
                      "inter_arrival": {"distribution": "exponential", "mean_ms": mean_ms}}}
    if design in ("rest", "rest-lakekeeper", "service-pointer", "hive"):
        d["catalog"] = {"latency_ms": LATENCY_MS}
    if design == "hudi":
        d["lock"] = {"latency_ms": LATENCY_MS}
    if design == "delta-dynamodb":
        d["log_store"] = {"latency_ms": LATENCY_MS}
    return d


def measure() -> list[dict]:
    """In this process, with the checkout first on sys.path: one row per design and load."""
    from sim import api
    from sim.engines import fast
    states = []

    class Counting:
        """The design's loop, keeping the loop state it is handed (its eid counter and heap size)."""
        def __init__(self, loop):
            self.loop = loop

        @property
        def signatures(self):
            return self.loop.signatures

        def __call__(self, *args):
            states.append(args)
            return self.loop(*args)

    loop_for = fast.loop_for
    fast.loop_for = lambda design: Counting(loop_for(design))
    rows = []
    for design in DESIGNS:
        for mean_ms in LOADS_MS:
            states.clear()
            res = api.run(api.config(config(design, mean_ms)), stream=False)
            args = states[-1]
            e = args[1]
            events = int(e[fast.E_EID] - e[fast.E_HEAP])
            if hasattr(fast, "queue"):   # (an event queue with buckets: its bucketed events are pending too)
                events -= int(args[5][fast.queue.USED])
            rec = res.records
            committed = int((rec["outcome"] == "committed").sum())
            rows.append({"design": design, "mean_ms": mean_ms, "committed": committed,
                         "transactions": int(len(rec)), "engine_events": events,
                         "effect_points": int(res.summary["events"])})
    return rows


def measure_in(repo: Path) -> list[dict]:
    """`measure` in a fresh process running `repo`'s sim."""
    env = {**os.environ, "PYTHONPATH": str(repo)}
    out = subprocess.run([sys.executable, __file__, "--measure"], env=env, check=True, capture_output=True,
                         text=True, cwd=repo).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, help="another checkout, measured beside this one")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "events.md")
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure()))
        return
    after = measure_in(ROOT)
    before = measure_in(args.before.resolve()) if args.before else None
    lines = ["# Engine events per committed transaction", "",
             "`python benchmarks/events.py" + (" --before CHECKOUT`" if before else "`") +
             ": " + __doc__.split("\n\n")[2].replace("\n", " "), "",
             "| design | arrivals ms | commits | engine events / commit" + (", before" if before else "") +
             " | engine events / commit | effect points / commit |",
             "|---|---|---|---|" + ("---|" if before else "") + "---|"]
    for i, r in enumerate(after):
        per = lambda row, key: row[key] / max(row["committed"], 1)   # noqa: E731
        cells = [r["design"], str(r["mean_ms"]), str(r["committed"])]
        if before:
            cells.append(f"{per(before[i], 'engine_events'):.2f}")
        cells += [f"{per(r, 'engine_events'):.2f}", f"{per(r, 'effect_points'):.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
