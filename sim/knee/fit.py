"""The fit: a binomial regression of each run's success (committed / window transactions that began to commit,
`points.trials`) on log rate with a logit link (iteratively reweighted least squares), over the full runs within
two spreads of the bracket's crossing. Over-dispersion (transactions of one run are correlated; gcp's collapse
comes in some runs and not in others) is Pearson's chi^2 / (m - 2), at least 1; the crossing of the threshold is
the ratio (level above the threshold at the runs' weighted mean log rate) / (slope), with Fieller's 95 %
interval, Student-t with m - 2 degrees of freedom. Every full run near the crossing counts, probes included, and
the interval's degrees of freedom grow with runs rather than replications of a pair. For a mix the knee is the
lower of the crossings of the metrics that fail somewhere in the window, its CI [lowest low, lowest high]."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .points import trials
from .stats import fieller

#: the fit's runs must include this many on each side of the crossing
MIN_SIDE = 2


@dataclass(frozen=True)
class Crossing:
    """Where one metric's fitted success curve crosses the threshold, in log rate, with its Fieller 95 % interval
    and what the fit rests on."""
    x: float                 # NaN when the fitted success does not fall with load
    low: float
    high: float
    slope: float             # d logit(success) / d log rate: < 0 when success falls with load
    dispersion: float        # Pearson chi^2 / (m - 2), at least 1 (binomial)
    arrived: float           # mean trials (window transactions that began to commit) of this kind per run
    se: float = math.inf     # the crossing's standard error by the delta method (to project the half-width)
    design: tuple = ()       # (weighted mean log rate, logit success there, sum of weights, weighted Sxx)
    all_pass: bool = False   # every run of the fit has success >= the threshold: the metric does not bind here
    sides: tuple = (0, 0)    # runs below and above the crossing

    def variance_with(self, x: float, weight: float) -> float:
        """The crossing's delta-method variance (in units of dispersion / slope^2) if one more run of binomial
        weight `weight` were added at log rate `x`: 1 / sum w + (crossing - weighted mean)^2 / Sxx."""
        xm, _, sw, sxx = self.design
        sw2 = sw + weight
        xm2 = (sw * xm + weight * x) / sw2
        sxx2 = sxx + sw * weight / sw2 * (x - xm) ** 2
        return 1 / sw2 + (self.x - xm2) ** 2 / sxx2

    def weight_at(self, x: float) -> float:
        """A run's binomial weight n p (1 - p) at log rate `x` by the fitted curve (arrivals grow with rate)."""
        xm, a, _, _ = self.design
        mu = special.expit(a + self.slope * (x - xm))
        return self.arrived * math.exp(x - xm) * mu * (1 - mu)

    def success_at(self, x: float) -> float:
        """The fitted success at log rate `x` (in (0, 1); the threshold at the crossing); NaN without a fit (fewer
        than 3 runs, one rate, or every trial succeeded or failed)."""
        if not self.design:
            return math.nan
        xm, a, _, _ = self.design
        return float(special.expit(a + self.slope * (x - xm)))

    @property
    def inside(self) -> bool:
        """MIN_SIDE runs on each side: the crossing is interpolated, and the slope is measured across it."""
        return min(self.sides) >= MIN_SIDE


def logistic_crossing(x, committed, trials, thr: float) -> Crossing:
    """The log rate where success crosses `thr`, from a binomial regression of each run's success (committed /
    trials: window transactions that began to commit) on log rate with a logit link, fitted by iteratively
    reweighted least squares over independent runs. Over-dispersion (transactions of one run are correlated;
    gcp's collapse happens in some runs and not others) is Pearson's chi^2 / (m - 2), at least 1; the interval is
    Fieller's for the ratio (level above the threshold at the weighted mean log rate) / (slope), Student-t with
    m - 2 degrees of freedom. A fourth-power failure curve 1 / (1 + c r^4) is exactly linear in this link."""
    x, k, n = (np.asarray(v, float) for v in (x, committed, trials))
    x, k, n = x[n > 0], k[n > 0], n[n > 0]
    m = x.size
    all_pass = bool(np.all(k >= thr * n))
    if m < 3 or np.ptp(x) == 0 or k.sum() in (0.0, n.sum()):
        return Crossing(math.nan, -math.inf, math.inf, math.nan, math.nan, float(n.mean()) if m else 0.0,
                        all_pass=all_pass)
    y = k / n
    eta, a, b, xm, sw, sxx = _irls(x, y, n, special.logit((k + 0.5) / (n + 1.0)))
    mu = np.clip(special.expit(eta), 1e-12, 1 - 1e-12)
    phi = max(1.0, float((n * (y - mu) ** 2 / (mu * (1 - mu))).sum()) / (m - 2))
    gamma, var_g, var_b = a - special.logit(thr), phi / sw, phi / sxx
    theta, lo, hi = fieller(gamma, -b, var_g, var_b, 0.0, m - 2)
    se = math.sqrt(var_g + theta * theta * var_b) / -b if b < 0 else math.inf
    x0 = xm + theta
    return Crossing(x0, xm + lo, xm + hi, b, phi, float(n.mean()), se, (xm, a, float(sw), sxx), all_pass,
                    (int((x < x0).sum()), int((x > x0).sum())))


