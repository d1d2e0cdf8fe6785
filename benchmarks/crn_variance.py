"""What common random numbers buy: the variance of a difference between two configurations over replication
pairs, with and without CRN (docs/knee.md, 'Common random numbers'). Writes benchmarks/crn_variance.md.

    python benchmarks/crn_variance.py [--reps 20]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from sim.config import from_dict, replaced
from sim.run import run

BASE = {"storage": {"provider": "s3"},
        "workload": {"num_tables": 5, "fast_append_ratio": 0.9, "inter_arrival": {"mean_ms": 150}}}
#: (name, change A, change B, metric)
COMPARISONS = [
    ("retry policy: catalog immediate vs exponential backoff", {}, {"retry.catalog": {"policy": "exponential"}},
     "success_rate"),
    ("retry policy: catalog immediate vs exponential backoff", {}, {"retry.catalog": {"policy": "exponential"}},
     "commit_latency_mean_ms"),
    ("load: 150 ms vs 135 ms mean gap", {}, {"workload.inter_arrival.mean_ms": 135}, "success_rate"),
    ("load: 150 ms vs 135 ms mean gap", {}, {"workload.inter_arrival.mean_ms": 135}, "throughput_cps"),
    ("design: catalog in storage vs inlined table metadata", {}, {"catalog.table_metadata_inlined": True},
     "success_rate"),
]


def differences(change_a, change_b, metric, crn, reps):
    base = replaced(from_dict(BASE), {"common_random_numbers": crn})
    a, b = replaced(base, change_a), replaced(base, change_b)
    return np.array([run(b, r).summary[metric] - run(a, r).summary[metric] for r in range(reps)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args(argv)
    lines = [f"Base: s3, 5 tables, FA 0.9, exponential arrivals 150 ms, 1 h simulated; {args.reps} replication "
             "pairs per row.", "",
             "| comparison | metric | mean difference | var without CRN | var with CRN | variance ratio |",
             "|---|---|---|---|---|---|"]
    for name, ca, cb, metric in COMPARISONS:
        off = differences(ca, cb, metric, False, args.reps)
        on = differences(ca, cb, metric, True, args.reps)
        v_off, v_on = off.var(ddof=1), on.var(ddof=1)
        lines.append(f"| {name} | {metric} | {on.mean():.4g} | {v_off:.3g} | {v_on:.3g} | "
                     f"{v_off / v_on if v_on > 0 else float('inf'):.1f}x |")
        print(lines[-1], flush=True)
    Path(__file__).with_name("crn_variance.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
