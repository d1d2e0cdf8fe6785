"""How writers' success curves look to the knee search (docs/knee.md, 'Writers knee'): does logit(success) fit
better linear in N or in log N (binomial deviance of both fits over windows around the crossing), and do short
pilot runs see less contention than full ones, as open-loop runs do (the crossing of 1/6-length runs against
full-length ones). Writes benchmarks/calibration/writers_knee_fit.md.

    python benchmarks/calibration/writers_knee_fit.py [--reps 4]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import special

from sim.config import from_dict
from sim.knee.fit import _irls
from sim.run import run

BASE = {"duration_ms": 1_800_000, "warmup_ms": 300_000, "cooldown_ms": 300_000, "drain_limit_ms": 600_000,
        "workload": {"num_tables": 1, "runtime": {"median_ms": 5000, "sigma": 0.5, "min_ms": 1000}}}
FAST = {"median_ms": 1000, "sigma": 0.5, "min_ms": 0}
#: name -> (storage provider, max_retries, runtime (None: BASE's), writers)
CASES = {
    "s3, closed, think 2 s (exp.), 1 retry": ("s3", 1, None, {"mode": "closed", "think_ms": 2000,
                                                              "think": "exponential", "start_spread_ms": 5000}),
    "s3x, closed, think 0, 3 retries, 1 s runtime": ("s3x", 3, FAST, {"mode": "closed"}),
    "s3, periodic 10 s (jitter 1 s), 2 retries, 2 s runtime": ("s3", 2, {**FAST, "median_ms": 2000},
                                                                {"mode": "periodic", "interval_ms": 10_000,
                                                                 "jitter_ms": 1000}),
    "gcp, closed, think 1 s (exp.), 2 retries": ("gcp", 2, None, {"mode": "closed", "think_ms": 1000,
                                                                  "think": "exponential", "start_spread_ms": 5000}),
}
PILOT = 1 / 6
THR = 0.95


def config(provider, retries, runtime, writers, fraction=1.0):
    w = {**BASE["workload"], "writers": {**writers, "count": 1}}
    if runtime is not None:
        w["runtime"] = runtime
    return from_dict({**BASE, "duration_ms": BASE["duration_ms"] * fraction, "warmup_ms": BASE["warmup_ms"] * fraction,
                      "cooldown_ms": BASE["cooldown_ms"] * fraction, "workload": w,
                      "storage": {"provider": provider}, "commit": {"max_retries": retries}})


def runs(cfg, counts, reps):
    """(N, committed, window transactions) of every run, N in `counts` (stopping once success is below 0.6)."""
    out = []
    for n in counts:
        got = [run(cfg.replace(**{"workload.writers.count": int(n)}), r, stream=False).summary for r in range(reps)]
        out += [(n, s["committed"], s["arrived"]) for s in got]
        if sum(s["committed"] for s in got) < 0.6 * sum(s["arrived"] for s in got):
            break
    return np.array(out, float).T


def deviance(x, k, n) -> float:
    """Binomial deviance of the logit-link regression of k / n on x (sim.knee.fit's IRLS)."""
    y = k / n
    eta = _irls(x, y, n, special.logit((k + 0.5) / (n + 1.0)))[0]
    mu = np.clip(special.expit(eta), 1e-12, 1 - 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(y > 0, y * np.log(y / mu), 0) + np.where(y < 1, (1 - y) * np.log((1 - y) / (1 - mu)), 0)
    return 2 * float((n * terms).sum())


def crossing(N, K, A) -> float:
    """The first count whose pooled success is below THR, interpolated in log(failure) against log N."""
    ns = np.unique(N)
    y = np.array([K[N == m].sum() / A[N == m].sum() for m in ns])
    i = int(np.argmax(y < THR))
    if i == 0:
        return float("nan")
    g0, g1 = (np.log((1 - y[j]) / (1 - THR)) if y[j] < 1 else -10.0 for j in (i - 1, i))
    x0, x1 = np.log(ns[i - 1]), np.log(ns[i])
    return float(np.exp(x0 - g0 * (x1 - x0) / (g1 - g0)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4)
    args = ap.parse_args()
    link = ["| case | N* | window of N | runs | deviance, logit in N | deviance, logit in log N |",
            "|---|---|---|---|---|---|"]
    bias = ["| case | full-length crossing | pilot (1/6) crossing | pilot / full |", "|---|---|---|---|"]
    grid = np.unique(np.round(np.geomspace(2, 96, 25))).astype(int)
    for name, case in CASES.items():
        N, K, A = runs(config(*case), range(1, 97), args.reps)
        cross = crossing(N, K, A)
        for lo, hi in ((1 / 1.3, 1.3), (1 / 2, 2), (0, np.inf)):
            sel = (N >= max(1.0, cross * lo)) & (N <= cross * hi)
            d = [deviance(x, K[sel], A[sel]) for x in (N[sel], np.log(N[sel]))]
            link.append(f"| {name} | {cross:.2f} | {N[sel].min():.0f}-{N[sel].max():.0f} | {sel.sum()} | "
                        f"{d[0]:.1f} | {d[1]:.1f} |")
        full = crossing(*runs(config(*case), grid, args.reps))
        pilot = crossing(*runs(config(*case, fraction=PILOT), grid, 6 * args.reps))
        bias.append(f"| {name} | {full:.2f} | {pilot:.2f} | {pilot / full:.2f} |")
        print(link[-3:], bias[-1], sep="\n", flush=True)
    text = (f"# Writers' success curves (benchmarks/calibration/writers_knee_fit.py --reps {args.reps})\n\n"
            "Each writer count N = 1, 2, ... (until success < 0.6) run `--reps` times, 30 min (window 20 min), "
            "one table. N*: where pooled success crosses 0.95. Binomial deviance of the logit-link regression of "
            "each run's success on N and on log N over the runs with N within 1.3x, 2x of N* and over all:\n\n"
            + "\n".join(link) + "\n\nShort pilot runs (1/6 of the length, 6x the replications) against full-length "
            "ones, both on the same 25 counts from 2 to 96:\n\n" + "\n".join(bias) + "\n")
    Path(__file__).with_suffix(".md").write_text(text)


if __name__ == "__main__":
    main()
