"""Interval statistics the knee search reports with: a proportion's (Wilson), a mean's over replications
(Student-t), a ratio's (Fieller), a least-squares line's value at a point."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats


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
