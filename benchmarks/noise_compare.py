"""Do two sweeps' results differ by more than their runs' own noise, cell for cell? For a change of model whose
results move (e.g. model version 10's long reads), against the same sweep before it.

    python benchmarks/noise_compare.py BEFORE_DIR AFTER_DIR [--metrics success_rate throughput_cps ...]
        [--out benchmarks/noise_compare.md]

Each DIR is a sweep's results (`DIR/results.parquet`) of the same sweep file with the same replications (e.g.
`sim sweep experiments/4c.yaml --replications 5`, once on each checkout). Per cell (the sweep's swept values) and
metric: the mean over replications before and after, and the 95 % CI of the difference of means (Welch: each
side's replications are its own noise). A cell moves beyond noise when 0 lies outside that CI; with no change
in law about 5 % of cells do so by chance. Also: cells whose values are equal bit for bit (runs with nothing
that changed), and the largest differences in units of their CI half-width.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

METRICS = ("success_rate", "throughput_cps", "commit_latency_mean_ms", "commit_latency_p99_ms", "mean_attempts")


def cells(df: pd.DataFrame) -> list[str]:
    """The swept values: the sweep file's dotted paths (columns with a dot)."""
    return [c for c in df.columns if "." in c]


def compare(before: pd.DataFrame, after: pd.DataFrame, metrics) -> pd.DataFrame:
    keys = cells(before)
    rows = []
    b_groups = dict(tuple(before.groupby(keys)))
    for key, a in after.groupby(keys):
        b = b_groups[key]
        for m in metrics:
            x, y = b[m].dropna().to_numpy(float), a[m].dropna().to_numpy(float)
            if len(x) < 2 or len(y) < 2:
                continue
            diff = y.mean() - x.mean()
            se = math.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
            if se > 0:
                dof = se ** 4 / ((x.var(ddof=1) / len(x)) ** 2 / (len(x) - 1) + (y.var(ddof=1) / len(y)) ** 2 / (len(y) - 1))
                half = stats.t.ppf(0.975, dof) * se
            else:
                half = 0.0
            same = len(x) == len(y) and np.array_equal(np.sort(x), np.sort(y))
            rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))), "metric": m,
                         "before": x.mean(), "after": y.mean(), "diff": diff, "ci_half": half,
                         "beyond": (abs(diff) > half) if not same else False, "same_bits": same,
                         "in_half_widths": abs(diff) / half if half > 0 else (0.0 if diff == 0 else math.inf)})
    return pd.DataFrame(rows)


def summary(cmp: pd.DataFrame) -> list[str]:
    lines = ["| metric | cells | equal bit for bit | moved | beyond their CI (share of moved) | largest |diff| / CI half-width |",
             "|---|---|---|---|---|---|"]
    for m, g in cmp.groupby("metric", sort=False):
        moved = g[~g["same_bits"]]
        share = f"{int(moved['beyond'].sum())} ({100 * moved['beyond'].mean():.1f} %)" if len(moved) else "0"
        largest = moved["in_half_widths"].replace(math.inf, np.nan).max() if len(moved) else 0.0
        lines.append(f"| {m} | {len(g)} | {int(g['same_bits'].sum())} | {len(moved)} | {share} | {largest:.2f} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--metrics", nargs="+", default=list(METRICS))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    before = pd.read_parquet(args.before / "results.parquet")
    after = pd.read_parquet(args.after / "results.parquet")
    cmp = compare(before[before["status"] == "ok"], after[after["status"] == "ok"], args.metrics)
    lines = [f"`{args.before}` against `{args.after}`: {before['replication'].nunique()} replications a cell", ""]
    lines += summary(cmp)
    worst = cmp[~cmp["same_bits"]].sort_values("in_half_widths", ascending=False).head(10)
    if len(worst):
        lines += ["", "Largest moves (|diff| / CI half-width):", "", "```",
                  worst.to_string(index=False, float_format="{:.4g}".format), "```"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
