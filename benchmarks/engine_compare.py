"""Engine cost of one checkout against another, configuration by configuration (the benchmark's 48 4c cells).

    python benchmarks/engine_compare.py --base /path/to/other/checkout [--engine fast|simpy] [--out FILE]

Each configuration runs in a fresh process per checkout, alternating between the two so that both meet the same
machine load; the figure is the process CPU time of the simulation alone (best of `--repeat`, after one warm-up
run that compiles or loads the numba cache), which a busy second core disturbs much less than wall time.
"""
from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = ("s3x", "s3", "gcp")
TABLES = (1, 20)
MIXES = (1.0, 0.9)
LOADS_MS = (20, 50, 200, 1000)

CHILD = r"""
import resource, sys, json
sys.path.insert(0, sys.argv[1])
from sim.config import from_dict
from sim.run import run
provider, tables, fa, ia, engine, repeat = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], int(sys.argv[7])
data = {"storage": {"provider": provider}, "workload": {"num_tables": tables, "fast_append_ratio": fa,
        "inter_arrival": {"distribution": "exponential", "mean_ms": ia}}}
if provider == "gcp":
    try:
        from_dict({"storage": {"throttle": False}})
        data["storage"]["throttle"] = False      # the same model on both sides
    except Exception:
        pass
cfg = from_dict(data)
run(replaced(cfg, dict(duration_ms=60000, warmup_ms=10000, cooldown_ms=10000)), engine=engine)
best = 1e9
for _ in range(repeat):
    t0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    s = run(cfg, engine=engine).summary
    best = min(best, resource.getrusage(resource.RUSAGE_SELF).ru_utime - t0)
print(json.dumps({"cpu_s": best, "events": s["events"]}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the other checkout (its sim/ is imported)")
    ap.add_argument("--engine", default="fast")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated providers")
    ap.add_argument("--loads", help="comma-separated inter-arrival means (ms)")
    ap.add_argument("--out")
    a = ap.parse_args()
    providers = a.only.split(",") if a.only else PROVIDERS
    rows = []
    loads = [float(x) for x in a.loads.split(",")] if a.loads else LOADS_MS
    for p, t, fa, ia in itertools.product(providers, TABLES, MIXES, loads):
        got = {}
        for label, repo in (("base", a.base), ("this", str(ROOT))):
            r = subprocess.run([sys.executable, "-c", CHILD, repo, p, str(t), str(fa), str(ia), a.engine,
                                str(a.repeat)], capture_output=True, text=True, cwd=repo)
            got[label] = json.loads(r.stdout.strip().splitlines()[-1])
        assert got["base"]["events"] == got["this"]["events"], (p, t, fa, ia)   # the same runs
        row = {"provider": p, "tables": t, "fa": fa, "ia_ms": ia, "events": got["this"]["events"],
               "base_cpu_s": got["base"]["cpu_s"], "this_cpu_s": got["this"]["cpu_s"],
               "ratio": got["this"]["cpu_s"] / got["base"]["cpu_s"]}
        rows.append(row)
        print(f"{p:>4} {t:>2} {fa:.1f} {ia:>5g} ms  events {row['events']:>9,}  base {row['base_cpu_s']:6.3f} s  "
              f"this {row['this_cpu_s']:6.3f} s  ratio {row['ratio']:.3f}", flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
