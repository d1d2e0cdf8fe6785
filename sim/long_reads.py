"""The law of a long read, tabulated so that the model draws it once (docs/MODEL.md, "Long reads").

A long read is n requests of one latency distribution: one after another (a validation's manifest lists, a log's
entries, a LIST's pages), its time their sum; or all at once on n lanes, its time their max (on fewer lanes than
requests, `sim.model.io` draws its makespan lane by lane, each lane's first epochs one sum from this table). Drawn request by
request it costs n draws; here its law is tabulated once per distribution and the model draws it from one
uniform. Reads of at most `EXACT_MAX` requests stay request by request (their results as before, bit for bit).

- The sum S_n: the law of one request discretized on `GRID` points (each mass split between its two grid points so
  that the mean is kept), then S_2, S_4, ... by FFT self-convolution and S_3, S_6, ... by one more convolution; each
  level trimmed to where its mass is (1e-12 either side) and put back on `GRID` points. Tabulated at
  n = 2, 3, ..., 32 (S_n = S_(n-1) + S_1), 48, 64, 96, ... up to `SUM_COUNT_LAST`, as the quantiles of (S_n - n mean) / (sqrt(n) sd) on a logit
  grid of u; between two tabulated counts the standardized quantile is interpolated linearly in 1 / sqrt(n) (its
  Edgeworth expansion's first term), past the last towards the normal's (n = infinity).
- The max of n: one request's quantile at u^(1 / n), from the same logit grid.
The errors against the exact sum of draws: benchmarks/long_reads.py, docs/MODEL.md "Long reads".
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import math
import os
from pathlib import Path

import numpy as np

from .results_io import atomic_write_bytes

#: reads of at most this many requests are drawn request by request
EXACT_MAX = 32
#: the quantile grid: u = 1 / (1 + exp(-x)), x uniform on [-LOGIT_HALF_RANGE, LOGIT_HALF_RANGE] (u from 2.3e-16
#: to 1 - 2.3e-16, both doubles; a uniform draw beyond, 2^-53 at either end, takes the end column), QUANTILES points
LOGIT_HALF_RANGE = 36.0
QUANTILES = 2049
#: the flat table (`Model.lr`): HEADER scalars (one request's mean, sd and least value), then one row of
#: QUANTILES standardized quantiles per tabulated count (`Model.lr_n`), the normal's row, one request's row
HEADER = 3
H_MEAN, H_SD, H_MIN = 0, 1, 2
#: points of a discretized law
GRID = 1 << 14
#: the largest count tabulated (past it, towards the normal's row)
SUM_COUNT_LAST = 1 << 20
#: one request's law is discretized between these quantiles (the mass beyond goes to the ends): the mean left
#: out is below 1e-6 of it up to sigma 2 (a lognormal's E[X; X > q] / E[X] = Phi(sigma - z_q))
_LOW_TAIL, _HIGH_TAIL = 1e-12, 1e-10
#: each sum is trimmed to where its mass is: this much left out either side (FFT round-off lies below it)
_TRIM = 1e-12


def logit_grid() -> np.ndarray:
    """The u of each quantile column."""
    from scipy.special import expit
    return expit(np.linspace(-LOGIT_HALF_RANGE, LOGIT_HALF_RANGE, QUANTILES))


def sum_counts(last: int = SUM_COUNT_LAST) -> list[int]:
    """The tabulated counts: every n from 2 to EXACT_MAX (a long read on lanes draws each lane's first epochs as one
    sum), then 2^i and 3 x 2^(i-1) up to `last`."""
    out = list(range(2, EXACT_MAX + 1))
    p = EXACT_MAX
    while p <= last:
        out += [c for c in (p, p * 3 // 2) if c <= last]
        p *= 2
    return sorted(set(out))


class _Law:
    """A law on the grid lo + j h, j < len(p): mass p[j] at each point."""
    __slots__ = ("lo", "h", "p")

    def __init__(self, lo: float, h: float, p: np.ndarray):
        self.lo, self.h, self.p = lo, h, p

    def points(self) -> np.ndarray:
        return self.lo + np.arange(len(self.p)) * self.h

    def moments(self) -> tuple[float, float]:
        """Mean and sd, summed exactly (`math.fsum`; a BLAS dot's order depends on the CPU)."""
        x = self.points()
        mean = math.fsum(self.p * x)
        return mean, math.sqrt(max(math.fsum(self.p * (x - mean) ** 2), 0.0))

    def quantiles(self, u: np.ndarray) -> np.ndarray:
        """Each point's mass spread evenly over its cell, so that the quantiles are continuous in u."""
        edges = self.lo - self.h / 2 + np.arange(len(self.p) + 1) * self.h
        cdf = np.concatenate([[0.0], np.cumsum(self.p)])
        cdf[-1] = 1.0
        rising = np.concatenate([[True], np.diff(cdf) > 0])
        return np.interp(u, cdf[rising], edges[rising])


def _onto(x: np.ndarray, mass: np.ndarray, lo: float, h: float) -> _Law:
    """Masses at x, each split between its two grid points lo + j h in proportion, so that the mean is kept."""
    at = (x - lo) / h
    j = np.clip(np.floor(at).astype(np.int64), 0, GRID - 2)
    w = np.clip(at - j, 0.0, 1.0)
    p = np.bincount(j, mass * (1 - w), minlength=GRID) + np.bincount(j + 1, mass * w, minlength=GRID)
    return _Law(lo, h, p[:GRID])


def _one(dist) -> _Law:
    """One request's law on the grid: the masses between sub-grid edges (8 to a cell) at their midpoints."""
    lo, hi = (float(q) for q in dist.ppf(np.array([_LOW_TAIL, 1.0 - _HIGH_TAIL])))
    h = (hi - lo) / (GRID - 1) if hi > lo else max(abs(hi), 1.0) / GRID
    sub = 8
    edges = lo - h / 2 + np.arange(GRID * sub + 1) * (h / sub)
    cdf = dist.cdf(edges)
    cdf[0], cdf[-1] = 0.0, 1.0
    return _onto((edges[:-1] + edges[1:]) / 2, np.diff(cdf), lo, h)


def _sum(a: _Law, b: _Law) -> _Law:
    """The law of A + B (independent): one FFT convolution on the coarser grid, trimmed and put on GRID points."""
    h = max(a.h, b.h)
    a, b = (_onto(d.points(), d.p, d.lo, h) if d.h != h else d for d in (a, b))
    size = 2 * GRID
    c = np.fft.irfft(np.fft.rfft(a.p, size) * np.fft.rfft(b.p, size), size)[: 2 * GRID - 1]
    c[c < c.max() * 1e-14] = 0.0    # round-off, not mass
    c /= math.fsum(c)
    cum = np.cumsum(c)
    first = max(int(np.searchsorted(cum, _TRIM)) - 1, 0)
    last = min(int(np.searchsorted(cum, 1.0 - _TRIM)) + 1, len(c) - 1)
    lo = a.lo + b.lo
    x = lo + np.arange(first, last + 1) * h
    return _onto(x, c[first:last + 1], x[0], max((x[-1] - x[0]) / (GRID - 1), h))


@functools.lru_cache(maxsize=16)
def table(dist) -> tuple[np.ndarray, np.ndarray]:
    """The long-read table of `dist` (a `sim.latency` distribution with `cdf`, `ppf` and `min_ms`): the tabulated
    counts and the flat table (`HEADER`, `QUANTILES`). Kept per process and on disk (`cache_dir`): a
    distribution's table is the same in every run, and building it (about 0.2 s, and scipy's import) would
    double a light run's time."""
    path = cache_dir() / f"{_key(dist)}.npz"
    try:
        with np.load(path) as f:
            return f["counts"], f["flat"]
    except (OSError, ValueError, KeyError):
        pass
    counts, flat = _built(dist)
    try:
        buf = io.BytesIO()
        np.savez(buf, counts=counts, flat=flat)
        atomic_write_bytes(path, buf.getvalue())
    except OSError:   # a read-only cache: build it each time
        pass
    return counts, flat


def cache_dir() -> Path:
    """Where built tables are kept: $SIM_CACHE_DIR, else $XDG_CACHE_HOME/sim (~/.cache/sim), then long_reads/."""
    root = os.environ.get("SIM_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sim"
    return Path(root) / "long_reads"


#: bump when the tables' construction changes (their files are keyed by it)
TABLE_VERSION = 2


def _key(dist) -> str:
    """A table's file name: the distribution, how tables are built, and the numpy and scipy that build them (the
    table is the same bits on every machine with those versions: IEEE arithmetic, libm, exact sums, pocketfft)."""
    import scipy
    what = [repr(dist), TABLE_VERSION, EXACT_MAX, LOGIT_HALF_RANGE, QUANTILES, GRID, SUM_COUNT_LAST, _LOW_TAIL,
            _HIGH_TAIL, _TRIM, np.__version__, scipy.__version__]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:24]


def _built(dist) -> tuple[np.ndarray, np.ndarray]:
    """The table, built (see the module's docstring)."""
    from scipy.special import ndtri
    one = _one(dist)
    mean, sd = one.moments()
    counts = sum_counts()
    laws = {1: one}
    for n in range(2, EXACT_MAX + 1):               # S_n = S_(n-1) + S_1
        laws[n] = _sum(laws[n - 1], one)
    p = EXACT_MAX
    while 2 * p <= counts[-1]:                      # then by doubling
        laws[2 * p] = _sum(laws[p], laws[p])
        p *= 2
    u = logit_grid()
    rows = []
    for n in counts:
        law = laws[n] if n in laws else _sum(laws[2 * n // 3], laws[n // 3])
        rows.append((law.quantiles(u) - n * mean) / (math.sqrt(n) * sd))
    rows.append(ndtri(u))                         # n = infinity
    rows.append(np.maximum(dist.ppf(u), dist.min_ms))   # one request, for the max of n
    flat = np.concatenate([np.array([mean, sd, dist.min_ms])] + rows)
    return np.array(counts, dtype=np.int64), flat.astype(np.float64)
