"""cas-bench under the model against the benchmark's own per-thread figures (issue "Writers in rounds").

    python benchmarks/calibration/cas_bench.py [--replications 5] [--jobs 2] [--label NAME] [--out cas_bench.md]

Runs `experiments/cas-bench-measured.yaml` (five providers, 1 to 16 writers, 300 s each, no retries) replication by
replication, keeping each run's transactions, and prints per cell, beside the benchmark's
(`benchmarks/calibration/data/cas_bench.json`, from endive analysis/distributions.json):
- failure share: failed operations over finished ones (an operation is one attempt; on gcp one given up on its
  429s is a failure, as the benchmark counts it);
- success/s and attempts/s: committed and finished operations a second of the run;
- success p50 and p99: the successful operations' whole loop (HEAD, GET, conditional PUT, and any 429 resends),
  from arrival to answer, as the benchmark times an operation; failure p50 the failed operations' (a loser's PUT
  tends to be the slower one: S3 checks at completion).
Means over replications; the percentiles of all replications' successes pooled.
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from sim import api  # noqa: E402
from sim.model.state import Outcome  # noqa: E402
from sim.sweep import load  # noqa: E402

SPEC = ROOT / "experiments" / "cas-bench-measured.yaml"
BENCH = json.loads((HERE / "data" / "cas_bench.json").read_text())["providers"]


def one(args) -> dict:
    """One replication of one cell: its operations' counts and its successes' loop latencies."""
    cfg, rep = args
    res = api.run(cfg, rep, stream=False)
    c = res.columns
    done = c["outcome"] != int(Outcome.UNFINISHED)
    ok = c["outcome"] == int(Outcome.COMMITTED)
    secs = cfg.duration_ms / 1000.0
    loop = c["end_ms"] - c["arrival_ms"]
    return {"provider": cfg.storage.provider, "writers": cfg.workload.writers.count,
            "success_per_s": ok.sum() / secs, "attempts_per_s": done.sum() / secs,
            "failure_share": 1.0 - ok.sum() / max(done.sum(), 1), "loop_ms": loop[ok], "failed_ms": loop[done & ~ok]}


def measure(replications: int, jobs: int) -> dict:
    """Per (provider, writers): the means over replications and the pooled successes' p50 and p99."""
    spec = load(SPEC)
    tasks = [(p.config, r) for p in spec.points for r in range(replications)]
    with ProcessPoolExecutor(jobs) as ex:
        runs = list(ex.map(one, tasks))
    cells = {}
    for r in runs:
        cells.setdefault((r["provider"], r["writers"]), []).append(r)
    out = {}
    for key, rs in cells.items():
        loops = np.concatenate([r["loop_ms"] for r in rs])
        failed = np.concatenate([r["failed_ms"] for r in rs])
        out[key] = {k: float(np.mean([r[k] for r in rs])) for k in ("success_per_s", "attempts_per_s",
                                                                      "failure_share")}
        out[key].update(success_p50_ms=float(np.percentile(loops, 50)), success_p99_ms=float(np.percentile(loops, 99)),
                        failure_p50_ms=float(np.percentile(failed, 50)) if len(failed) else float("nan"))
    return out


def table(model: dict, label: str) -> str:
    """The markdown table: model / benchmark per figure, and how far each model figure is from the benchmark's."""
    head = ("| provider | writers | failure share | success/s | attempts/s | success p50 ms | success p99 ms | "
            "failure p50 ms |\n|---|---|---|---|---|---|---|---|")
    rows = [f"{label} / benchmark, per cell (model's deviation: failure share in pp, the others in %)", "", head]
    for (prov, n), m in model.items():
        b = BENCH[prov][str(n)]
        fs = f"{100 * m['failure_share']:.1f} / {100 * b['failure_share']:.1f} " \
             f"({100 * (m['failure_share'] - b['failure_share']):+.1f})"
        cells = [fs] + [f"{m[k]:.3g} / {b[k]:.3g} ({100 * (m[k] / b[k] - 1):+.0f} %)" if b[k] and m[k] == m[k]
                        else "-"
                        for k in ("success_per_s", "attempts_per_s", "success_p50_ms", "success_p99_ms",
                                  "failure_p50_ms")]
        rows.append(f"| {prov} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--label", default="model")
    ap.add_argument("--out", type=Path, default=None, help="append the table to this markdown file")
    a = ap.parse_args()
    text = table(measure(a.replications, a.jobs), a.label)
    print(text)
    if a.out is not None:
        with a.out.open("a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
