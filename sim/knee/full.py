"""Phase 2, full-length runs: the estimate and its CI. One full run each, every one under its own replication
index, so they are independent (under common random numbers two runs of one replication share their workload,
an error common to both that the fit's residuals could not see).

The first runs at the pilot's guess / `pilot_bias` (1.5, from that measurement; 1 for writers, whose short runs
are not biased while a transaction is short beside the window; it moves only where the walk starts, not the
estimate); writers whose pilot passed at the most writers run there first (`KneeSearch._step_pilot`). Until the full runs bracket the
crossing, each next one goes where they put it (`placement.walk_target`). The full-length bracket is read off a
monotone (non-increasing, pool-adjacent-violators) fit of success over the full points, so one noisy run cannot
pin it. While it is wider than two spreads and a standard spread, a run is added inside it
(`placement.narrow_target`): gcp's success is flat and then falls off a cliff, and only a narrow bracket keeps
the fit on the cliff's edge. Then runs are added around the fit's crossing (`placement.next_log_rate`) until a
stop rule holds: the fit has at least `min_runs` (4) runs, 2 on each side of the crossing, and the CI half-width
/ knee is at most `halfwidth`; or `max_runs` full runs; or, from 12 runs in the fit on, even `max_runs` would
leave the delta-method half-width 1.5x the target (futile). For writers every run is at an integer count, new
runs sit at least one writer from the crossing, and the half-width target is at least half a writer (`param`)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import optimize, stats

from .fit import Fit, logistic_crossing
from .pilot import Pilot
from .placement import narrow_target, next_log_rate, spread_for, walk_target
from .points import Point, by_rate, log_crossing, point_at, trials
from .spec import KneeSpec

#: at most MAX_PROBES probes are run (walking to a full-length bracket, and narrowing it)
MAX_PROBES = 8
#: stop adding runs when even max_runs would leave the half-width this many times the target (judged from
#: FUTILE_FROM runs in the window on)
FUTILE = 1.5
FUTILE_FROM = 12


class FullLength:
    """The full-length points (keyed by level), the probes that walk to the crossing and narrow its bracket, the
    fit, and why the phase ended (`stopped`: halfwidth, max_runs, futile; max_points when no bracket was
    found; below_range / above_range when a walk of writers runs out of counts)."""

    def __init__(self, spec: KneeSpec, param, check: tuple[str, ...], pilot: Pilot, lenient: tuple[str, ...] = ()):
        self.spec = spec
        self.param = param               # the parameter moved (sim.knee.param)
        self.check = check               # metric prefixes that must pass ("" and, for a mix, "vo_"; a headroom's
                                         # tables, `sim.knee.headroom`)
        self.lenient = lenient           # ... of which those whose fit is degenerate bind only if they fail pooled
        self.pilot = pilot               # its slope guides a walk from a single full point
        self.points: dict[float, Point] = {}
        self.probes: list[Point] = []    # points run while walking to a full-length bracket, in order
        self.spread = spec.spread        # the current distance of new runs from the crossing (`spread_for`)
        self.fit: Fit | None = None
        self.stopped = ""
        self._last: float = math.nan     # log level of the last run asked for
        self._monotone: dict[Point, tuple[float, float]] = {}   # point -> (monotone success, floor)

    def runs(self) -> int:
        return sum(p.n for p in self.points.values())

    def run(self, value) -> Point:
        """Ask for one more full-length run at parameter `value`, under a replication index no other full run
        has: the fit needs independent runs (common random numbers would give every run of one replication the
        same workload, a shared error the fit's residuals cannot see)."""
        p = point_at(self.points, self.param, value, pilot=False)
        p.reps.append(sum(len(q.reps) for q in self.points.values()))
        self._last = math.log(p.load)
        return p

    def probe(self, value) -> None:
        self.probes.append(self.run(value))

    def step(self) -> None:
        """Ask for the next run, or set `stopped`."""
        spec = self.spec
        lo, hi = self.bracket()
        out = self.runs() >= spec.max_runs or len(self.points) + 1 >= spec.max_points
        if lo is None or hi is None:                # no full-length bracket yet: walk to the crossing
            if out or len(self.probes) >= MAX_PROBES:
                self.stopped = "max_points"
            else:
                self._walk(hi is not None)
            return
        center = self._center(lo, hi)
        least = self.param.min_spread(math.exp(center))     # writers: one count on each side
        self.spread = max(self.spread, least)
        fit = self.fit = self.fit_at(center)
        self.spread = max(spread_for(fit, lo, hi, spec, self.check), least)
        s = math.log1p(self.spread)
        if (math.log(hi.load / lo.load) > 2 * s + math.log1p(spec.spread) and not out
                and len(self.probes) < MAX_PROBES):
            value = self.param.between(self._target(lo, hi), lo.load, hi.load)
            if value is not None:
                self.probe(value)   # narrow the full-length bracket first (a cliff: gcp)
                return
        self.stopped = self._stop(fit, out)
        if not self.stopped:
            self.run(self.param.value_at(math.exp(next_log_rate(fit, self.spread, self._last))))

    def _walk(self, down: bool) -> None:
        """The next probe while every full point is on one side (`down`: all fail), beyond the nearest one;
        `below_range` / `above_range` when the parameter allows none (writers: one writer fails, or the most
        writers pass)."""
        pts = by_rate(self.points)
        target = walk_target(pts, down, self.spec.threshold, self.spread, self.pilot.slope)
        value = (self.param.between(target, None, pts[0].load) if down
                 else self.param.between(target, pts[-1].load, None))
        if value is None:
            self.stopped = "below_range" if down else "above_range"
        else:
            self.probe(value)

    def _stop(self, fit: Fit, out: bool) -> str:
        """Why the phase ends with this fit ('' when it goes on); `out`: no more runs or points allowed."""
        spec = self.spec
        b, m, hw = fit.binding, len(fit.runs), fit.halfwidth()
        inside = b is not None and b.inside
        target = self.param.halfwidth_target(fit.knee()[0], spec.halfwidth)
        if inside and m >= spec.min_runs and hw <= target:
            return "halfwidth"
        if out:
            return "max_runs"
        if inside and m >= FUTILE_FROM and self._projection(b.se, m) > FUTILE * target:
            return "futile"
        return ""

    def _projection(self, se: float, m: int) -> float:
        """The relative half-width `max_runs` runs in the window would give, from the crossing's standard error
        at `m` runs by the delta method (Fieller's interval with few runs and a noisy slope is too erratic to
        project from: it has an infinite side whenever the slope is not yet clearly positive)."""
        mx = self.spec.max_runs
        return math.expm1(stats.t.ppf(0.975, mx - 2) * se * math.sqrt(m / mx))

    def bracket(self) -> tuple[Point | None, Point | None]:
        """(lo, hi) of the full-length points: the highest passing point and the lowest failing one by a
        monotone (non-increasing) least-squares fit of each metric's success over the points, weighted by
        arrivals (pool-adjacent-violators). By each point's own mean instead, one noisy run of gcp's VO (40
        transactions: 0.947 where the knee is 15 % higher) would fail and pin the bracket below the knee."""
        thr = self.spec.threshold
        pts = by_rate(self.points)
        if not pts:
            return None, None
        value, floor = monotone_success(pts, self.check)
        self._monotone = {p: (v, f) for p, v, f in zip(pts, value, floor)}   # for `_monotone_margin`
        i = int(np.argmax(value < thr)) if (value < thr).any() else len(pts)
        return (pts[i - 1] if i > 0 else None), (pts[i] if i < len(pts) else None)

    def fit_at(self, center: float) -> Fit:
        """The fit over the full runs within two spreads of `center` (log level)."""
        half = 2 * math.log1p(self.spread)
        runs = [(math.log(p.load), r) for p in self.points.values() for r in p.runs
                if abs(math.log(p.load) - center) <= half]
        xs = [x for x, _ in runs]
        crossings = {c: logistic_crossing(xs, [r.get(f"{c}committed", 0) for _, r in runs],
                                          [trials(r, c) for _, r in runs], self.spec.threshold)
                     for c in self.check}
        for c in self.lenient:   # a table whose success does not fall with load here, yet passes pooled: no bound
            cr = crossings[c]
            n = sum(trials(r, c) for _, r in runs)
            pooled = sum(r.get(f"{c}committed", 0) for _, r in runs) / n if n else 1.0
            if math.isnan(cr.x) and pooled >= self.spec.threshold:
                crossings[c] = dataclasses.replace(cr, all_pass=True)
        return Fit(center, runs, crossings)

    def _target(self, lo: Point, hi: Point) -> float:
        """Where the next probe inside the full-length bracket (`lo`, `hi`) goes (its level)."""
        return narrow_target(lo, hi, self.probes, self.spec.threshold, self._monotone_margin)

    def _monotone_margin(self, p: Point) -> float:
        """log(failure share / allowed) of a full point by the monotone fit (`bracket`)."""
        v, floor = self._monotone[p]
        return math.log(max(1 - v, floor) / max(1 - self.spec.threshold, 1e-9))

    def _center(self, lo: Point, hi: Point) -> float:
        """Log level of the crossing by the monotone fit: log(failure share) interpolated between the bracket."""
        return log_crossing(lo, hi, self.spec.threshold, margin=self._monotone_margin)


def monotone_success(pts: list[Point], check: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Success over `pts` (slowest first) by a non-increasing fit weighted by trials (`points.trials`), the lowest
    over the checked metrics; and the floor of each point's failure share (half a transaction, of the checked
    metric with the fewest trials)."""
    value, floor = np.ones(len(pts)), np.zeros(len(pts))
    for c in check:
        n = np.array([sum(trials(r, c) for r in p.runs) for p in pts], float)
        committed = np.array([sum(r.get(f"{c}committed", 0) for r in p.runs) for p in pts], float)
        y = np.where(n > 0, committed / np.maximum(n, 1), 1.0)
        iso = optimize.isotonic_regression(y, weights=np.maximum(n, 1), increasing=False).x
        value = np.minimum(value, iso)
        floor = np.maximum(floor, 0.5 / np.maximum(n, 1))
    return value, floor
