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

from ..knee.stats import mean_ci95

FIGURES = ("failure_share", "successes_per_s", "attempts_per_s", "commit_p50_ms", "commit_p99_ms")
# the targets a cell is judged on: the predicted mean within this of the measured one (absolute or relative)
TARGETS = {"failure_share": ("abs", 0.05), "successes_per_s": ("rel", 0.15), "commit_p50_ms": ("rel", 0.20)}
# a prediction runs until its own noise, the 95 % CI half-width of each target figure's mean over the model's
# replications, is at most this share of the target, and no target's edge lies inside that CI (`straddled`), so
# that the model's sampling does not decide a verdict
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


def bounds(fig: str) -> tuple[float, float]:
    """What a figure can be: a share in [0, 1], a rate or a time >= 0."""
    return (0.0, 1.0) if fig.endswith("_share") else (0.0, float("inf"))


def mean_ci(x, lowest: float = 0.0, highest: float = float("inf")) -> tuple[float, float, float]:
    """Mean and its 95 % CI (Student's t), the interval kept within what the figure can be (`bounds`); one value:
    no interval (NaN bounds)."""
    x = np.asarray(x, dtype=float)
    m, h = mean_ci95(x[np.isfinite(x)])
    if h != h:
        return m, float("nan"), float("nan")
    return m, max(lowest, m - h), min(highest, m + h)


def target_edges(fig: str, measured: float) -> tuple[float, float]:
    """Where a target figure's verdict turns: the measured mean less and plus its target."""
    how, tol = TARGETS[fig]
    return (measured - tol, measured + tol) if how == "abs" else (measured * (1 - tol), measured * (1 + tol))


def edge_inside(fig: str, measured: float, lo: float, hi: float) -> bool:
    """Whether one of the figure's target edges lies inside a prediction's CI [lo, hi]: there its verdict, either
    way, is the model's sampling."""
    return any(lo <= e <= hi for e in target_edges(fig, measured))


def target_error(fig: str, measured, predicted: float):
    """How far a prediction is from a measured mean in its target's terms: absolute, or relative to the measured
    (infinite for a measured 0); `measured` may be an array of means."""
    how, _ = TARGETS[fig]
    m = np.asarray(measured, dtype=float)
    if how == "abs":
        err = np.abs(predicted - m)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            err = np.where(m != 0, np.abs(predicted / m - 1), np.inf)
    return err if err.ndim else float(err)


def within(fig: str, measured: float, predicted: float) -> bool:
    """The verdict's rule for one target figure (a NaN is outside)."""
    return bool(target_error(fig, measured, predicted) <= TARGETS[fig][1])


CHANCE_DRAWS = 20_000


def _drawn_means(x: np.ndarray, repetitions: int, rng) -> np.ndarray:
    """CHANCE_DRAWS means of `repetitions` values of `x` drawn at random: a measured mean, were `x` the cell."""
    return x[rng.integers(0, len(x), (CHANCE_DRAWS, repetitions))].mean(axis=1)


def _replicated(rows: pd.DataFrame, fig: str) -> np.ndarray:
    x = rows[fig].to_numpy(dtype=float)
    return x[np.isfinite(x)]


def chance_miss(rows: pd.DataFrame, repetitions: int) -> float:
    """How often the targets would call the cell a miss if the model were exactly right: its replications (one row
    each) stand in for the measurement, `repetitions` of them drawn at random (CHANCE_DRAWS times, a fixed seed)
    as the measured mean, against the mean of them all. What a verdict can tell: near 0, a miss is the model's."""
    rng = np.random.default_rng(0)
    missed = np.zeros(CHANCE_DRAWS, dtype=bool)
    for fig, (_, tol) in TARGETS.items():
        x = _replicated(rows, fig)
        if len(x) < 2 or repetitions < 1:
            continue
        missed |= ~(target_error(fig, _drawn_means(x, repetitions, rng), x.mean()) <= tol)
    return float(missed.mean())


# the repetitions `reps_needed` tries, fewest first, and the chance of a miss it brings a model exactly right to
REPS_LADDER = (3, 5, 10, 15, 20, 30, 40, 60, 80, 100)
CHANCE_BOUND = 0.01


