"""The figures a testbed cell is compared on, computed the same way from measured and from simulated records.

A cell is N writers each making M commits in a closed loop from a common start, so its span is from the first
arrival to the last end, and every transaction counts (no warm-up: the model runs the same N x M from the same
start, and its tail, when writers have finished and contention falls, is the same shape):
- failure share: failed commit attempts over attempts (with the client's retries off, failed transactions over
  transactions; with them on, what contention costs in attempts, whatever the transactions' outcome);
- abort share: transactions that did not commit, over transactions;
- successes/s and attempts/s over the span;
- commit p50 and p99: a committed transaction's whole call, from its start (the base read) to its answer.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

FIGURES = ("failure_share", "successes_per_s", "attempts_per_s", "commit_p50_ms", "commit_p99_ms")
# the targets a cell is judged on: the predicted mean within this of the measured one (absolute or relative)
TARGETS = {"failure_share": ("abs", 0.05), "successes_per_s": ("rel", 0.15), "commit_p50_ms": ("rel", 0.20)}
# a prediction runs until its own noise, the 95 % CI half-width of each target figure's mean over the model's
# replications, is at most this share of the target, so that the model's sampling does not decide a verdict
PRECISION = 0.25


def figures(records: pd.DataFrame) -> dict:
    """One cell's figures from its records (columns arrival_ms, end_ms, outcome, attempts)."""
    committed = records["outcome"].to_numpy() == "committed"
    attempts = records["attempts"].to_numpy(dtype=float)
    span_s = (np.nanmax(records["end_ms"]) - np.nanmin(records["arrival_ms"])) / 1000.0
    lat = (records["end_ms"] - records["arrival_ms"]).to_numpy()[committed]
    n_att = float(np.nansum(attempts))
    return {
        "transactions": int(len(records)),
        "committed": int(committed.sum()),
        "attempts": int(n_att),
        "span_s": float(span_s),
        "failure_share": (n_att - committed.sum()) / n_att if n_att else float("nan"),
        "abort_share": 1.0 - committed.mean() if len(records) else float("nan"),
        "successes_per_s": committed.sum() / span_s if span_s > 0 else float("nan"),
        "attempts_per_s": n_att / span_s if span_s > 0 else float("nan"),
        "commit_p50_ms": float(np.percentile(lat, 50)) if len(lat) else float("nan"),
        "commit_p99_ms": float(np.percentile(lat, 99)) if len(lat) else float("nan"),
    }


def precise(rows: pd.DataFrame) -> bool:
    """Whether the replications' figures (one row each) pin every target figure's mean to `PRECISION` of its
    target: the 95 % CI half-width (Student's t) within PRECISION x the target, absolute or of the mean. A figure
    with fewer than two values (no commit in a run) does not hold it back."""
    from scipy import stats
    for fig, (how, tol) in TARGETS.items():
        x = rows[fig].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        if len(x) < 2:
            continue
        half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
        if half > PRECISION * tol * (1.0 if how == "abs" else abs(x.mean())):
            return False
    return True
