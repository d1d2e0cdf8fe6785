"""Knee search: the usable throughput of one configuration, estimated where its success curve crosses the threshold
instead of read off a load grid.

Definition. The knee is the highest offered rate r (arrivals/s; r = 1000 / the mean inter-arrival gap in ms)
at which the success rate, and for a mix (fast_append_ratio < 1) the VO success rate too, is at least the
threshold: the crossing of the mean success curve (the lower crossing over the checked metrics). Success is
over window arrivals: a transaction still unfinished at the drain limit counts as not successful, per kind
too (an overloaded run finishes few transactions, and those succeed; `run_success`).

Phase 1, pilot (locates the knee; never enters its CI or its fit). One short run per point: duration, warmup and
cooldown all scaled by `pilot_fraction` (1/6: 10 min instead of 1 h). Both ends of the start bracket are run (an
end on the wrong side is pushed out by 4x, at most `expansions` times, then the knee is reported `above_range` /
`below_range`); points are classified by their mean, and while the bracket is wider than `precision` (hi / lo - 1)
a point is added inside it: log(failure share) interpolated linearly in log rate between the ends (failure grows
like a power of the rate below the knee), kept in the bracket's middle 70 %, bisected when the same end moved twice
in a row or the bracket is within twice the precision. The pilot's guess is that interpolation between its final
ends. Far-off points cost a sixth of a run each. Short runs are biased: concurrency builds up over the runtimes (3
min median, heavy tail), so a 10-min run sees less contention than an hour; on 4c the pilot's crossing sat
1.4-1.65x above the full runs', and gcp's 3-4x (its 1 write/s per object collapses into 429 resends only once the
backlog has built).

Phase 2, full-length runs (the estimate and its CI; one full run each, every one under its own replication
index, so they are independent). The first runs at the pilot's guess / `pilot_bias` (1.5, from that
measurement; it moves only where the walk starts, not the estimate). Until the full runs bracket the crossing,
each next one goes where they put it: the secant through the two points nearest it, or from a single point a
step of 1.5x when its failure share is off the allowed one by more than 2x (else the pilot's local slope, but
at least a spread); a step may grow to 1.5^2 and 1.5^4 while all points stay on one side. The full-length
bracket is read off a monotone (non-increasing, pool-adjacent-violators) fit of success over the full points,
so one noisy run cannot pin it. While it is wider than two spreads and a standard spread, a run is added
inside it (log(failure share) interpolated, middle 70 %, bisected when the same end moved twice): gcp's success
is flat and then falls off a cliff, and only a narrow bracket keeps the fit on the cliff's edge.

Then the fit: a binomial regression of each run's success (committed / window arrivals) on log rate with a
logit link (iteratively reweighted least squares), over the full runs within two spreads of the bracket's
crossing. Over-dispersion (transactions of one run are correlated; gcp's collapse comes in some runs and not
in others) is Pearson's chi^2 / (m - 2), at least 1; the crossing of the threshold is the ratio (level above
the threshold at the runs' weighted mean log rate) / (slope), with Fieller's 95 % interval, Student-t with
m - 2 degrees of freedom. Every full run near the crossing counts, probes included, and the interval's degrees
of freedom grow with runs rather than replications of a pair. The spread (how far new runs sit from the
crossing) is the spec's (4 %), widened to at most 15 % until `min_runs` runs there pin the slope (Fieller's
g at most 0.25, by the fitted slope, dispersion and binomial weight): S3's single table about 7 %, gcp's VO
(50 transactions a run) 15 %. Each new run goes within a spread of the crossing where it shrinks the crossing's
delta-method variance most (a sequential c-optimal design; a run where success is lower carries more binomial
information), after runs on the side that has fewer than 2. The search stops when the fit has at least
`min_runs` (4) runs, 2 on each side of the crossing, and the CI half-width / knee is at most `halfwidth`; or
at `max_runs` full runs; or, from 12 runs in the fit on, when even `max_runs` would leave the delta-method
half-width 1.5x the target (futile). For a mix the knee is the lower of the crossings of the metrics that fail
somewhere in the window, its CI [lowest low, lowest high]. Throughput and latencies at the knee come from
least-squares lines on log rate through the fit's runs, with their 95 % prediction-of-the-mean CIs. Common
random numbers link the pilot's points (they share replication 0, so its bracket is smooth); full runs take
distinct replications: under CRN two runs of one replication share their workload, an error common to both
that the fit's residuals could not see.

Coverage: on a synthetic curve with run noise and per-run shifts (2x the binomial sd) the 95 % CI covers the
true crossing in 94.3 % of 400 searches stopped at 8 full runs and 95.5 % with the adaptive stop (87 % if z
replaced t, 76 % with the binomial variance as it is); on a gcp-like cliff 89 % of 100
(`tests/test_knee.py` checks >= 90 % and >= 85 %). On 10 cells of 4c the brute-force crossing of a dense grid
lies inside the CI in 10 of 10 (and in 5 more cells checked the same way). Measured on 4c (README): 803
simulated hours (the 900-run grid: 900), median half-width 3.6 %, all 90 cells within 5 %.

Pure logic: a `KneeSearch` says which (point, replication) runs it needs next and is fed their summaries;
`sim.sweep.knee` executes them (any executor, cached in the results store).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special, stats

from .config import Config, ConfigError
from .schema import Field, check

LOAD_PARAMS = ("workload.inter_arrival.mean_ms", "workload.inter_arrival.median_ms")
#: metrics reported at the knee, with their 95 % CIs (least squares over the fit's runs)
AT_KNEE = ("success_rate", "vo_success_rate", "throughput_cps", "offered_cps",
           "commit_latency_mean_ms", "commit_latency_p99_ms", "fa_commit_latency_mean_ms",
           "fa_commit_latency_p99_ms", "vo_commit_latency_mean_ms", "vo_commit_latency_p99_ms")


@dataclass(frozen=True)
class KneeSpec:
    param: str | None = None            # None: the config's inter-arrival mean (or median) in ms
    threshold: float = 0.95
    precision: float = 0.05             # the pilot stops when its bracket's hi / lo - 1 is at most this
    start: tuple[float, float] = (20.0, 5000.0)   # gap ms: the fast (high-rate) and slow ends
    min_runs: int = 4                   # full runs in the fit at least (2 degrees of freedom)
    max_runs: int = 24                  # full-length runs at most
    expansions: int = 2
    design_effect: float = 3.0          # within-run correlation, for the per-point success intervals (trace)
    common_random_numbers: bool = True
    max_points: int = 40                # pilot points at most, and full-length points at most
    halfwidth: float = 0.05             # stop when the knee's CI half-width / knee is at most this
    spread: float = 0.04                # new full runs sit at least this far (relative) from the crossing
    pilot_fraction: float = 1 / 6       # pilot runs last this share of duration, warmup and cooldown
    pilot_bias: float = 1.5             # the first full-length probe runs at the pilot's guess / this


#: the `knee:` keys (sweep file; CLI options) with their ranges, in KneeSpec's order
SPEC = {"param": Field(str, choices=LOAD_PARAMS, nullable=True), "threshold": Field(float, ge=0.0, le=1.0),
        "precision": Field(float, ge=1e-4, le=10.0), "start": Field(list, expect="[fast gap ms, slow gap ms]"),
        "min_runs": Field(int, ge=3, le=1000), "max_runs": Field(int, ge=3, le=1000),
        "expansions": Field(int, ge=0, le=10), "design_effect": Field(float, ge=1.0, le=1e6),
        "common_random_numbers": Field(bool), "max_points": Field(int, ge=2, le=1000),
        "halfwidth": Field(float, ge=1e-4, le=10.0), "spread": Field(float, ge=1e-3, le=1.0),
        "pilot_fraction": Field(float, ge=1e-3, le=1.0), "pilot_bias": Field(float, ge=0.1, le=10.0)}


def parse_spec(data: dict | None, where: str = "knee", **overrides) -> KneeSpec:
    """A `knee:` mapping (sweep file) or CLI options into a validated `KneeSpec`; errors name the key."""
    kw = {**check(SPEC, data, where), **check(SPEC, {k: v for k, v in overrides.items() if v is not None}, where)}
    if kw.get("max_runs", KneeSpec.max_runs) < kw.get("min_runs", KneeSpec.min_runs):
        raise ConfigError(f"{where}.max_runs", f"expected at least min_runs ({kw.get('min_runs', KneeSpec.min_runs)})")
    if "start" in kw:
        s = kw["start"]
        if (len(s) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in s)
                or not s[0] < s[1]):
            raise ConfigError(f"{where}.start", f"expected [fast gap ms, slow gap ms] with 0 < fast < slow, got {s!r}")
        kw["start"] = (float(s[0]), float(s[1]))
    return KneeSpec(**kw)


def load_param(cfg: Config, param: str | None = None) -> str:
    """The load parameter of `cfg`: its inter-arrival mean, or median for lognormal gaps."""
    ia = cfg.workload.inter_arrival
    want = LOAD_PARAMS[1] if ia.distribution == "lognormal" else LOAD_PARAMS[0]
    if param is not None and param != want:
        raise ConfigError("knee.param", f"{param} does not set the load of {ia.distribution} arrivals "
                          f"(use {want})")
    return want


def mean_gap_per_unit(cfg: Config) -> float:
    """Mean gap / load parameter: exp(sigma^2 / 2) for a lognormal median, else 1."""
    ia = cfg.workload.inter_arrival
    return math.exp(ia.sigma ** 2 / 2) if ia.distribution == "lognormal" else 1.0


# ------------------------------------------------------------------------------------------ intervals

def wilson(successes: float, n: float, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion; (0, 1) without observations."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def mean_ci95(values) -> tuple[float, float]:
    """Mean and Student-t 95 % half-width over replications (NaNs dropped; half-width NaN for n < 2)."""
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    if v.size < 2:
        return float(v.mean()), math.nan
    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))


def success_interval(runs: list[dict], prefix: str, design_effect: float) -> tuple[float, float, float]:
    """(mean, low, high) of `prefix` success over a point's runs (`run_success`: unfinished transactions count
    as failures): Wilson's interval with the design effect, widened to the runs' Student-t interval when there
    are several. For the trace's decisions; the knee's CI comes from the fit."""
    committed = sum(r[f"{prefix}committed"] for r in runs)
    arrived = sum(r[f"{prefix}arrived"] for r in runs)
    if arrived == 0:
        return 1.0, 1.0, 1.0   # nothing of this kind arrived: nothing failed either
    lo, hi = wilson(committed / design_effect, arrived / design_effect)
    mean, half = mean_ci95([run_success(r, prefix) for r in runs])
    if not math.isnan(half):
        lo, hi = min(lo, mean - half), max(hi, mean + half)
    return mean, lo, hi


# ------------------------------------------------------------------------------------------ the fit

def fieller(gamma: float, beta: float, var_g: float, var_b: float, cov: float, dof: int) -> tuple[float, float, float]:
    """theta = gamma / beta and its Fieller 95 % interval from the two estimates' variances and covariance
    (Student-t with `dof` degrees of freedom); (-inf, inf) when beta is not clearly positive, since theta could
    then be anywhere."""
    theta = gamma / beta if beta > 0 else math.nan
    if dof < 1 or not beta > 0:
        return theta, -math.inf, math.inf
    q = stats.t.ppf(0.975, dof) ** 2
    a, h, c = beta * beta - q * var_b, gamma * beta - q * cov, gamma * gamma - q * var_g
    disc = h * h - a * c
    if a <= 0 or disc < -1e-12 * h * h:      # (without variance disc is 0 up to rounding)
        return theta, -math.inf, math.inf
    disc = max(disc, 0.0)
    return theta, (h - math.sqrt(disc)) / a, (h + math.sqrt(disc)) / a


@dataclass(frozen=True)
class Crossing:
    """Where one metric's fitted success curve crosses the threshold, in log rate, with its Fieller 95 % interval
    and what the fit rests on."""
    x: float                 # NaN when the fitted success does not fall with load
    low: float
    high: float
    slope: float             # d logit(success) / d log rate: < 0 when success falls with load
    dispersion: float        # Pearson chi^2 / (m - 2), at least 1 (binomial)
    arrived: float           # mean window arrivals of this kind per run
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

    @property
    def inside(self) -> bool:
        """MIN_SIDE runs on each side: the crossing is interpolated, and the slope is measured across it."""
        return min(self.sides) >= MIN_SIDE


def logistic_crossing(x, committed, arrived, thr: float) -> Crossing:
    """The log rate where success crosses `thr`, from a binomial regression of each run's success (committed /
    window arrivals) on log rate with a logit link, fitted by iteratively reweighted least squares over
    independent runs. Over-dispersion (transactions of one run are correlated; gcp's collapse happens in some
    runs and not others) is Pearson's chi^2 / (m - 2), at least 1; the interval is Fieller's for the ratio
    (level above the threshold at the weighted mean log rate) / (slope), Student-t with m - 2 degrees of
    freedom. A fourth-power failure curve 1 / (1 + c r^4) is exactly linear in this link."""
    x, k, n = (np.asarray(v, float) for v in (x, committed, arrived))
    x, k, n = x[n > 0], k[n > 0], n[n > 0]
    m = x.size
    all_pass = bool(np.all(k >= thr * n))
    if m < 3 or np.ptp(x) == 0 or k.sum() in (0.0, n.sum()):
        return Crossing(math.nan, -math.inf, math.inf, math.nan, math.nan, float(n.mean()) if m else 0.0,
                        all_pass=all_pass)
    y = k / n
    eta = special.logit((k + 0.5) / (n + 1.0))
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
    mu = np.clip(special.expit(eta), 1e-12, 1 - 1e-12)
    phi = max(1.0, float((n * (y - mu) ** 2 / (mu * (1 - mu))).sum()) / (m - 2))
    gamma, var_g, var_b = a - special.logit(thr), phi / sw, phi / sxx
    theta, lo, hi = fieller(gamma, -b, var_g, var_b, 0.0, m - 2)
    se = math.sqrt(var_g + theta * theta * var_b) / -b if b < 0 else math.inf
    x0 = xm + theta
    return Crossing(x0, xm + lo, xm + hi, b, phi, float(n.mean()), se, (xm, a, float(sw), sxx), all_pass,
                    (int((x < x0).sum()), int((x > x0).sum())))


def regression_at(x, y, x0: float) -> tuple[float, float]:
    """A metric at log rate `x0` by least squares on log rate over the fit's runs, and its 95 % CI half-width
    (Student-t, m - 2 dof; NaN with fewer than 3 runs or one rate)."""
    x, y = np.asarray(x, float), np.asarray([math.nan if v is None else v for v in y], float)
    x, y = x[np.isfinite(y)], y[np.isfinite(y)]
    if y.size < 3 or np.ptp(x) == 0:
        return (float(y.mean()) if y.size else math.nan), math.nan
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    b = float(((x - xm) * (y - ym)).sum() / sxx)
    s = math.sqrt(float(((y - ym - b * (x - xm)) ** 2).sum()) / (y.size - 2))
    se = s * math.sqrt(1 / y.size + (x0 - xm) ** 2 / sxx)
    return float(ym + b * (x0 - xm)), float(stats.t.ppf(0.975, y.size - 2) * se)


# ------------------------------------------------------------------------------------------ the search

@dataclass(eq=False)
class Point:
    rate_cps: float
    value: float                                  # the load parameter (gap ms)
    pilot: bool = False                           # a short pilot run (locates the knee, never in its fit)
    runs: list[dict] = field(default_factory=list)   # summaries, in the order of `reps`
    reps: list[int] = field(default_factory=list)    # the replication index of each run asked for
    checks: dict = field(default_factory=dict)    # metric prefix -> (mean, low, high)

    @property
    def n(self) -> int:
        return len(self.runs)

    def passes(self, thr: float) -> bool:
        return all(c[0] >= thr for c in self.checks.values())

    def decision(self, thr: float) -> str:
        """'pass' or 'fail' when the interval excludes the threshold, else 'undecided'."""
        if any(c[2] < thr for c in self.checks.values()):
            return "fail"
        if all(c[1] >= thr for c in self.checks.values()):
            return "pass"
        return "undecided"

    def margin(self, thr: float) -> float:
        """log(failure share / allowed failure share) of the binding metric: < 0 passes."""
        worst = 0.0
        for prefix, (m, *_) in self.checks.items():
            arrived = sum(r[f"{prefix}arrived"] for r in self.runs)
            worst = max(worst, max(1.0 - m, 0.5 / max(arrived, 1)))
        return math.log(worst / max(1.0 - thr, 1e-9))


def run_success(run: dict, prefix: str) -> float:
    """A run's success share of one kind over its window arrivals: transactions still unfinished at the drain
    limit count as not successful. The summary's success rate leaves them out, so an overloaded run (gcp's 1
    write/s per object collapses into 429 resends) finishes few transactions, all successful, and would pass;
    per kind too (`{op}_arrived` counts a kind's unfinished ones). 1 when none of that kind arrived."""
    arrived = run[f"{prefix}arrived"]
    return run[f"{prefix}committed"] / arrived if arrived else 1.0


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

    def halfwidth(self) -> float:
        knee, low, high = self.knee()
        return (high - low) / 2 / knee if not math.isnan(knee) else math.inf


class KneeSearch:
    """One configuration's knee. `pending()` lists the (point, replication) runs needed next, `config_of(point)`
    the config to run, `feed()` takes a run's summary; `done` when finished; `result()` the flat knee record.
    Two phases (module docstring): short pilot runs bracket the knee, then independent full-length runs walk to
    the crossing and are added around it until a binomial regression over them puts it in a narrow enough CI."""

    def __init__(self, cfg: Config, spec: KneeSpec = KneeSpec()):
        self.spec = spec
        self.param = load_param(cfg, spec.param)
        self.unit = mean_gap_per_unit(cfg)
        crn = {"common_random_numbers": True} if spec.common_random_numbers else {}
        self.base = cfg.replace(**crn)
        f = spec.pilot_fraction
        self.pilot_base = self.base if f >= 1 else self.base.replace(
            duration_ms=cfg.duration_ms * f, warmup_ms=cfg.warmup_ms * f, cooldown_ms=cfg.cooldown_ms * f)
        self.check = ("", "vo_") if cfg.workload.fast_append_ratio < 1 else ("",)
        self.pilot: dict[float, Point] = {}
        self.full: dict[float, Point] = {}
        self.stage = "pilot"           # pilot -> full
        self.spread = spec.spread      # the current distance of new runs from the crossing (`_spread`)
        self._probes: list[Point] = []   # full points run while walking to a full-length bracket, in order
        self._last: float = math.nan   # log rate of the last full run asked for
        self.fit: Fit | None = None
        self.stopped = ""              # why the full phase ended
        self.status = "searching"
        self.error = ""
        self._interior: list[Point] = []
        self._expanded = {"fast": 0, "slow": 0}
        self._monotone: dict[Point, tuple[float, float]] = {}   # full point -> (monotone success, floor)
        for gap in spec.start:
            self._pilot_run(gap)

    def _point(self, gap_ms: float, pilot: bool) -> Point:
        gap_ms = float(f"{gap_ms:.6g}")
        rate = 1000.0 / (gap_ms * self.unit)
        pts = self.pilot if pilot else self.full
        if rate not in pts:
            pts[rate] = Point(rate, gap_ms, pilot)
        return pts[rate]

    def _pilot_run(self, gap_ms: float) -> Point | None:
        """Ask for the pilot run at `gap_ms` (replication 0: pilot points share their workload); None when that
        point exists already."""
        n = len(self.pilot)
        p = self._point(gap_ms, pilot=True)
        if len(self.pilot) == n:
            return None
        p.reps.append(0)
        return p

    def _at_rate(self, rate_cps: float, pilot: bool) -> Point:
        return self._point(1000.0 / (rate_cps * self.unit), pilot)

    def config_of(self, p: Point) -> Config:
        return (self.pilot_base if p.pilot else self.base).replace(**{self.param: p.value})

    def hours_of(self, p: Point) -> float:
        return p.n * (self.pilot_base if p.pilot else self.base).duration_ms / 3_600_000

    def feed(self, point: Point, summary: dict | None, error: str = "") -> None:
        """A run of `point` finished (`summary`), or failed (None, `error`: the search ends as failed)."""
        if summary is None:
            self.status, self.error = "failed", error
            return
        point.runs.append(summary)
        point.checks = {c: success_interval(point.runs, c, self.spec.design_effect)
                        for c in self.check}

    @property
    def done(self) -> bool:
        return self.status != "searching"

    def pending(self) -> list[tuple[Point, int]]:
        """Runs needed before the search can move on (empty when done)."""
        for _ in range(10_000):      # each step asks for a run, or ends the search
            if self.done:
                break
            need = [(p, p.reps[p.n]) for p in (self.pilot if self.stage == "pilot" else self.full).values()
                    if len(p.reps) > p.n]
            if need:
                return need
            (self._step_pilot if self.stage == "pilot" else self._step_full)()
        else:
            self.status, self.error = "failed", "knee search made no progress"
        return []

    # -- phase 1: pilot bracket (one short run per point, classified by its mean)
    def bracket(self) -> tuple[Point | None, Point | None]:
        """(lo, hi) of the pilot's points: the lowest failing point and the highest passing point below it, by
        their mean over runs."""
        thr = self.spec.threshold
        pts = sorted((p for p in self.pilot.values() if p.n), key=lambda p: p.rate_cps)
        hi = next((p for p in pts if not p.passes(thr)), None)
        below = [p for p in pts if p.passes(thr) and (hi is None or p.rate_cps < hi.rate_cps)]
        return (below[-1] if below else None), hi

    def _step_pilot(self) -> None:
        lo, hi = self.bracket()
        gaps = [p.value for p in self.pilot.values()]
        if hi is None:                                  # nothing fails: push the fast end out
            self._expand("fast", min(gaps) / 4, "above_range")
            return
        if lo is None:                                  # nothing passes: push the slow end out
            self._expand("slow", max(gaps) * 4, "below_range")
            return
        if hi.rate_cps / lo.rate_cps - 1 > self.spec.precision and len(self.pilot) < self.spec.max_points:
            p = self._pilot_run(self._split(lo, hi))
            if p is not None:
                self._interior.append(p)
                return
        self.stage = "full"
        self._probe(math.exp(self._log_crossing(lo, hi)) / self.spec.pilot_bias)

    def _expand(self, side: str, gap_ms: float, censored: str) -> None:
        if self._expanded[side] >= self.spec.expansions:
            self.status = censored
        else:
            self._expanded[side] += 1
            self._pilot_run(gap_ms)

    def _log_crossing(self, lo: Point, hi: Point, clip: float = 0.0, margin=None) -> float:
        """log rate where log(failure share) interpolated linearly in log rate between lo and hi reaches the
        allowed share (failure grows like a power of the rate below the knee), t kept in [clip, 1 - clip];
        `margin(point)`: its log(failure share / allowed), by default from its runs' mean."""
        thr = self.spec.threshold
        a, b = math.log(lo.rate_cps), math.log(hi.rate_cps)
        ga, gb = (margin(lo), margin(hi)) if margin else (lo.margin(thr), hi.margin(thr))
        t = min(1 - clip, max(clip, -ga / (gb - ga))) if gb > ga else 0.5
        return a + t * (b - a)

    def _split(self, lo: Point, hi: Point) -> float:
        """The next pilot gap (ms) inside (lo, hi): interpolated within the bracket's middle 70 %, or bisected
        when the same end moved twice in a row or the bracket is within twice the precision."""
        thr = self.spec.threshold
        a, b = math.log(lo.rate_cps), math.log(hi.rate_cps)
        near_done = (b - a) <= 2 * math.log1p(self.spec.precision)
        last = [p.passes(thr) for p in self._interior[-2:]]
        stalled = len(last) == 2 and last[0] == last[1]
        x = (a + b) / 2 if near_done or stalled else self._log_crossing(lo, hi, clip=0.15)
        return 1000.0 / (math.exp(x) * self.unit)

    # -- phase 2: independent full-length runs, walked to the crossing, then added around it
    def _run(self, rate_cps: float) -> Point:
        """Ask for one more full-length run at `rate_cps`, under a replication index no other full run has:
        the fit needs independent runs (common random numbers would give every run of one replication the
        same workload, a shared error the fit's residuals cannot see)."""
        p = self._at_rate(rate_cps, False)
        p.reps.append(sum(len(q.reps) for q in self.full.values()))
        self._last = math.log(p.rate_cps)
        return p

    def _probe(self, rate_cps: float) -> None:
        self._probes.append(self._run(rate_cps))

    def full_bracket(self) -> tuple[Point | None, Point | None]:
        """(lo, hi) of the full-length points: the highest passing point and the lowest failing one by a
        monotone (non-increasing) least-squares fit of each metric's success over the points, weighted by
        arrivals (pool-adjacent-violators). By each point's own mean instead, one noisy run of gcp's VO (40
        transactions: 0.947 where the knee is 15 % higher) would fail and pin the bracket below the knee."""
        thr = self.spec.threshold
        pts = sorted((p for p in self.full.values() if p.n), key=lambda p: p.rate_cps)
        if not pts:
            return None, None
        value, floor = np.ones(len(pts)), np.zeros(len(pts))
        for c in self.check:
            arrived = np.array([sum(r[f"{c}arrived"] for r in p.runs) for p in pts], float)
            committed = np.array([sum(r[f"{c}committed"] for r in p.runs) for p in pts], float)
            y = np.where(arrived > 0, committed / np.maximum(arrived, 1), 1.0)
            iso = optimize.isotonic_regression(y, weights=np.maximum(arrived, 1), increasing=False).x
            value = np.minimum(value, iso)
            floor = np.maximum(floor, 0.5 / np.maximum(arrived, 1))
        self._monotone = {p: (v, f) for p, v, f in zip(pts, value, floor)}   # for `_monotone_margin`
        i = int(np.argmax(value < thr)) if (value < thr).any() else len(pts)
        return (pts[i - 1] if i > 0 else None), (pts[i] if i < len(pts) else None)

    def _monotone_margin(self, p: Point) -> float:
        """log(failure share / allowed) of a full point by the monotone fit (`full_bracket`)."""
        v, floor = self._monotone[p]
        return math.log(max(1 - v, floor) / max(1 - self.spec.threshold, 1e-9))

    def _center(self, lo: Point, hi: Point) -> float:
        """Log rate of the crossing by the monotone fit: log(failure share) interpolated between the bracket."""
        return self._log_crossing(lo, hi, margin=self._monotone_margin)

    def full_runs(self) -> int:
        return sum(p.n for p in self.full.values())

    def _full_target(self, lo: Point | None, hi: Point | None) -> float:
        """Where the full-length runs so far put the crossing (arrivals/s). Inside a bracket: log(failure share)
        interpolated in log rate (bisected when the same end moved twice in a row). Outside one: the secant
        through the two points nearest it; from a single point, a step of MOVE when its failure share is off the
        allowed one by more than 2x (a short pilot's slope says little about full runs that far out), else the
        pilot's slope, but at least a spread; the step from the nearest point may grow to MOVE^2 and MOVE^4
        while the points stay on one side (gcp's short pilots sit 3x above its knee, where full runs collapse).
        `lo`, `hi`: the full-length bracket."""
        thr = self.spec.threshold
        if lo is not None and hi is not None:
            last = [p.passes(thr) for p in self._probes[-2:]]
            if len(last) == 2 and last[0] == last[1] and lo in self._probes and hi in self._probes:
                return math.sqrt(lo.rate_cps * hi.rate_cps)
            return math.exp(self._log_crossing(lo, hi, clip=0.15, margin=self._monotone_margin))
        pts = sorted((p for p in self.full.values() if p.n), key=lambda p: p.rate_cps)
        down = hi is not None                       # everything fails: the crossing lies below
        side = pts if down else pts[::-1]           # nearest the crossing first
        e = side[0]
        limit = MOVE ** (2 ** min(len(side) - 1, 2))
        x = e.rate_cps / MOVE if down else e.rate_cps * MOVE
        if len(side) > 1:
            f = side[1]
            slope = (f.margin(thr) - e.margin(thr)) / math.log(f.rate_cps / e.rate_cps)
            if slope > 0:
                x = e.rate_cps * math.exp(-e.margin(thr) / slope)
        elif abs(e.margin(thr)) <= math.log(2):   # one full point near the threshold: the pilot's slope
            slope = self._pilot_slope()
            if slope > 0:
                x = e.rate_cps * math.exp(-e.margin(thr) / slope)
        step = 1 + self.spread                      # at least a spread: a run on the crossing is not repeated
        lo_x, hi_x = (e.rate_cps / limit, e.rate_cps / step) if down else (e.rate_cps * step, e.rate_cps * limit)
        return min(max(x, lo_x), hi_x)

    def _pilot_slope(self) -> float:
        """Least-squares slope of the pilot points' margins (log failure share) against log rate, over the
        points within a factor 2 of the pilot's bracket (NaN with fewer than 3)."""
        lo, hi = self.bracket()
        if lo is None or hi is None:
            return math.nan
        mid = math.sqrt(lo.rate_cps * hi.rate_cps)
        pts = [p for p in self.pilot.values() if p.n and mid / 2 <= p.rate_cps <= mid * 2]
        if len(pts) < 3:
            return math.nan
        x = np.log([p.rate_cps for p in pts])
        return float(np.polyfit(x, [p.margin(self.spec.threshold) for p in pts], 1)[0])

    def fit_at(self, center: float) -> Fit:
        """The fit over the full runs within two spreads of `center` (log rate)."""
        half = 2 * math.log1p(self.spread)
        runs = [(math.log(p.rate_cps), r) for p in self.full.values() for r in p.runs
                if abs(math.log(p.rate_cps) - center) <= half]
        xs = [x for x, _ in runs]
        crossings = {c: logistic_crossing(xs, [r[f"{c}committed"] for _, r in runs],
                                          [r[f"{c}arrived"] for _, r in runs], self.spec.threshold)
                     for c in self.check}
        return Fit(center, runs, crossings)

    def _spread(self, fit: Fit, lo: Point, hi: Point) -> float:
        """How far (log rate) new runs sit from the crossing: far enough that `min_runs` runs there pin the
        slope (Fieller's g = t^2 var(slope) / slope^2 at most SLOPE_G, by the binding metric's fitted slope,
        dispersion and binomial weight at the threshold), at least `spread` and at most MAX_SPREAD. A kind
        with few transactions a run (gcp's VO: about 60) needs the widest; S3's single table about 7 %."""
        thr, m = self.spec.threshold, self.spec.min_runs
        c = fit.binding
        if c is not None and c.slope < 0:
            slope, phi, n = -c.slope, c.dispersion, c.arrived
        else:                                       # no fit yet: the bracket's secant, binomial
            k = max(self.check, key=lambda k: 1 - hi.checks[k][0])
            lg = [special.logit(min(max(p.checks[k][0], 1e-6), 1 - 1e-6)) for p in (lo, hi)]
            slope = (lg[0] - lg[1]) / math.log(hi.rate_cps / lo.rate_cps)
            phi, n = 1.0, min(sum(r[f"{k}arrived"] for r in p.runs) / p.n for p in (lo, hi))
        if not slope > 0 or not n > 0:
            return self.spec.spread
        t = stats.t.ppf(0.975, max(m - 2, 1))
        d = t * math.sqrt(phi / (m * n * thr * (1 - thr) * SLOPE_G)) / slope
        return min(max(self.spec.spread, math.expm1(d)), MAX_SPREAD)

    def _step_full(self) -> None:
        spec = self.spec
        lo, hi = self.full_bracket()
        out = self.full_runs() >= spec.max_runs or len(self.full) + 1 >= spec.max_points
        if lo is None or hi is None:                # no full-length bracket yet: walk to the crossing
            if out or len(self._probes) >= MAX_PROBES:
                self.status, self.stopped = "max_points", "max_points"
            else:
                self._probe(self._full_target(lo, hi))
            return
        fit = self.fit = self.fit_at(self._center(lo, hi))
        self.spread = self._spread(fit, lo, hi)
        s = math.log1p(self.spread)
        if (math.log(hi.rate_cps / lo.rate_cps) > 2 * s + math.log1p(spec.spread) and not out
                and len(self._probes) < MAX_PROBES):
            self._probe(self._full_target(lo, hi))   # narrow the full-length bracket first (a cliff: gcp)
            return
        b, m, hw = fit.binding, len(fit.runs), fit.halfwidth()
        inside = b is not None and b.inside
        if inside and m >= spec.min_runs and hw <= spec.halfwidth:
            self.status, self.stopped = "ok", "halfwidth"
            return
        if out:
            self.status, self.stopped = "ok", "max_runs"
            return
        if inside and m >= FUTILE_FROM and self._projection(b.se, m) > FUTILE * spec.halfwidth:
            self.status, self.stopped = "ok", "futile"
            return
        self._run(math.exp(self._next_x(fit)))

    def _next_x(self, fit: Fit) -> float:
        """Log rate of the next run: within a spread of the crossing, where it shrinks the binding crossing's
        delta-method variance most (a sequential c-optimal design: a run where success is lower carries more
        binomial information, a run far from the crossing pins the slope; gcp's VO, 50 transactions a run, is
        worth 7x more 15 % above its knee than 15 % below). The crossing is the fit's once it has MIN_SIDE runs
        on each side, else the monotone fit's, and kept within a spread of the window's center so the run
        lands in the window; while a side has fewer than MIN_SIDE runs, the run goes there."""
        b, c = fit.binding, fit.center
        d = math.log1p(self.spread)
        x = min(max(b.x, c - d), c + d) if b is not None and b.inside else c
        below = sum(r < x for r, _ in fit.runs)
        above = sum(r > x for r, _ in fit.runs)
        if b is None or min(below, above) < MIN_SIDE:
            up = above < below or (above == below and self._last < x)
            return x + d if up else x - d
        return min((x + k * d for k in CANDIDATES), key=lambda z: b.variance_with(z, b.weight_at(z)))

    def _projection(self, se: float, m: int) -> float:
        """The relative half-width `max_runs` runs in the window would give, from the crossing's standard error
        at `m` runs by the delta method (Fieller's interval with few runs and a noisy slope is too erratic to
        project from: it has an infinite side whenever the slope is not yet clearly positive)."""
        mx = self.spec.max_runs
        return math.expm1(stats.t.ppf(0.975, mx - 2) * se * math.sqrt(m / mx))

    # -- the answer
    def result(self) -> dict:
        """The flat knee record (JSON-able; NaN where undefined)."""
        thr = self.spec.threshold
        pts = [p for p in (*self.pilot.values(), *self.full.values()) if p.n]
        out = {"status": self.status, "error": self.error, "param": self.param, "threshold": thr,
               "precision": self.spec.precision, "halfwidth_target": self.spec.halfwidth,
               "common_random_numbers": self.spec.common_random_numbers,
               "runs": sum(p.n for p in pts), "points": len(pts),
               "pilot_runs": sum(p.n for p in pts if p.pilot), "full_runs": self.full_runs(),
               "probes": len(self._probes), "stopped": self.stopped}
        out["simulated_hours"] = sum(self.hours_of(p) for p in pts)
        knee = low = high = math.nan
        fit = self.fit if self.status in ("ok", "max_points") else None
        if fit is not None:
            knee, low, high = fit.knee()
        if math.isnan(knee):
            out.update({"offered_cps": math.nan, "offered_cps_low": math.nan, "offered_cps_high": math.nan,
                        "value": math.nan, "fit_runs": len(fit.runs) if fit else 0, "decided": False})
            out.update({k: math.nan for m in AT_KNEE if m != "offered_cps" for k in (m, f"{m}_ci95")})
            out.update({"measured_offered_cps": math.nan, "measured_offered_cps_ci95": math.nan})
            out["ci95_halfwidth_rel"] = math.nan
            return out
        hw = fit.halfwidth()
        out.update({"offered_cps": knee, "offered_cps_low": low, "offered_cps_high": high,
                    "value": float(f"{1000.0 / (knee * self.unit):.6g}"), "fit_runs": len(fit.runs),
                    "decided": bool(hw <= self.spec.halfwidth and fit.binding.inside), "ci95_halfwidth_rel": hw})
        xs = [x for x, _ in fit.runs]
        for m in AT_KNEE:   # by least squares on log rate over the fit's runs, at the knee
            key = "measured_offered_cps" if m == "offered_cps" else m
            out[key], out[f"{key}_ci95"] = regression_at(xs, [r.get(m) for _, r in fit.runs], math.log(knee))
        return out

    def trace(self) -> list[dict]:
        """Every point run: phase (pilot; fit: in the final fit's window; full), rate, parameter value, runs,
        success interval, decision."""
        thr = self.spec.threshold
        in_fit = {id(r) for _, r in self.fit.runs} if self.fit is not None else set()
        rows = []
        for p in sorted((p for p in (*self.pilot.values(), *self.full.values()) if p.n),
                        key=lambda p: (not p.pilot, p.rate_cps)):
            phase = "pilot" if p.pilot else "fit" if any(id(r) in in_fit for r in p.runs) else "full"
            row = {"phase": phase, "offered_cps": p.rate_cps, "value": p.value,
                   "runs": p.n, "decision": p.decision(thr), "passes": p.passes(thr)}
            for c, (m, lo, hi) in p.checks.items():
                row.update({f"{c}success_rate": m, f"{c}success_low": lo, f"{c}success_high": hi})
            rows.append(row)
        return rows


#: a probe moves by at most this factor at a time (growing to MOVE^2, MOVE^4 while on one side); at most
#: MAX_PROBES probes are run (walking to a full-length bracket, and narrowing it)
MOVE = 1.5
MAX_PROBES = 8
#: new runs sit far enough from the crossing that Fieller's g is at most this at `min_runs` runs (the interval
#: is then at most 1 / sqrt(1 - g) = 1.15x what a known slope would give), but at most MAX_SPREAD
SLOPE_G = 0.25
MAX_SPREAD = 0.15
#: the fit's runs must include this many on each side of the crossing
MIN_SIDE = 2
#: where the next run may go, in spreads from the crossing
CANDIDATES = (-1.0, -0.5, 0.0, 0.5, 1.0)
#: stop adding runs when even max_runs would leave the half-width this many times the target (judged from
#: FUTILE_FROM runs in the window on)
FUTILE = 1.5
FUTILE_FROM = 12