def reps_needed(rows: pd.DataFrame, bound: float = CHANCE_BOUND) -> float:
    """The fewest repetitions (of REPS_LADDER) at which a model exactly right would be called a miss at most
    `bound` of the time (`chance_miss`): how many a cell needs for its verdict to tell the model from the noise of
    its mean. It reads the model's replications alone, so a protocol can be set by it before any verdict is read.
    NaN: more than the ladder's last."""
    for reps in REPS_LADDER:
        if chance_miss(rows, reps) <= bound:
            return float(reps)
    return float("nan")


def band(fig: str, predicted: float) -> tuple[float, float]:
    """The true means a prediction is within its target of: the measured means the verdict calls within."""
    how, tol = TARGETS[fig]
    if how == "abs":
        return predicted - tol, predicted + tol
    return predicted / (1 + tol), (predicted / (1 - tol) if tol < 1 else float("inf"))


def p_outside(rows: pd.DataFrame, repetitions: int, measured: dict) -> tuple[float, str]:
    """Whether a miss is more than the measurement's noise: were the truth at the edge of the prediction's target
    band nearest the `measured` mean (`band`), how often would a mean of `repetitions` fall as far out as it, the
    model's replications (shifted, or scaled for a relative target, to that edge) standing in for the cell's
    repetitions, drawn as in `chance_miss`: (k + 1) / (CHANCE_DRAWS + 1); 1 for a mean the verdict calls within
    (`within`: inside the band). The least over the target figures, and that figure (NaN, "" where none can be
    drawn). Small: the model misses by more than the noise of so many repetitions explains."""
    rng = np.random.default_rng(0)
    least, which = float("nan"), ""
    for fig, (how, _) in TARGETS.items():
        x, m = _replicated(rows, fig), measured.get(fig, float("nan"))
        if len(x) < 2 or repetitions < 1 or m != m:
            continue
        centre = x.mean()
        if how == "rel" and centre == 0:
            continue                     # no band to scale to: a relative target of a prediction of 0
        p = 1.0
        if not within(fig, m, centre):
            above = m > centre
            edge = band(fig, centre)[1 if above else 0]
            at_edge = x + (edge - centre) if how == "abs" else x * (edge / centre)
            means = _drawn_means(at_edge, repetitions, rng)
            far = means >= m if above else means <= m
            p = (int(far.sum()) + 1) / (CHANCE_DRAWS + 1)
        if not p >= least:
            least, which = p, fig
    return least, which


def straddled(rows: pd.DataFrame, measured: dict) -> list[str]:
    """The target figures whose edge (`target_edges` of the `measured` mean) lies inside the 95 % CI of the
    replications' mean (one row each; a figure measured or replicated fewer than twice is none)."""
    out = []
    for fig in TARGETS:
        m = measured.get(fig, float("nan"))
        _, lo, hi = mean_ci(rows[fig], *bounds(fig))
        if m == m and lo == lo and edge_inside(fig, m, lo, hi):
            out.append(fig)
    return out


def precise(rows: pd.DataFrame) -> bool:
    """Whether the replications' figures (one row each) pin every target figure's mean to `PRECISION` of its
    target: the 95 % CI half-width (Student's t) within PRECISION x the target, absolute or of the mean. A figure
    with fewer than two values (no commit in a run) does not hold it back."""
    for fig, (how, tol) in TARGETS.items():
        x = _replicated(rows, fig)
        if len(x) < 2:
            continue
        mean, half = mean_ci95(x)
        if half > PRECISION * tol * (1.0 if how == "abs" else abs(mean)):
            return False
    return True


def first_loser_attempt(records: pd.DataFrame) -> int:
    """The attempt at which a cell's start's first loser committed (0: no writer's first call lost; -1: it gave
    up). Writers start together and their first calls collide; how soon the loser wins back decides which branch
    a short run takes, so a cell's mean can be mostly how many runs took each (a diagnostic, not a target)."""
    firsts = records.sort_values("arrival_ms", kind="stable").groupby("writer").head(1)
    losers = firsts[firsts["attempts"] > 1]
    if losers.empty:
        return 0
    first = losers.sort_values("end_ms", kind="stable").iloc[0]
    return int(first["attempts"]) if first["outcome"] == "committed" else -1
