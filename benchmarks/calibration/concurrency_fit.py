"""The figures only concurrency shows, fitted on the benchmark's 2- and 4-writer cells ONLY (issue "What only
concurrency shows"): S3 Express's late loser and Azure's busy answers (docs/model/concurrent-writes.md), each
provider's one figure of its measured set's `concurrency_fit`.

    python benchmarks/calibration/concurrency_fit.py [--jobs 2]    # prints the scans; writes concurrency_fit.md (25 CPU min)

The mechanisms are those the candidates' comparison chose (concurrency_candidates.md: each rival fitted the same
way in a loop of its own, and scored on the same cells). Here the model itself (`sim`, the provider's file with
the figure set to each grid point, in a temporary directory) runs experiments/cas-bench-measured.yaml's
configuration at 2 and 4 writers, 20 runs (RUNS) of 120 s a point; a point's score is the sum over those cells of
(failure share's miss / 5 pp)^2 + (success/s's miss / 15 %)^2 (the issue's tolerances), against the benchmark's
figures (data/cas_bench.json). The lowest score's figure is the provider file's. The 1-, 8- and 16-writer cells
are never run here: cas_bench.py runs every cell, at the benchmark's length (5 runs of 300 s), as the held-out
check. The runs are seeded by their config, which names the temporary file: a rerun gives scores within their
noise.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from sim import api  # noqa: E402
from sim.model.state import Outcome  # noqa: E402
from sim.providers import providers_dir  # noqa: E402

BENCH = json.loads((HERE / "data" / "cas_bench.json").read_text())["providers"]
FIT_WRITERS, RUNS, DURATION_MS = (2, 4), 20, 120_000.0
# each provider's figure and its grid
FITS = {
    "s3x": ("loser_answer_ms", tuple(np.round(np.arange(3.0, 12.01, 0.5), 2))),
    "azure": ("busy_error_share", tuple(np.round(np.arange(0.04, 0.1401, 0.005), 3))),
    "azurex": ("busy_error_share", tuple(np.round(np.arange(0.04, 0.1401, 0.005), 3))),
}


def with_figure(provider: str, key: str, value: float, where: Path) -> str:
    """providers/<provider>.yaml with its measured set's concurrency_fit figure `key` set to `value`."""
    data = yaml.safe_load((providers_dir() / f"{provider}.yaml").read_text())
    data["measured"]["concurrency_fit"][key] = float(value)
    path = where / f"{provider}-{key}-{value:g}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def config(provider_path: str, writers: int) -> dict:
    """experiments/cas-bench-measured.yaml's configuration, 120 s, on a provider file."""
    return {"duration_ms": DURATION_MS, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": DURATION_MS,
            "storage": {"provider": provider_path, "profile_set": "measured", "throttle_retry": {"policy": "gax"}},
            "commit": {"shape": "object", "max_retries": 0},
            "workload": {"writers": {"count": writers}, "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}}


def one(args) -> tuple:
    """One run: (failure share, success/s)."""
    path, writers, rep = args
    c = api.run(config(path, writers), rep, stream=False).columns
    done = c["outcome"] != int(Outcome.UNFINISHED)
    ok = c["outcome"] == int(Outcome.COMMITTED)
    return path, writers, 1.0 - ok.sum() / max(done.sum(), 1), ok.sum() / (DURATION_MS / 1000.0)


def scan(provider: str, jobs: int, where: Path) -> list[dict]:
    """Every grid point's fitted cells and score."""
    key, grid = FITS[provider]
    paths = {with_figure(provider, key, v, where): v for v in grid}
    tasks = [(p, n, r) for p in paths for n in FIT_WRITERS for r in range(RUNS)]
    with ProcessPoolExecutor(jobs) as ex:
        runs = list(ex.map(one, tasks))
    rows = []
    for path, value in paths.items():
        row = {"value": value, "score": 0.0}
        for n in FIT_WRITERS:
            got = [(fs, s) for p, w, fs, s in runs if p == path and w == n]
            fs, s = float(np.mean([g[0] for g in got])), float(np.mean([g[1] for g in got]))
            b = BENCH[provider][str(n)]
            row[n] = (fs, s)
            row["score"] += (100 * (fs - b["failure_share"]) / 5) ** 2 + (100 * (s / b["success_per_s"] - 1) / 15) ** 2
        rows.append(row)
    return rows


def table(provider: str, rows: list[dict]) -> str:
    key = FITS[provider][0]
    b = {n: BENCH[provider][str(n)] for n in FIT_WRITERS}
    best = min(rows, key=lambda r: r["score"])
    lines = [f"{provider}: `{key}` (benchmark: " + "; ".join(
        f"{n} writers failure share {100 * b[n]['failure_share']:.1f} %, success/s {b[n]['success_per_s']:.3g}"
        for n in FIT_WRITERS) + f"); fitted: **{best['value']:g}**", "",
             f"| {key} | " + " | ".join(f"{n} writers: failure share, success/s" for n in FIT_WRITERS) + " | score |",
             "|---|" + "---|" * len(FIT_WRITERS) + "---|"]
    for r in rows:
        mark = "**" if r is best else ""
        lines.append(f"| {mark}{r['value']:g}{mark} | " + " | ".join(
            f"{100 * r[n][0]:.1f} %, {r[n][1]:.3g}" for n in FIT_WRITERS) + f" | {r['score']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--providers", nargs="*", default=list(FITS))
    a = ap.parse_args()
    parts = []
    with tempfile.TemporaryDirectory() as tmp:
        for prov in a.providers:
            parts.append(table(prov, scan(prov, a.jobs, Path(tmp))))
            print(parts[-1], flush=True)
    head = __doc__.split("\n\n", 2)[2]
    (HERE / "concurrency_fit.md").write_text(
        "# Figures only concurrency shows, fitted on 2 and 4 writers (`benchmarks/calibration/concurrency_fit.py`)\n\n"
        + head + "\n" + "\n".join(parts))


if __name__ == "__main__":
    main()
