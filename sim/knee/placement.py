"""Where the next full-length run goes: walking to a full-length bracket of the crossing, narrowing it, then
around the fit's crossing.

The spread (how far new runs sit from the crossing) is the spec's (4 %), widened to at most 15 % until
`min_runs` runs there pin the slope (Fieller's g at most 0.25, by the fitted slope, dispersion and binomial
weight): S3's single table about 7 %, gcp's VO (50 transactions a run) 15 %. Each new run goes within a spread
of the crossing where it shrinks the crossing's delta-method variance most (a sequential c-optimal design; a run
where success is lower carries more binomial information), after runs on the side that has fewer than 2."""
from __future__ import annotations

import math

from scipy import special, stats

from .fit import MIN_SIDE, Fit
from .points import Point, log_crossing, trials
from .spec import KneeSpec

#: a probe moves by at most this factor at a time (growing to MOVE^2, MOVE^4 while on one side)
MOVE = 1.5
#: new runs sit far enough from the crossing that Fieller's g is at most this at `min_runs` runs (the interval
#: is then at most 1 / sqrt(1 - g) = 1.15x what a known slope would give), but at most MAX_SPREAD
SLOPE_G = 0.25
MAX_SPREAD = 0.15
#: where the next run may go, in spreads from the crossing
CANDIDATES = (-1.0, -0.5, 0.0, 0.5, 1.0)


def walk_target(pts: list[Point], down: bool, thr: float, spread: float, pilot_slope) -> float:
    """Where the full-length runs `pts` (slowest first), all on one side of the crossing (`down`: all failing),
    put it (arrivals/s): the secant through the two points nearest it; from a single point, a step of MOVE when
    its failure share is off the allowed one by more than 2x (a short pilot's slope says little about full runs
    that far out), else `pilot_slope()`, but at least a spread; the step from the nearest point may grow to
    MOVE^2 and MOVE^4 while the points stay on one side (gcp's short pilots sit 3x above its knee, where full
    runs collapse)."""
    side = pts if down else pts[::-1]           # nearest the crossing first
    e = side[0]
    limit = MOVE ** (2 ** min(len(side) - 1, 2))
    step = 1 + spread                           # at least a spread: a run on the crossing is not repeated
    lo_x, hi_x = (e.load / limit, e.load / step) if down else (e.load * step, e.load * limit)
    x = e.load / MOVE if down else e.load * MOVE
    if len(side) > 1:
        f = side[1]
        slope = (f.margin(thr) - e.margin(thr)) / math.log(f.load / e.load)
        if slope > 0:
            x = _along(e.load, -e.margin(thr) / slope, lo_x, hi_x)
    elif abs(e.margin(thr)) <= math.log(2):   # one full point near the threshold: the pilot's slope
        slope = pilot_slope()
        if slope > 0:
            x = _along(e.load, -e.margin(thr) / slope, lo_x, hi_x)
    return min(max(x, lo_x), hi_x)


def _along(load: float, log_step: float, lo_x: float, hi_x: float) -> float:
    """load x e^log_step, or the bound it passes: a flat secant (a collapsing curve's two points at nearly the
    same failure share) gives a step too large for a float, which the clamp would cut anyway."""
    if log_step >= math.log(hi_x / load):
        return hi_x
    if log_step <= math.log(lo_x / load):
        return lo_x
    return load * math.exp(log_step)


def narrow_target(lo: Point, hi: Point, probes: list[Point], thr: float, margin) -> float:
    """Where the next probe goes inside the full-length bracket (arrivals/s): log(failure share, by
    `margin(point)`) interpolated in log rate within the bracket's middle 70 %, bisected when the same end moved
    twice in a row."""
    last = [p.passes(thr) for p in probes[-2:]]
    if len(last) == 2 and last[0] == last[1] and lo in probes and hi in probes:
        return math.sqrt(lo.load * hi.load)
    return math.exp(log_crossing(lo, hi, thr, clip=0.15, margin=margin))


def spread_for(fit: Fit, lo: Point, hi: Point, spec: KneeSpec, check: tuple[str, ...]) -> float:
    """How far (relative) new runs sit from the crossing: far enough that `min_runs` runs there pin the
    slope (Fieller's g = t^2 var(slope) / slope^2 at most SLOPE_G, by the binding metric's fitted slope,
    dispersion and binomial weight at the threshold), at least `spread` and at most MAX_SPREAD. A kind
    with few transactions a run (gcp's VO: about 60) needs the widest; S3's single table about 7 %."""
    thr, m = spec.threshold, spec.min_runs
    c = fit.binding
    if c is not None and c.slope < 0:
        slope, phi, n = -c.slope, c.dispersion, c.arrived
    else:                                       # no fit yet: the bracket's secant, binomial
        k = max(check, key=lambda k: 1 - hi.checks[k][0])
        lg = [special.logit(min(max(p.checks[k][0], 1e-6), 1 - 1e-6)) for p in (lo, hi)]
        slope = (lg[0] - lg[1]) / math.log(hi.load / lo.load)
        phi, n = 1.0, min(sum(trials(r, k) for r in p.runs) / p.n for p in (lo, hi))
    if not slope > 0 or not n > 0:
        return spec.spread
    t = stats.t.ppf(0.975, max(m - 2, 1))
    d = t * math.sqrt(phi / (m * n * thr * (1 - thr) * SLOPE_G)) / slope
    return min(max(spec.spread, math.expm1(min(d, 1.0))), MAX_SPREAD)   # (a flat slope: d overflows expm1)


def next_log_rate(fit: Fit, spread: float, last: float) -> float:
    """Log rate of the next run: within a spread of the crossing, where it shrinks the binding crossing's
    delta-method variance most (a sequential c-optimal design: a run where success is lower carries more
    binomial information, a run far from the crossing pins the slope; gcp's VO, 50 transactions a run, is
    worth 7x more 15 % above its knee than 15 % below). The crossing is the fit's once it has MIN_SIDE runs
    on each side, else the monotone fit's, and kept within a spread of the window's center so the run
    lands in the window; while a side has fewer than MIN_SIDE runs, the run goes there (on a tie, away from
    `last`, the log rate of the last run)."""
    b, c = fit.binding, fit.center
    d = math.log1p(spread)
    x = min(max(b.x, c - d), c + d) if b is not None and b.inside else c
    below = sum(r < x for r, _ in fit.runs)
    above = sum(r > x for r, _ in fit.runs)
    if b is None or min(below, above) < MIN_SIDE:
        up = above < below or (above == below and last < x)
        return x + d if up else x - d
    return min((x + k * d for k in CANDIDATES), key=lambda z: b.variance_with(z, b.weight_at(z)))
