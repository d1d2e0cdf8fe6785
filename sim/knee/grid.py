"""The grid knee: the knee read off a grid sweep's results (load points fixed in advance, replications at each),
by the search's own fit (`fit.logistic_crossing`) so a grid and `sim knee` answer the same question. The bracket
is where the monotone success over the points (`full.monotone_success`, success over the transactions that began
to commit) first falls below the threshold; the fit takes the runs of the bracket's two points, and of the next
point on each side too when those are fewer than 2 * MIN_SIDE runs (a grid of one replication), so the crossing is
interpolated where the grid brackets it rather than bent by points far from it (gcp's flat-then-cliff curve is
not logistic over a decade). The knee is reported as `status.py` says: `ok` only with a bounded CI within the
loads run; a grid whose lightest point already fails is `below_range`, one whose heaviest point still passes
`above_range`, each with its bound, and so is a bracket whose CI reaches past one end of the loads run
(`status.read_crossing`: the bound is its other end); a bracket whose runs bound the crossing on neither side is
`undecided` (a grid of one replication often has too few runs near a cliff: `sim knee` on that cell places its
runs for it)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .fit import MIN_SIDE, Fit, logistic_crossing
from .full import monotone_success
from .points import Point, by_rate, trial_rate, trials
from .status import read_crossing


@dataclass(frozen=True)
class GridKnee:
    """One group's knee off the grid: `status` (status.STATUSES), the fit near the crossing (None for a range
    status the grid's end points give), the knee (offered /s) with its CI (NaN unless `ok`), the bound of a range
    status in commits/s, and why a knee is not `ok` when the fit says why."""
    status: str
    fit: Fit | None
    knee: float = math.nan
    low: float = math.nan
    high: float = math.nan
    bound_cps: float = math.nan
    reason: str = ""

    def success_at_knee(self, prefix: str) -> float:
        """The fitted success of one kind at the knee (`Fit.success_at`); NaN unless `ok`."""
        return self.fit.success_at(prefix, math.log(self.knee)) if self.status == "ok" else math.nan

    def commit_factor(self) -> float:
        """Commits/s per offered /s at the knee (`Fit.commits_per_arrival`); NaN unless `ok`."""
        return self.fit.commits_per_arrival(math.log(self.knee)) if self.status == "ok" else math.nan


def grid_knee(points: list[Point], thr: float, check: tuple[str, ...]) -> GridKnee:
    """The grid knee of one group's points (load = mean offered rate, runs = summaries with their counts)."""
    pts = by_rate({p.load: p for p in points})
    if not pts:
        return GridKnee("undecided", None, reason="no runs")
    value, _ = monotone_success(pts, check)
    failing = [i for i, v in enumerate(value) if v < thr]
    if not failing:
        return GridKnee("above_range", None, bound_cps=thr * trial_rate(pts[-1]))
    i = failing[0]
    if i == 0:
        return GridKnee("below_range", None, bound_cps=trial_rate(pts[0]))
    near = pts[i - 1:i + 1]
    if sum(p.n for p in near) < 2 * MIN_SIDE:
        near = pts[max(0, i - 2):i + 2]
    runs = [(math.log(p.load), r) for p in near for r in p.runs]
    xs = [x for x, _ in runs]
    crossings = {c: logistic_crossing(xs, [r[f"{c}committed"] for _, r in runs], [trials(r, c) for _, r in runs], thr)
                 for c in check}
    center = (math.log(pts[i - 1].load) + math.log(pts[i].load)) / 2
    fit = Fit(center, runs, crossings)
    knee, low, high = fit.knee()
    reading = read_crossing(knee, low, high, pts[0].load, pts[-1].load)
    if reading.status == "ok":
        return GridKnee("ok", fit, knee, low, high)
    return GridKnee(reading.status, fit, bound_cps=reading.bound_cps(fit.trial_share(), thr), reason=reading.reason)
