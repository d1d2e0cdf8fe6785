"""Knee search: the usable throughput of one configuration, estimated where its success curve crosses the threshold
instead of read off a load grid.

Definition. The knee is the highest offered rate r (arrivals/s; r = 1000 / the mean inter-arrival gap in ms)
at which the success rate, and for a mix (fast_append_ratio < 1) the VO success rate too, is at least the
threshold: the crossing of the mean success curve (the lower crossing over the checked metrics).

Phase 1, pilot (locates the knee; never enters its CI). One short run per point: duration, warmup and cooldown
all scaled by `pilot_fraction` (1/6: 10 min instead of 1 h). Both ends of the start bracket are run (an end
on the wrong side is pushed out by 4x, at most `expansions` times, then the knee is reported `above_range` /
`below_range`); points are classified by their mean, and while the bracket is wider than `precision`
(hi / lo - 1) a point is added inside it: log(failure share) interpolated linearly in log rate between the
ends (failure grows like a power of the rate below the knee), kept in the bracket's middle 70 %, bisected
when the same end moved twice in a row or the bracket is within twice the precision. The pilot's guess is
that interpolation between its final ends. Far-off points cost a sixth of a run each.

Phase 2, pair (the estimate and its CI). Full runs at two points, guess / (1 + `spread`) and guess x (1 +
`spread`), replicated together: replication i gives its level (mean success of the two minus the threshold)
and slope (success lost per unit log rate), and the crossing is the pair's middle plus mean level / mean slope
in log rate, with a Fieller 95 % interval from the replications' sample covariance (Student-t, n - 1 degrees
of freedom) - the stochastic root-finding / ED95 estimate, using every run at both points rather than a
bracket of pass/fail decisions. Replications are independent, so the interval needs no model of the
correlation between transactions of one run; it is infinite while the slope is not clearly positive.
Success is interpolated linearly: on a power-law failure curve that misses the crossing by well under 1 %
with 4 % spread (tests). After the first replication, a crossing off the pair by more than half its
spacing moves the pair (keeping its nearer point when the pair stays within (1 + spread)^3) to where log(failure share), extrapolated linearly in log rate from the pair, reaches
the allowed share (at most 1.5x per move; short pilot runs can sit 15 % off, see README); then replications are added (at least
`knee_replications`) until the CI half-width / knee <= `halfwidth`, or `max_replications`, or until it is
futile: the delta-method half-width projected to `max_replications` exceeds 1.5 x the target. Throughput and
latencies at the knee are interpolated per replication between the pair (linear in log rate), with
replication CIs. Common random numbers are on by default: all points differ only in load, so they share
arrivals, tables, operations and runtimes (latency streams stay keyed by the config).

Coverage: on a synthetic curve with run and replication noise the 95 % CI covers the true crossing in 96 %
of 400 searches at 4 replications and 92.5-93.5 % with the adaptive stop (85-88 % if z replaced t;
`tests/test_knee.py` checks >= 90 % on 200). On 10 cells of 4c the brute-force crossing of a dense grid lies
inside the CI in 9 (the miss: gcp, 10 tables). Measured on 4c (README): 1023 simulated hours (the 900-run
grid: 900), median half-width 2.8 %, 81 of 90 cells within 5 %.

Pure logic: a `KneeSearch` says which (point, replication) runs it needs next and is fed their summaries;
`sim.sweep.knee` executes them (any executor, cached in the results store).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .config import Config, ConfigError

SPEC_KEYS = ("param", "threshold", "precision", "start", "max_replications", "knee_replications",
             "expansions", "design_effect", "common_random_numbers", "max_points", "halfwidth", "spread",
             "pilot_fraction")
LOAD_PARAMS = ("workload.inter_arrival.mean_ms", "workload.inter_arrival.median_ms")
#: metrics reported at the knee, with their replication CIs
AT_KNEE = ("success_rate", "vo_success_rate", "throughput_cps", "offered_cps",
           "commit_latency_mean_ms", "commit_latency_p99_ms", "fa_commit_latency_mean_ms",
           "fa_commit_latency_p99_ms", "vo_commit_latency_mean_ms", "vo_commit_latency_p99_ms")


@dataclass(frozen=True)
class KneeSpec:
    param: str | None = None            # None: the config's inter-arrival mean (or median) in ms
    threshold: float = 0.95
    precision: float = 0.05             # the pilot stops when its bracket's hi / lo - 1 is at most this
    start: tuple[float, float] = (20.0, 5000.0)   # gap ms: the fast (high-rate) and slow ends
    max_replications: int = 12          # replications of the pair at most
    knee_replications: int = 2          # replications of the pair at least
    expansions: int = 2
    design_effect: float = 3.0          # within-run correlation, for the per-point success intervals (trace)
    common_random_numbers: bool = True
    max_points: int = 40                # pilot points at most, and pair points at most
    halfwidth: float = 0.05             # stop when the knee's CI half-width / knee is at most this
    spread: float = 0.04                # the pair sits at knee / (1 + spread) and knee x (1 + spread)
    pilot_fraction: float = 1 / 6       # pilot runs last this share of duration, warmup and cooldown


def parse_spec(data: dict | None, where: str = "knee", **overrides) -> KneeSpec:
    """A `knee:` mapping (sweep file) or CLI options into a validated `KneeSpec`; errors name the key."""
    data = {**(data or {}), **{k: v for k, v in overrides.items() if v is not None}}
    if not isinstance(data, dict):
        raise ConfigError(where, "expected a mapping")
    for key in data:
        if key not in SPEC_KEYS:
            raise ConfigError(f"{where}.{key}", f"unknown key (expected one of: {', '.join(SPEC_KEYS)})")
    kw = dict(data)
    if kw.get("param") is not None and kw["param"] not in LOAD_PARAMS:
        raise ConfigError(f"{where}.param", f"expected one of {', '.join(LOAD_PARAMS)}, got {kw['param']!r}")

    def num(key, lo, hi, kind=float):
        if key not in kw:
            return
        v = kw[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ConfigError(f"{where}.{key}", f"expected a number in [{lo}, {hi}], got {v!r}")
        if kind is int and not float(v).is_integer():
            raise ConfigError(f"{where}.{key}", f"expected an integer, got {v!r}")
        kw[key] = kind(v)

    num("threshold", 0.0, 1.0)
    num("precision", 1e-4, 10.0)
    num("max_replications", 1, 1000, int)
    num("knee_replications", 1, 1000, int)
    num("expansions", 0, 10, int)
    num("design_effect", 1.0, 1e6)
    num("max_points", 2, 1000, int)
    num("halfwidth", 1e-4, 10.0)
    num("spread", 1e-3, 1.0)
    num("pilot_fraction", 1e-3, 1.0)
    if "start" in kw:
        s = kw["start"]
        if (not isinstance(s, (list, tuple)) or len(s) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in s)
                or not s[0] < s[1]):
            raise ConfigError(f"{where}.start", f"expected [fast gap ms, slow gap ms] with 0 < fast < slow, got {s!r}")
        kw["start"] = (float(s[0]), float(s[1]))
    if "common_random_numbers" in kw and not isinstance(kw["common_random_numbers"], bool):
        raise ConfigError(f"{where}.common_random_numbers", "expected true or false")
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


def success_interval(runs: list[dict], prefix: str, design_effect: float,
                     max_replications: int) -> tuple[float, float, float, float]:
    """(mean, low, high, projected half-width at `max_replications`) of `prefix`success_rate over runs (see
    the module docstring); the projection scales the Wilson part by sqrt(n / max) and gives the t part the
    t quantile and standard error it would have at max replications."""
    committed = sum(r[f"{prefix}committed"] for r in runs)
    finished = committed + sum(r[f"{prefix}aborted"] for r in runs)
    if finished == 0:
        return 1.0, 1.0, 1.0, 0.0   # nothing of this kind finished: nothing failed either
    lo, hi = wilson(committed / design_effect, finished / design_effect)
    shrink = math.sqrt(len(runs) / max_replications)
    proj = (hi - lo) / 2 * shrink
    values = [r[f"{prefix}success_rate"] for r in runs]
    mean, half = mean_ci95(values)
    if not math.isnan(half):
        lo, hi = min(lo, mean - half), max(hi, mean + half)
        if max_replications >= 2:
            sd = float(np.std(values, ddof=1))
            proj = max(proj, stats.t.ppf(0.975, max_replications - 1) * sd / math.sqrt(max_replications))
    return mean, lo, hi, proj


# ------------------------------------------------------------------------------------------ the search

@dataclass
class Point:
    rate_cps: float
    value: float                                  # the load parameter (gap ms)
    pilot: bool = False                           # a short pilot run (locates the knee, never in its CI)
    runs: list[dict] = field(default_factory=list)   # runs[i] is replication i
    checks: dict = field(default_factory=dict)    # metric prefix -> (mean, low, high, projection)

    @property
    def n(self) -> int:
        return len(self.runs)

    @property
    def unfinished_share(self) -> float:
        """Mean share of window transactions still unfinished at the drain limit: the success rate leaves them
        out, so an overloaded short run can look clean (a pilot counts them as failed)."""
        return float(np.mean([r.get("unfinished_share") or 0.0 for r in self.runs])) if self.runs else 0.0

    def passes(self, thr: float) -> bool:
        return all(c[0] >= thr for c in self.checks.values()) and self.unfinished_share <= 1 - thr

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
            finished = sum(r[f"{prefix}committed"] + r[f"{prefix}aborted"] for r in self.runs)
            worst = max(worst, max(1.0 - m, 0.5 / max(finished, 1)))
        worst = max(worst, self.unfinished_share)
        return math.log(worst / max(1.0 - thr, 1e-9))


def run_success(run: dict, prefix: str) -> float:
    """A run's success share of one kind (1 when none of that kind finished: nothing failed). Overall, window
    transactions still unfinished at the drain limit count as not successful (the summary's success rate
    leaves them out, which an overloaded run - gcp's 1 write/s per object - would pass); per kind the summary
    has no unfinished count."""
    finished = run[f"{prefix}committed"] + run[f"{prefix}aborted"] + (run.get("unfinished") or 0 if not prefix else 0)
    return run[f"{prefix}committed"] / finished if finished else 1.0


def fieller(level, slope) -> tuple[float, float, float]:
    """theta = mean(level) / mean(slope) over independent replications, and its Fieller 95 % interval (from
    the replications' sample covariance, Student-t with n - 1 degrees of freedom); (-inf, inf) when the slope
    is not clearly positive or n < 2, since the crossing could then be anywhere."""
    g, b = np.asarray(level, float), np.asarray(slope, float)
    gm, bm = float(g.mean()), float(b.mean())
    theta = gm / bm if bm > 0 else math.nan
    if g.size < 2:
        return theta, -math.inf, math.inf
    s = np.cov(g, b, ddof=1)
    q = stats.t.ppf(0.975, g.size - 1) ** 2 / g.size
    a, h, c = bm * bm - q * s[1, 1], gm * bm - q * s[0, 1], gm * gm - q * s[0, 0]
    disc = h * h - a * c
    if a <= 0 or disc < 0:
        return theta, -math.inf, math.inf
    return theta, (h - math.sqrt(disc)) / a, (h + math.sqrt(disc)) / a


def pair_crossing(a: Point, b: Point, prefix: str, thr: float) -> tuple[float, float, float, float]:
    """(estimate, low, high, sd) of log rate where `prefix`success crosses `thr`, from the replications run at both
    points: replication i gives its level at the pair's middle (mean success - thr) and its slope (success lost
    per unit log rate) - under common random numbers both points of a replication share the workload, so the
    slope is sharp - and the crossing is the middle plus the ratio of their means (`fieller`); sd is one
    replication's standard deviation of the crossing by the delta method (to project the half-width)."""
    xa, xb = math.log(a.rate_cps), math.log(b.rate_cps)
    n = min(a.n, b.n)
    sa = [run_success(r, prefix) for r in a.runs[:n]]
    sb = [run_success(r, prefix) for r in b.runs[:n]]
    level = [(u + v) / 2 - thr for u, v in zip(sa, sb)]
    slope = [(u - v) / (xb - xa) for u, v in zip(sa, sb)]
    theta, lo, hi = fieller(level, slope)
    mid = (xa + xb) / 2
    sd = float(np.std(np.subtract(level, np.multiply(theta, slope)), ddof=1)) / np.mean(slope) if n > 1 else math.inf
    return mid + theta, mid + lo, mid + hi, sd


class KneeSearch:
    """One configuration's knee. `pending()` lists the (point, replication) runs needed next, `config_of(point)`
    the config to run, `feed()` takes a run's summary; `done` when finished; `result()` the flat knee record.
    Two phases (module docstring): short pilot runs bracket the knee, then replications of a pair of full runs
    straddling it estimate the crossing with a CI."""

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
        self.pair: tuple[Point, Point] | None = None
        self.placements = 0            # pairs placed (a pair is moved when the crossing lies outside it)
        self._visited: set[tuple[float, float]] = set()
        self.reps = 1                  # replications wanted at the pair
        self.stopped = ""              # why the pair phase ended
        self.status = "searching"
        self.error = ""
        self._interior: list[Point] = []
        self._expanded = {"fast": 0, "slow": 0}
        for gap in spec.start:
            self._point(gap, pilot=True)

    def _point(self, gap_ms: float, pilot: bool) -> Point:
        gap_ms = float(f"{gap_ms:.6g}")
        rate = 1000.0 / (gap_ms * self.unit)
        pts = self.pilot if pilot else self.full
        if rate not in pts:
            pts[rate] = Point(rate, gap_ms, pilot)
        return pts[rate]

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
        point.checks = {c: success_interval(point.runs, c, self.spec.design_effect, self.spec.max_replications)
                        for c in self.check}

    @property
    def done(self) -> bool:
        return self.status != "searching"

    def pending(self) -> list[tuple[Point, int]]:
        """Runs needed before the search can move on (empty when done)."""
        for _ in range(10_000):      # each step adds a point or a replication, or ends the search
            if self.done:
                break
            if self.pair is None:
                need = [(p, 0) for p in self.pilot.values() if p.n == 0]
            else:
                need = [(p, p.n) for p in self.pair if p.n < self.reps]
            if need:
                return need
            self._step_pilot() if self.pair is None else self._step_pair()
        else:
            self.status, self.error = "failed", "knee search made no progress"
        return []

    # -- phase 1: pilot bracket (one short run per point, classified by its mean)
    def bracket(self) -> tuple[Point | None, Point | None]:
        """(lo, hi) of the pilot: the lowest failing point and the highest passing point below it."""
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
        n = len(self.pilot)
        if hi.rate_cps / lo.rate_cps - 1 > self.spec.precision and n < self.spec.max_points:
            p = self._point(self._split(lo, hi), pilot=True)
            if len(self.pilot) > n:
                self._interior.append(p)
                return
        self._place(math.exp(self._log_crossing(lo, hi)))

    def _expand(self, side: str, gap_ms: float, censored: str) -> None:
        if self._expanded[side] >= self.spec.expansions:
            self.status = censored
        else:
            self._expanded[side] += 1
            self._point(gap_ms, pilot=True)

    def _log_crossing(self, lo: Point, hi: Point, clip: float = 0.0) -> float:
        """log rate where log(failure share) interpolated linearly in log rate between lo and hi reaches the
        allowed share (failure grows like a power of the rate below the knee), t kept in [clip, 1 - clip]."""
        thr = self.spec.threshold
        a, b = math.log(lo.rate_cps), math.log(hi.rate_cps)
        ga, gb = lo.margin(thr), hi.margin(thr)
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

    # -- phase 2: replications of a pair of full runs around the crossing
    def _place(self, rate_cps: float) -> bool:
        s = self.spec.spread
        return self._set_pair((self._at_rate(rate_cps / (1 + s), False), self._at_rate(rate_cps * (1 + s), False)))

    def _move(self, rate_cps: float) -> bool:
        """Put the pair around `rate_cps`: keep the nearer point and add one beyond the crossing when the pair
        stays within (1 + spread)^3 wide (one new run per replication, not two), else place a new pair. False
        when that pair was used before (noise would make the pair oscillate): it stays."""
        a, b = self.pair
        s = self.spec.spread
        new = self._at_rate(rate_cps / (1 + s), False) if rate_cps < a.rate_cps else \
            self._at_rate(rate_cps * (1 + s), False)
        pair = (new, a) if rate_cps < a.rate_cps else (b, new)
        if pair[1].rate_cps / pair[0].rate_cps > (1 + s) ** 3:
            return self._place(rate_cps)
        return self._set_pair(pair)

    def _set_pair(self, pair: tuple[Point, Point]) -> bool:
        key = (pair[0].rate_cps, pair[1].rate_cps)
        if key in self._visited:
            return False
        self._visited.add(key)
        self.pair = pair
        self.placements += 1
        self.reps = max(1, min(p.n for p in pair))
        return True

    def estimate(self) -> tuple[float, float, float, float]:
        """(knee, low, high, sd) in arrivals/s from the pair: the lowest crossing over the checked metrics, its
        CI [lowest low, lowest high] (NaN knee when a metric's mean slope is not positive), and the binding
        metric's per-replication sd of log knee."""
        a, b = self.pair
        est = [pair_crossing(a, b, c, self.spec.threshold) for c in self.check]
        if any(math.isnan(e[0]) for e in est):
            return math.nan, 0.0, math.inf, math.inf
        return (math.exp(min(e[0] for e in est)), math.exp(min(e[1] for e in est)),
                math.exp(min(e[2] for e in est)), min(est)[3])

    def _step_pair(self) -> None:
        spec, thr = self.spec, self.spec.threshold
        least = min(spec.knee_replications, spec.max_replications)
        a, b = self.pair
        n = min(a.n, b.n)
        knee, low, high, sd = self.estimate()
        width = b.rate_cps / a.rate_cps
        inside = a.rate_cps / math.sqrt(width) <= knee <= b.rate_cps * math.sqrt(width)
        if math.isnan(knee) and a.passes(thr) == b.passes(thr):   # flat or rising: step off by two widths
            knee = math.sqrt(a.rate_cps * b.rate_cps) * width ** (2 if a.passes(thr) else -2)
        if not math.isnan(knee) and not inside:          # the crossing lies off the pair: move the pair there
            if len(self.full) + 2 > spec.max_points or self.placements >= MAX_PLACEMENTS:
                self.status, self.stopped = "max_points", "max_points"
                return
            mid = math.sqrt(a.rate_cps * b.rate_cps)
            ga, gb = a.margin(thr), b.margin(thr)
            if gb > ga:   # extrapolate log(failure share), linear in log rate (a power law), not success
                knee = math.exp(math.log(a.rate_cps) - ga / (gb - ga) * math.log(width))
            if self._move(min(max(knee, mid / MOVE), mid * MOVE)):
                return
        hw = (high - low) / 2 / knee if not math.isnan(knee) else math.inf
        if n >= least and hw <= spec.halfwidth:
            self.status, self.stopped = "ok", "halfwidth"
        elif n >= spec.max_replications:
            self.status, self.stopped = "ok", "max_replications"
        elif n >= least and math.isfinite(sd) and self._projection(sd) > FUTILE * spec.halfwidth:
            self.status, self.stopped = "ok", "futile"
        else:
            self.reps = max(n + 1, least)

    def _projection(self, sd: float) -> float:
        """The relative half-width max_replications would give at a per-replication sd of log knee (the delta
        method: Fieller's interval at n = 3 is too erratic to project from)."""
        m = self.spec.max_replications
        return math.expm1(stats.t.ppf(0.975, m - 1) * sd / math.sqrt(m))

    # -- the answer
    def result(self) -> dict:
        """The flat knee record (JSON-able; NaN where undefined)."""
        thr = self.spec.threshold
        pts = [p for p in (*self.pilot.values(), *self.full.values()) if p.n]
        out = {"status": self.status, "error": self.error, "param": self.param, "threshold": thr,
               "precision": self.spec.precision, "halfwidth_target": self.spec.halfwidth,
               "common_random_numbers": self.spec.common_random_numbers,
               "runs": sum(p.n for p in pts), "points": len(pts),
               "pilot_runs": sum(p.n for p in pts if p.pilot), "placements": self.placements,
               "stopped": self.stopped}
        out["simulated_hours"] = sum(self.hours_of(p) for p in pts)
        knee = low = high = math.nan
        if self.status in ("ok", "max_points") and self.pair is not None and min(p.n for p in self.pair):
            knee, low, high, _ = self.estimate()
        if math.isnan(knee):
            out.update({"offered_cps": math.nan, "offered_cps_low": math.nan, "offered_cps_high": math.nan,
                        "value": math.nan, "replications": 0, "decided": False})
            out.update({k: math.nan for m in AT_KNEE if m != "offered_cps" for k in (m, f"{m}_ci95")})
            out.update({"measured_offered_cps": math.nan, "measured_offered_cps_ci95": math.nan})
            out["ci95_halfwidth_rel"] = math.nan
            return out
        a, b = self.pair
        n = min(a.n, b.n)
        hw = (high - low) / 2 / knee
        out.update({"offered_cps": knee, "offered_cps_low": low, "offered_cps_high": high,
                    "value": float(f"{1000.0 / (knee * self.unit):.6g}"), "replications": n,
                    "decided": bool(hw <= self.spec.halfwidth), "ci95_halfwidth_rel": hw})
        w = math.log(knee / a.rate_cps) / math.log(b.rate_cps / a.rate_cps)
        for m in AT_KNEE:   # interpolated per replication at the knee (linear in log rate between the pair)
            key = "measured_offered_cps" if m == "offered_cps" else m
            ends = [(_nan(ra.get(m)), _nan(rb.get(m))) for ra, rb in zip(a.runs[:n], b.runs[:n])]
            out[key], out[f"{key}_ci95"] = mean_ci95([u + w * (v - u) for u, v in ends])
        return out

    def trace(self) -> list[dict]:
        """Every point run: phase, rate, parameter value, replications, success interval, decision."""
        thr = self.spec.threshold
        rows = []
        for p in sorted((p for p in (*self.pilot.values(), *self.full.values()) if p.n),
                        key=lambda p: (not p.pilot, p.rate_cps)):
            row = {"phase": "pilot" if p.pilot else "pair", "offered_cps": p.rate_cps, "value": p.value,
                   "replications": p.n, "decision": p.decision(thr), "passes": p.passes(thr)}
            for c, (m, lo, hi, _) in p.checks.items():
                row.update({f"{c}success_rate": m, f"{c}success_low": lo, f"{c}success_high": hi})
            rows.append(row)
        return rows


#: a pair moves by at most this factor at a time, and is placed at most this many times
MOVE = 1.5
MAX_PLACEMENTS = 6
#: stop adding replications when even max_replications would leave the half-width this many times the target
FUTILE = 1.5


def _nan(v):
    return math.nan if v is None else v
