"""The grid knee: the knee read off a grid sweep's results (load points fixed in advance, replications at each),
by the search's own fit (`fit.logistic_crossing`) so a grid and `sim knee` answer the same question. The bracket
is where the monotone success over the points (`full.monotone_success`, success over window arrivals) first
falls below the threshold; the fit takes the runs of the bracket's two points, and of the next point on each
side too when those are fewer than 2 * MIN_SIDE runs (a grid of one replication), so the crossing is
interpolated where the grid brackets it rather than bent by points far from it (gcp's flat-then-cliff curve is
not logistic over a decade); the knee is the crossing with its Fieller 95 % interval. A grid whose lightest point
already fails is `below_range`, one whose heaviest point still passes `above_range` (no knee: it lies outside the
loads run)."""
from __future__ import annotations

import math

from .fit import MIN_SIDE, Fit, logistic_crossing
from .full import monotone_success
from .points import Point, by_rate


def grid_knee(points: list[Point], thr: float, check: tuple[str, ...]) -> tuple[str, Fit | None]:
    """(status, fit): "ok" with the fit near the crossing (`Fit.knee()`: NaN when the fitted success does not
    fall with load), or "below_range" / "above_range" / "no_runs" with None."""
    pts = by_rate({p.load: p for p in points})
    if not pts:
        return "no_runs", None
    value, _ = monotone_success(pts, check)
    failing = [i for i, v in enumerate(value) if v < thr]
    if not failing:
        return "above_range", None
    i = failing[0]
    if i == 0:
        return "below_range", None
    near = pts[i - 1:i + 1]
    if sum(p.n for p in near) < 2 * MIN_SIDE:
        near = pts[max(0, i - 2):i + 2]
    runs = [(math.log(p.load), r) for p in near for r in p.runs]
    xs = [x for x, _ in runs]
    crossings = {c: logistic_crossing(xs, [r[f"{c}committed"] for _, r in runs],
                                      [r[f"{c}arrived"] for _, r in runs], thr) for c in check}
    center = (math.log(pts[i - 1].load) + math.log(pts[i].load)) / 2
    return "ok", Fit(center, runs, crossings)
