"""Knee search: the usable throughput of one configuration, estimated where its success curve crosses the threshold
instead of read off a load grid.

Definition. The knee is the highest offered rate r (arrivals/s; r = 1000 / the mean inter-arrival gap in ms)
at which the success rate, and for a mix (fast_append_ratio < 1) the VO success rate too, is at least the
threshold: the crossing of the mean success curve (the lower crossing over the checked metrics). Success is
over window arrivals: a transaction still unfinished at the drain limit counts as not successful, per kind
too (an overloaded run finishes few transactions, and those succeed; `run_success`).

Phase 1, pilot (locates the knee; never enters its CI). One short run per point: duration, warmup and cooldown
all scaled by `pilot_fraction` (1/6: 10 min instead of 1 h). Both ends of the start bracket are run (an end
on the wrong side is pushed out by 4x, at most `expansions` times, then the knee is reported `above_range` /
`below_range`); points are classified by their mean, and while the bracket is wider than `precision`
(hi / lo - 1) a point is added inside it: log(failure share) interpolated linearly in log rate between the
ends (failure grows like a power of the rate below the knee), kept in the bracket's middle 70 %, bisected
when the same end moved twice in a row or the bracket is within twice the precision. The pilot's guess is
that interpolation between its final ends. Far-off points cost a sixth of a run each. Short runs are biased:
concurrency builds up over the runtimes (3 min median, heavy tail), so a 10-min run sees less contention than
an hour; on 4c the pilot's crossing sat 1.4-1.65x above the full runs', and gcp's 3-4x (its 1 write/s per
object collapses into 429 resends only once the backlog has built).

Phase 2, probes (correct the pilot; one full run each). The first probe runs at the pilot's guess /
`pilot_bias` (1.5, from that measurement; it moves only where the walk starts, not the estimate). Each next
one goes where the full runs so far put the crossing: inside a full-length bracket, log(failure share)
interpolated in log rate (middle 70 %, bisected when the same end moved twice); outside one, the secant
through the two points nearest it, or from a single point a step of 1.5x when its failure share is off the
allowed one by more than 2x (else the pilot's local slope); a step from the nearest point may grow to 1.5^2
and 1.5^4 while all points stay on one side. The pair is placed as soon as two full runs straddle that
crossing within about a pair's width (they become the pair), or a full run lies within a spread and a
standard spread of it (it becomes one end; a widened pair is centred on the crossing instead).

Phase 3, pair (the estimate and its CI). Full runs at two points straddling the crossing, 2 x `spread` apart in
log rate (widened, to at most 15 %, until the binding metric loses 2 sqrt 2 binomial sds of one run's
success across the pair: gcp's VO at 0.3 arrivals/s has about 60 transactions a run), replicated together:
replication i gives its level (mean success of the two minus the threshold) and slope (success lost per unit
log rate), and the crossing is the pair's middle plus mean level / mean slope in log rate, with a Fieller 95 %
interval from the replications' sample covariance (Student-t, n - 1 degrees of freedom) - the stochastic
root-finding / ED95 estimate, using every run at both points rather than a bracket of pass/fail decisions.
Replications are independent, so the interval needs no model of the correlation between transactions of one
run; it is infinite while the slope is not clearly positive. Success is interpolated linearly: on a
power-law failure curve that misses the crossing by well under 1 % with 4 % spread (tests). After the first
replication, a crossing off the pair (extrapolated beyond either point) moves the pair (keeping its nearer
point when the pair stays within (1 + spread)^3) to where log(failure share), extrapolated linearly in log rate from
the pair, reaches the allowed share (at most 1.5x per move, and inside the full-length bracket); then
replications are added (at least `knee_replications`) until the CI half-width / knee <= `halfwidth`, or
`max_replications`, or, from 3 replications on, until it is futile: the delta-method half-width projected to
`max_replications` exceeds 1.5 x the target. Throughput and latencies at the knee are interpolated per
replication between the pair (linear in log rate), with replication CIs. Common random numbers are on by
default: all points differ only in load, so they share arrivals, tables, operations and runtimes (latency
streams stay keyed by the config).

Coverage: on a synthetic curve with run and replication noise the 95 % CI covers the true crossing in 94 %
of 400 searches at 4 replications and 94 % with the adaptive stop (85-88 % if z replaced t, 85 % if the pair
were widened by the design effect's sd; `tests/test_knee.py` checks >= 90 % on 200). On 10 cells of 4c the
brute-force crossing of a dense grid lies inside the CI in 10. Measured on 4c (README): 1046 simulated hours
(the 900-run grid: 900), median half-width 3.1 %, 86 of 90 cells within 5 % (the other 4: gcp mixes).

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
             "pilot_fraction", "pilot_bias")
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
    pilot_bias: float = 1.5             # the first full-length probe runs at the pilot's guess / this


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
    num("pilot_bias", 0.1, 10.0)
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
    """(mean, low, high, projected half-width at `max_replications`) of `prefix` success over runs
    (`run_success`: unfinished transactions count as failures); the projection scales the Wilson part by
    sqrt(n / max) and gives the t part the t quantile and standard error it would have at max replications."""
    committed = sum(r[f"{prefix}committed"] for r in runs)
    arrived = sum(r[f"{prefix}arrived"] for r in runs)
    if arrived == 0:
        return 1.0, 1.0, 1.0, 0.0   # nothing of this kind arrived: nothing failed either
    lo, hi = wilson(committed / design_effect, arrived / design_effect)
    shrink = math.sqrt(len(runs) / max_replications)
    proj = (hi - lo) / 2 * shrink
    values = [run_success(r, prefix) for r in runs]
    mean, half = mean_ci95(values)
    if not math.isnan(half):
        lo, hi = min(lo, mean - half), max(hi, mean + half)
        if max_replications >= 2:
            sd = float(np.std(values, ddof=1))
            proj = max(proj, stats.t.ppf(0.975, max_replications - 1) * sd / math.sqrt(max_replications))
    return mean, lo, hi, proj


# ------------------------------------------------------------------------------------------ the search

@dataclass(eq=False)
class Point:
    rate_cps: float
    value: float                                  # the load parameter (gap ms)
    pilot: bool = False                           # a short pilot run (locates the knee, never in its CI)
    runs: list[dict] = field(default_factory=list)   # runs[i] is replication i
    checks: dict = field(default_factory=dict)    # metric prefix -> (mean, low, high, projection)

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
    if a <= 0 or disc < -1e-12 * h * h:      # (without variance disc is 0 up to rounding)
        return theta, -math.inf, math.inf
    disc = max(disc, 0.0)
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
    Three phases (module docstring): short pilot runs bracket the knee, full-length probes correct the pilot's
    bias, then replications of a pair of full runs straddling the crossing estimate it with a CI."""

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
        self.stage = "pilot"           # pilot -> probe -> pair
        self.spread = spec.spread      # the pair's (widened for noisy kinds, `_pair_spread`)
        self._probes: list[Point] = []   # full-length probes, in the order they were run
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
            if self.stage == "pair":
                need = [(p, p.n) for p in self.pair if p.n < self.reps]
            else:
                need = [(p, 0) for p in (self.pilot if self.stage == "pilot" else self.full).values() if p.n == 0]
            if need:
                return need
            {"pilot": self._step_pilot, "probe": self._step_probe, "pair": self._step_pair}[self.stage]()
        else:
            self.status, self.error = "failed", "knee search made no progress"
        return []

    # -- phase 1: pilot bracket (one short run per point, classified by its mean)
    def bracket(self, pilot: bool = True) -> tuple[Point | None, Point | None]:
        """(lo, hi) of the pilot's points (or of the full-length ones run so far): the lowest failing point and
        the highest passing point below it, by their mean over replications."""
        thr = self.spec.threshold
        pts = sorted((p for p in (self.pilot if pilot else self.full).values() if p.n), key=lambda p: p.rate_cps)
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
        self._probe(math.exp(self._log_crossing(lo, hi)) / self.spec.pilot_bias)

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

    # -- phase 2: full-length probes, one run each, until one lies next to the crossing
    def _probe(self, rate_cps: float) -> None:
        self.stage = "probe"
        p = self._at_rate(rate_cps, False)
        if p.n == 0 and p not in self._probes:
            self._probes.append(p)

    def full_bracket(self) -> tuple[Point | None, Point | None]:
        return self.bracket(pilot=False)

    def _full_target(self, lo: Point | None, hi: Point | None) -> float:
        """Where the full-length runs so far put the crossing (arrivals/s). Inside a bracket: log(failure share)
        interpolated in log rate (bisected when the same end moved twice in a row). Outside one: the secant
        through the two points nearest it; from a single point, a step of MOVE when its failure share is off the
        allowed one by more than 2x (a short pilot's slope says little about full runs that far out), else the
        pilot's slope; the step from the nearest point may grow to MOVE^2 and MOVE^4 while the points stay on
        one side (gcp's short pilots sit 3x above its knee, where full runs collapse). `lo`, `hi`: the
        full-length bracket."""
        thr = self.spec.threshold
        if lo is not None and hi is not None:
            last = [p.passes(thr) for p in self._probes[-2:]]
            if len(last) == 2 and last[0] == last[1] and lo in self._probes and hi in self._probes:
                return math.sqrt(lo.rate_cps * hi.rate_cps)
            return math.exp(self._log_crossing(lo, hi, clip=0.15))
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
        lo_x, hi_x = (e.rate_cps / limit, e.rate_cps) if down else (e.rate_cps, e.rate_cps * limit)
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

    def _step_probe(self) -> None:
        """Run the next probe at the crossing the full runs point to, or place the pair there: on two full runs
        that already straddle it closely, or once a full point lies within a spread and a standard spread of it
        (that point becomes one end of the pair, so its run is not lost). A widened pair (noisy kinds) is
        centred on the crossing instead, reusing runs near its ends: an end sitting on the crossing would leave
        the interval's far side to extrapolation."""
        lo, hi = self.full_bracket()
        x = self._full_target(lo, hi)
        self.spread = self._pair_spread(lo, hi)
        s, s0 = math.log1p(self.spread), math.log1p(self.spec.spread)
        if lo is not None and hi is not None and math.log(hi.rate_cps / lo.rate_cps) <= 2 * s + s0:
            self.stage = "pair"           # two full runs already straddle the crossing closely: they are the pair
            self._set_pair((lo, hi))
            return
        near = min((p for p in self.full.values() if p.n), key=lambda p: abs(math.log(x / p.rate_cps)))
        d = abs(math.log(x / near.rate_cps))
        out_of_points = len(self._probes) >= MAX_PROBES or len(self.full) + 1 >= self.spec.max_points
        if d > s + s0 and not out_of_points:
            n = len(self._probes)
            self._probe(x)
            if len(self._probes) > n:
                return
        self.stage = "pair"
        if d > s + s0 or (self.spread > self.spec.spread and d < s / 2):
            self._set_pair((self._end(x / (1 + self.spread)), self._end(x * (1 + self.spread))))
        elif near.rate_cps <= x:
            self._set_pair((near, self._end(max(x * (1 + self.spread), near.rate_cps * (1 + self.spread) ** 2))))
        else:
            self._set_pair((self._end(min(x / (1 + self.spread), near.rate_cps / (1 + self.spread) ** 2)), near))

    def _end(self, rate_cps: float) -> Point:
        """The full point at `rate_cps`, or a full point already run within half a spread of it."""
        half = math.log1p(self.spread) / 2
        ran = [p for p in self.full.values() if p.n and abs(math.log(p.rate_cps / rate_cps)) <= half]
        return min(ran, key=lambda p: abs(math.log(p.rate_cps / rate_cps))) if ran else self._at_rate(rate_cps, False)

    def _pair_spread(self, lo: Point | None, hi: Point | None) -> float:
        """The pair's spread: the spec's, widened (up to MAX_SPREAD) until the success the binding metric loses
        across the pair is SPREAD_SIGMAS binomial standard deviations of one run's success at the threshold, by
        the slope of the full-length bracket. A kind with few transactions per run (gcp at 0.3 arrivals/s, 10 %
        VO: about 60 VO transactions a run) otherwise gives a slope lost in noise and a Fieller interval many
        times the target. Not the design effect's inflated sd: pairs that wide let linear interpolation's bias
        on a curved success curve show, and the CI's coverage fell to 85 % in the tests. `lo`, `hi`: the
        full-length bracket."""
        if lo is None or hi is None:
            return self.spec.spread
        thr = self.spec.threshold
        c = max(self.check, key=lambda c: 1 - hi.checks[c][0])
        slope = (lo.checks[c][0] - hi.checks[c][0]) / math.log(hi.rate_cps / lo.rate_cps)
        n = min(sum(r[f"{c}arrived"] for r in p.runs) / p.n for p in (lo, hi))
        if slope <= 0 or n <= 0:
            return self.spec.spread
        return min(max(self.spec.spread, SPREAD_SIGMAS * math.sqrt(thr * (1 - thr) / n) / slope), MAX_SPREAD)

    # -- phase 3: replications of a pair of full runs around the crossing
    def _place(self, rate_cps: float) -> bool:
        s = self.spread
        return self._set_pair((self._at_rate(rate_cps / (1 + s), False), self._at_rate(rate_cps * (1 + s), False)))

    def _move(self, rate_cps: float) -> bool:
        """Put the pair around `rate_cps`: keep the nearer point and add one beyond the crossing when the pair
        stays within (1 + spread)^3 wide (one new run per replication, not two), else place a new pair. False
        when that pair was used before (noise would make the pair oscillate): it stays."""
        a, b = self.pair
        s = self.spread
        if a.rate_cps <= rate_cps <= b.rate_cps:     # already straddled (the full-length bracket said so)
            return False
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
        # between the pair's points: extrapolated, the crossing inherits the pair's slope, and a pair on gcp's
        # collapse cliff (both points failing) put it 8 % above a dense grid's, where the curve is gentler
        inside = a.rate_cps <= knee <= b.rate_cps
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
            knee = min(max(knee, mid / MOVE), mid * MOVE)
            lo, hi = self.full_bracket()
            if lo is not None and hi is not None and not lo.rate_cps < knee < hi.rate_cps:
                knee = math.exp(self._log_crossing(lo, hi, clip=0.15))
            if self._move(knee):
                return
        hw = (high - low) / 2 / knee if not math.isnan(knee) else math.inf
        if n >= least and hw <= spec.halfwidth:
            self.status, self.stopped = "ok", "halfwidth"
        elif n >= spec.max_replications:
            self.status, self.stopped = "ok", "max_replications"
        elif n >= max(least, 3) and math.isfinite(sd) and self._projection(sd) > FUTILE * spec.halfwidth:
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
               "pilot_runs": sum(p.n for p in pts if p.pilot), "probes": len(self._probes),
               "placements": self.placements,
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
            phase = "pilot" if p.pilot else "pair" if self.pair is not None and p in self.pair else "full"
            row = {"phase": phase, "offered_cps": p.rate_cps, "value": p.value,
                   "replications": p.n, "decision": p.decision(thr), "passes": p.passes(thr)}
            for c, (m, lo, hi, _) in p.checks.items():
                row.update({f"{c}success_rate": m, f"{c}success_low": lo, f"{c}success_high": hi})
            rows.append(row)
        return rows


#: a pair (or, at first, a probe) moves by at most this factor at a time; a pair is placed at most this many
#: times, and at most this many probes are run
MOVE = 1.5
MAX_PLACEMENTS = 6
MAX_PROBES = 8
#: the pair is widened until the binding metric loses this many binomial sds across it (4 sds of the difference
#: of two runs: 2 sqrt 2), but to a spread of at most MAX_SPREAD
SPREAD_SIGMAS = 2 * math.sqrt(2)
MAX_SPREAD = 0.15
#: stop adding replications when even max_replications would leave the half-width this many times the target
#: (judged from 3 replications on: the sd of 2 has one degree of freedom, and stopped gcp's VO cells at random)
FUTILE = 1.5


def _nan(v):
    return math.nan if v is None else v
