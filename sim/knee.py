"""Knee search: the usable throughput of one configuration, found by bisection instead of read off a load grid.

Definition. The knee is the highest offered rate r (arrivals/s; r = 1000 / the mean inter-arrival gap in ms)
at which the success rate, and for a mix (fast_append_ratio < 1) the VO success rate too, is at least the
threshold. Its 95 % CI is the bracket [highest rate whose success interval lies at or above the threshold,
lowest rate whose success interval lies below it]; between them lie only points whose success cannot be told
apart from the threshold. The knee is the highest point of that bracket that passes by its mean (the lower
end if none inside does); throughput and latencies are those measured there.

Search. The load parameter (`workload.inter_arrival.mean_ms`, or `.median_ms` for lognormal gaps) moves; all
else stays. Both ends of the start bracket are run (an end on the wrong side is pushed out by 4x, at most
`expansions` times, then the knee is reported `above_range` / `below_range`). Then, while the bracket is wider
than the precision (hi / lo - 1 > precision), a point is added inside it: with no undecided point inside, the
split interpolates log(failure share) linearly in log rate between the ends (failure grows like a power of the
rate below the knee, so this is nearly linear), kept within the middle 70 % of the bracket, and is a plain
bisection when the same end moved twice in a row or one bisection finishes; with undecided points inside, the
wider of the two gaps between a sure end and the undecided zone is bisected. Common random numbers are on by
default: all points of a search differ only in load, so they share arrivals, tables, operations and runtimes.

Confidence interval of success at a point, and when replications are added. Replications are independent;
transactions inside one run are not (contention comes in bursts), so a binomial interval on a run's
transactions alone would be too narrow near the knee. With n >= 2 replications the interval is the Student-t
interval of the replication means, widened to at least a Wilson interval on the pooled transactions with an
effective count of finished / design_effect (which keeps identical replications from giving a zero-width
interval); with one replication only that Wilson interval. A point is decided when its interval excludes the
threshold (every checked metric at or above it: passes; any below it: fails). An undecided point gets one more
replication until `max_replications`, or until it is futile: the interval projected to `max_replications`
(Wilson part scaled by sqrt(n / max), t part with its max-replication quantile and standard error) would still
contain the threshold. The knee point gets at least `knee_replications` replications, so its throughput and
latencies carry CIs.

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
             "expansions", "design_effect", "common_random_numbers", "max_points")
LOAD_PARAMS = ("workload.inter_arrival.mean_ms", "workload.inter_arrival.median_ms")
#: metrics reported at the knee, with their replication CIs
AT_KNEE = ("success_rate", "vo_success_rate", "throughput_cps", "offered_cps",
           "commit_latency_mean_ms", "commit_latency_p99_ms", "fa_commit_latency_mean_ms",
           "fa_commit_latency_p99_ms", "vo_commit_latency_mean_ms", "vo_commit_latency_p99_ms")


@dataclass(frozen=True)
class KneeSpec:
    param: str | None = None            # None: the config's inter-arrival mean (or median) in ms
    threshold: float = 0.95
    precision: float = 0.02             # stop when the bracket's hi / lo - 1 is at most this
    start: tuple[float, float] = (20.0, 5000.0)   # gap ms: the fast (high-rate) and slow ends
    max_replications: int = 6
    knee_replications: int = 2
    expansions: int = 2
    design_effect: float = 3.0
    common_random_numbers: bool = True
    max_points: int = 40


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
    runs: list[dict] = field(default_factory=list)
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
            finished = sum(r[f"{prefix}committed"] + r[f"{prefix}aborted"] for r in self.runs)
            worst = max(worst, max(1.0 - m, 0.5 / max(finished, 1)))
        return math.log(worst / max(1.0 - thr, 1e-9))


class KneeSearch:
    """One configuration's knee. `pending()` lists the (point, replication) runs needed next, `config_of(point)`
    the config to run, `feed()` takes a run's summary; `done` when finished; `result()` the flat knee record.
    The bracket is derived from all points each time (lowest failing rate, highest passing rate below it), so
    a replication that flips a point's classification simply moves the bracket."""

    def __init__(self, cfg: Config, spec: KneeSpec = KneeSpec()):
        self.spec = spec
        self.param = load_param(cfg, spec.param)
        self.unit = mean_gap_per_unit(cfg)
        crn = {"common_random_numbers": True} if spec.common_random_numbers else {}
        self.base = cfg.replace(**crn)
        self.check = ("", "vo_") if cfg.workload.fast_append_ratio < 1 else ("",)
        self.points: dict[float, Point] = {}
        self.hours_per_run = cfg.duration_ms / 3_600_000
        self.status = "searching"
        self.error = ""
        self._min_reps: dict[float, int] = {}
        self._interior: list[Point] = []
        self._expanded = {"fast": 0, "slow": 0}
        for gap in spec.start:
            self._point(gap)

    def _point(self, gap_ms: float) -> Point:
        gap_ms = float(f"{gap_ms:.6g}")
        rate = 1000.0 / (gap_ms * self.unit)
        if rate not in self.points:
            self.points[rate] = Point(rate, gap_ms)
        return self.points[rate]

    def config_of(self, p: Point) -> Config:
        return self.base.replace(**{self.param: p.value})

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

    def _settled(self, p: Point) -> bool:
        """Enough replications: decided, or at `max_replications`, or futile (module docstring)."""
        need = min(self._min_reps.get(p.rate_cps, 1), self.spec.max_replications)
        if p.n < need:
            return False
        thr = self.spec.threshold
        if p.decision(thr) != "undecided" or p.n >= self.spec.max_replications:
            return True
        return any(lo < thr <= hi and abs(m - thr) < proj for m, lo, hi, proj in p.checks.values())

    def bracket(self) -> tuple[Point | None, Point | None, list[Point]]:
        """(lo, hi, inside): the lowest decided-failing point, the highest decided-passing point below it, and
        the undecided points between them (where the threshold cannot be told apart from the success)."""
        thr = self.spec.threshold
        pts = sorted((p for p in self.points.values() if p.n), key=lambda p: p.rate_cps)
        hi = next((p for p in pts if p.decision(thr) == "fail"), None)
        below = [p for p in pts if p.decision(thr) == "pass" and (hi is None or p.rate_cps < hi.rate_cps)]
        if not below:   # too few transactions to be sure even at the slowest load: its mean must do
            below = [p for p in pts if p.passes(thr) and (hi is None or p.rate_cps < hi.rate_cps)][:1]
        lo = below[-1] if below else None
        inside = [p for p in pts if (lo is None or p.rate_cps > lo.rate_cps)
                  and (hi is None or p.rate_cps < hi.rate_cps) and p.decision(thr) == "undecided"]
        return lo, hi, inside

    def knee_point(self) -> Point | None:
        """The highest point of the bracket that passes by its mean: the lower end, or an undecided point."""
        lo, hi, inside = self.bracket()
        thr = self.spec.threshold
        passing = [p for p in inside if p.passes(thr)]
        return passing[-1] if passing else lo

    def pending(self) -> list[tuple[Point, int]]:
        """Runs needed before the search can move on (empty when done)."""
        while not self.done:
            need = [p for p in self.points.values() if not self._settled(p)]
            if need:
                return [(p, p.n) for p in need]
            self._step()
        return []

    def _step(self) -> None:
        lo, hi, inside = self.bracket()
        gaps = [p.value for p in self.points.values()]
        wide = lambda a, b: b.rate_cps / a.rate_cps - 1 > self.spec.precision  # noqa: E731
        if hi is None:                                  # nothing fails for sure: push the fast end out
            self._expand("fast", min(gaps) / 4, "above_range")
            return
        if lo is None:                                  # nothing passes for sure: push the slow end out
            self._expand("slow", max(gaps) * 4, "below_range")
            return
        if len(self.points) >= self.spec.max_points:
            self.status = "max_points"
            return
        if not inside:
            split = (lo, hi, True) if wide(lo, hi) else None
        else:                                           # narrow the sure ends towards the undecided zone
            sides = [(a, b) for a, b in ((lo, inside[0]), (inside[-1], hi)) if wide(a, b)]
            split = max(sides, key=lambda ab: ab[1].rate_cps / ab[0].rate_cps) + (False,) if sides else None
        if split is None:
            knee = self.knee_point()
            if knee.n < min(self.spec.knee_replications, self.spec.max_replications):
                self._min_reps[knee.rate_cps] = self.spec.knee_replications
            else:
                self.status = "ok"
            return
        n = len(self.points)
        p = self._point(self._split(*split))
        if len(self.points) == n:                      # the gap cannot be split further at 6 digits
            self.status = "ok"
        else:
            self._interior.append(p)

    def _expand(self, side: str, gap_ms: float, censored: str) -> None:
        if self._expanded[side] >= self.spec.expansions:
            self.status = censored
        else:
            self._expanded[side] += 1
            self._point(gap_ms)

    def _split(self, lo: Point, hi: Point, interpolate: bool) -> float:
        """The next gap (ms) inside (lo, hi): interpolated, safeguarded, or bisected (module docstring)."""
        thr = self.spec.threshold
        a, b = math.log(lo.rate_cps), math.log(hi.rate_cps)
        t = 0.5
        near_done = (b - a) <= 2 * math.log1p(self.spec.precision)
        last = [p.passes(thr) for p in self._interior[-2:]]
        stalled = len(last) == 2 and last[0] == last[1]
        if interpolate and not near_done and not stalled:
            ga, gb = lo.margin(thr), hi.margin(thr)
            if gb > ga:
                t = min(0.85, max(0.15, -ga / (gb - ga)))
        return 1000.0 / (math.exp(a + t * (b - a)) * self.unit)

    # -- the answer
    def result(self) -> dict:
        """The flat knee record (JSON-able; NaN where undefined)."""
        thr = self.spec.threshold
        lo, hi, _ = self.bracket()
        pts = sorted((p for p in self.points.values() if p.n), key=lambda p: p.rate_cps)
        out = {"status": self.status, "error": self.error, "param": self.param, "threshold": thr,
               "precision": self.spec.precision, "common_random_numbers": self.spec.common_random_numbers,
               "runs": sum(p.n for p in pts), "points": len(pts)}
        out["simulated_hours"] = out["runs"] * self.hours_per_run
        knee = None
        if self.status == "above_range":
            knee = max((p for p in pts if p.passes(thr)), key=lambda p: p.rate_cps, default=None)
        elif self.status in ("ok", "max_points") and lo is not None:
            knee = self.knee_point()
        if knee is None:
            out.update({"offered_cps": math.nan, "offered_cps_low": math.nan, "offered_cps_high": math.nan,
                        "value": math.nan, "replications": 0, "decided": False})
            out.update({k: math.nan for m in AT_KNEE if m != "offered_cps" for k in (m, f"{m}_ci95")})
            out.update({"measured_offered_cps": math.nan, "measured_offered_cps_ci95": math.nan})
            out["ci95_halfwidth_rel"] = math.nan
            return out
        low = lo.rate_cps if lo is not None else 0.0
        high = hi.rate_cps if hi is not None else math.inf
        out.update({"offered_cps": knee.rate_cps, "offered_cps_low": low, "offered_cps_high": high,
                    "value": knee.value, "replications": knee.n, "decided": knee.decision(thr) == "pass"})
        out["ci95_halfwidth_rel"] = (high - low) / 2 / knee.rate_cps
        for m in AT_KNEE:   # the run's offered_cps is the measured arrival rate at the knee
            key = "measured_offered_cps" if m == "offered_cps" else m
            out[key], out[f"{key}_ci95"] = mean_ci95([r.get(m, math.nan) for r in knee.runs])
        return out

    def trace(self) -> list[dict]:
        """Every point run: rate, parameter value, replications, success interval, decision."""
        thr = self.spec.threshold
        rows = []
        for p in sorted((p for p in self.points.values() if p.n), key=lambda p: p.rate_cps):
            row = {"offered_cps": p.rate_cps, "value": p.value, "replications": p.n,
                   "decision": p.decision(thr), "passes": p.passes(thr)}
            for c, (m, lo, hi, _) in p.checks.items():
                row.update({f"{c}success_rate": m, f"{c}success_low": lo, f"{c}success_high": hi})
            rows.append(row)
        return rows
