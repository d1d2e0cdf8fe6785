"""Phase 1, the pilot: locates the knee, and never enters its CI or its fit.

One short run per point: duration, warmup and cooldown all scaled by `pilot_fraction` (1/6: 10 min instead of
1 h). Both ends of the start bracket are run (an end on the wrong side is pushed out by 4x, at most `expansions`
times, then the knee is reported `above_range` / `below_range`; writers: the most writers doubled, the fewest
down to one); points are classified by their mean, and while the bracket is wider than `precision` (hi / lo - 1)
a point is added inside it: log(failure share) interpolated linearly in log rate between the ends (failure grows
like a power of the rate below the knee), kept in the bracket's middle 70 %, bisected when the same end moved
twice in a row or the bracket is within twice the precision (writers: rounded to a count strictly inside, until
none is left). The pilot's guess is that interpolation between its final ends. Far-off points cost a sixth of a run
each. Short runs are biased: concurrency builds up over the runtimes (3 min median, heavy tail), so a 10-min run
sees less contention than an hour; on 4c the pilot's crossing sat 1.4-1.65x above the full runs', and gcp's 3-4x
(its 1 write/s per object collapses into 429 resends only once the backlog has built).

Common random numbers link the pilot's points: they share replication 0, so its bracket is smooth."""
from __future__ import annotations

import math

import numpy as np

from .points import Point, by_rate, log_crossing, point_at
from .spec import KneeSpec


class Pilot:
    """The pilot's points (keyed by level) and its walk to a bracket narrower than `precision` (or, for writers,
    with no count left inside)."""

    def __init__(self, spec: KneeSpec, param):
        self.spec = spec
        self.param = param               # the parameter moved (sim.knee.param)
        self.points: dict[float, Point] = {}
        self.censored = ""               # above_range / below_range: an end stayed on the wrong side
        self._interior: list[Point] = []
        self._expanded = {"fast": 0, "slow": 0}
        for value in param.start:
            self._run(value)

    def bracket(self) -> tuple[Point | None, Point | None]:
        """(lo, hi) of the pilot's points: the lowest failing point and the highest passing point below it, by
        their mean over runs."""
        thr = self.spec.threshold
        pts = by_rate(self.points)
        hi = next((p for p in pts if not p.passes(thr)), None)
        below = [p for p in pts if p.passes(thr) and (hi is None or p.load < hi.load)]
        return (below[-1] if below else None), hi

    def step(self) -> float | None:
        """Ask for the next pilot run; or, once the bracket is narrow enough (or the points run out), return
        the pilot's guess of the crossing (its level). None while runs are asked for, or when `censored`."""
        lo, hi = self.bracket()
        values = [p.value for p in self.points.values()]
        if hi is None:                                  # nothing fails: push the fast end out
            self._expand("fast", self.param.expanded(values, up=True), "above_range")
            return None
        if lo is None:                                  # nothing passes: push the slow end out
            self._expand("slow", self.param.expanded(values, up=False), "below_range")
            return None
        if hi.load / lo.load - 1 > self.spec.precision and len(self.points) < self.spec.max_points:
            value = self._split(lo, hi)
            p = None if value is None else self._run(value)
            if p is not None:
                self._interior.append(p)
                return None
        return math.exp(log_crossing(lo, hi, self.spec.threshold))

    def slope(self) -> float:
        """Least-squares slope of the pilot points' margins (log failure share) against log rate, over the
        points within a factor 2 of the pilot's bracket (NaN with fewer than 3)."""
        lo, hi = self.bracket()
        if lo is None or hi is None:
            return math.nan
        mid = math.sqrt(lo.load * hi.load)
        pts = [p for p in self.points.values() if p.n and mid / 2 <= p.load <= mid * 2]
        if len(pts) < 3:
            return math.nan
        x = np.log([p.load for p in pts])
        return float(np.polyfit(x, [p.margin(self.spec.threshold) for p in pts], 1)[0])

    def _run(self, value) -> Point | None:
        """Ask for the pilot run at parameter `value` (replication 0: pilot points share their workload); None
        when that point exists already."""
        n = len(self.points)
        p = point_at(self.points, self.param, value, pilot=True)
        if len(self.points) == n:
            return None
        p.reps.append(0)
        return p

    def _expand(self, side: str, value, censored: str) -> None:
        """Run the start bracket's end pushed out to `value`; `censored` when it was pushed `expansions` times
        already, or cannot be (None: one writer did not pass)."""
        if self._expanded[side] >= self.spec.expansions or value is None:
            self.censored = censored
        else:
            self._expanded[side] += 1
            self._run(value)

    def _split(self, lo: Point, hi: Point):
        """The next pilot parameter value inside (lo, hi): interpolated within the bracket's middle 70 %, or
        bisected when the same end moved twice in a row or the bracket is within twice the precision; None when
        no count is left inside (writers)."""
        thr = self.spec.threshold
        a, b = math.log(lo.load), math.log(hi.load)
        near_done = (b - a) <= 2 * math.log1p(self.spec.precision)
        last = [p.passes(thr) for p in self._interior[-2:]]
        stalled = len(last) == 2 and last[0] == last[1]
        x = (a + b) / 2 if near_done or stalled else log_crossing(lo, hi, thr, clip=0.15)
        return self.param.between(math.exp(x), lo.load, hi.load)