def _irls(x, y, n, eta):
    """The logit-link binomial regression of success `y` (of `n` arrivals) on `x`, in the centred form
    eta = a + b (x - xm), by iteratively reweighted least squares from `eta`: the last iteration's
    (eta, a, b, xm, sum of weights, weighted Sxx)."""
    for _ in range(100):
        mu = np.clip(special.expit(eta), 1e-12, 1 - 1e-12)
        w = n * mu * (1 - mu)
        z = eta + (y - mu) / (mu * (1 - mu))
        sw = w.sum()
        xm = float((w * x).sum() / sw)
        sxx = float((w * (x - xm) ** 2).sum())
        a = float((w * z).sum() / sw)
        b = float((w * (x - xm) * z).sum() / sxx)
        new = a + b * (x - xm)
        done = np.max(np.abs(new - eta)) < 1e-10
        eta = new
        if done:
            break
    return eta, a, b, xm, sw, sxx


@dataclass(frozen=True)
class Fit:
    """The full runs within the window around `center` (log rate) and each checked metric's crossing."""
    center: float
    runs: list                    # (log rate, summary) of every run in the window
    crossings: dict               # metric prefix -> Crossing

    def _active(self) -> list[Crossing]:
        """The metrics that bind somewhere in the window (a mix's whole-run success often passes in every run
        around the VO knee: it does not bound the knee there)."""
        return [c for c in self.crossings.values() if not c.all_pass]

    @property
    def binding(self) -> Crossing | None:
        xs = self._active()
        return None if not xs or any(math.isnan(c.x) for c in xs) else min(xs, key=lambda c: c.x)

    def knee(self) -> tuple[float, float, float]:
        """(knee, low, high) in arrivals/s: the lowest crossing and [lowest low, lowest high] over the metrics
        that bind in the window; NaN knee when one of them has fitted success that does not fall with load."""
        if self.binding is None:
            return math.nan, 0.0, math.inf
        xs = self._active()
        return (math.exp(self.binding.x), math.exp(min(c.low for c in xs)), math.exp(min(c.high for c in xs)))

    def success_at(self, prefix: str, x: float) -> float:
        """The fitted success of one kind at log level `x` (the threshold at its own crossing; in [0, 1]); the
        pooled success of the fit's runs when that kind's fit is degenerate (every trial succeeded, or too few
        runs); NaN when the kind is not checked."""
        if prefix not in self.crossings:
            return math.nan
        s = self.crossings[prefix].success_at(x)
        if math.isnan(s):
            n = sum(trials(r, prefix) for _, r in self.runs if f"{prefix}arrived" in r)
            s = sum(r[f"{prefix}committed"] for _, r in self.runs if f"{prefix}arrived" in r) / n if n else math.nan
        return s

    def commits_per_arrival(self, x: float) -> float:
        """Commits per window arrival at log level `x`: the fit runs' share of arrivals that began to commit times
        the whole mix's fitted success there (a knee's commits/s is its offered rate times this)."""
        return self.trial_share() * self.success_at("", x)

    def trial_share(self) -> float:
        """The fit runs' share of window arrivals that began to commit (the trials of `points.trials`)."""
        arrived = sum(r.get("arrived", 0) for _, r in self.runs)
        return sum(trials(r, "") for _, r in self.runs) / arrived if arrived else math.nan

    def halfwidth(self) -> float:
        knee, low, high = self.knee()
        return (high - low) / 2 / knee if not math.isnan(knee) else math.inf
