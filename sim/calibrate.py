"""Fitting request latencies measured at one writer to the measured profile set's form (`sim calibrate`).

Each request kind's latency is `fixed_ms + LogNormal(median_ms, sigma)` (docs/model/storage-providers.md); a sized
kind's (the PUT) median grows with its body, `base_ms + ms_per_mib * MiB`. The fit is maximum likelihood with the
fastest 1 % of a kind's samples censored: each of them counts as "at most the sample's 1st percentile", not by its
value. That keeps the maximum-likelihood fit's precision (on samples drawn from the form, its fixed part's spread
is up to 8 times smaller than a quantile-matching fit's, its mean closer: docs/decisions.md) and removes the
three-parameter lognormal's flaw, a likelihood that grows without bound as the fixed part nears the sample's
minimum, and its dependence on the fastest few samples. Pure functions of arrays: numpy and scipy only, nothing of
the model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, NamedTuple

import numpy as np
from scipy.optimize import brentq, minimize
from scipy.special import log_ndtr, ndtr, ndtri

#: the provider file's request kinds (`providers/*.yaml`); any other kind is a catalog's (a database round trip)
STORAGE_KINDS = ("head", "get", "put", "cas", "list", "delete")
#: kinds whose median grows with the request's body (`put: {base_ms, ms_per_mib}`)
SIZED_KINDS = ("put",)
#: fewer samples than this and a kind is not fitted (three parameters, one percent censored)
MIN_SAMPLES = 30
#: the share of a kind's fastest samples counted as censored
CENSORED_SHARE = 0.01
#: a sized kind's `ms_per_mib` is fitted only if its bodies span at least this much (else it cannot be told from
#: the lognormal's spread)
MIN_SIZE_SPAN_BYTES = 1024 * 1024
#: the percentiles `compare` reports
PERCENTILES = (5, 25, 50, 75, 90, 95, 99)
MIB = 1024 * 1024


class CalibrationError(ValueError):
    """Samples that cannot be fitted (too few, not positive); the message is one line."""


class Samples(NamedTuple):
    """One request kind's measurements: latencies (ms) and, for a sized kind, each request's body (bytes)."""
    latency_ms: np.ndarray
    size_bytes: np.ndarray | None = None


@dataclass(frozen=True)
class Fit:
    """One kind's fitted profile. `median_ms` is the lognormal's median; a sized kind's at a body of 0 bytes (the
    provider file's `base_ms`), to which `ms_per_mib` adds. `ms_per_mib_source`: `fitted`, `given` (held at the
    caller's value), `size-blind` (the bodies span less than MIN_SIZE_SPAN_BYTES: 0), or '' for an unsized kind."""
    kind: str
    n: int
    fixed_ms: float
    median_ms: float
    sigma: float
    ms_per_mib: float | None = None
    ms_per_mib_source: str = ""
    censored_below_ms: float = 0.0

    def rounded(self) -> Fit:
        """The fit as a provider file writes it: ms to 3 decimals (4 significant digits below 1 ms), sigma to 3."""
        keep = lambda x: None if x is None else _round_ms(x)   # noqa: E731
        return replace(self, fixed_ms=keep(self.fixed_ms), median_ms=keep(self.median_ms),
                       sigma=round(self.sigma, 3), ms_per_mib=keep(self.ms_per_mib))

    def medians_ms(self, size_bytes: np.ndarray | None) -> np.ndarray | float:
        """The lognormal's median of each request (a sized kind's grows with its body)."""
        if self.ms_per_mib is None or size_bytes is None:
            return self.median_ms
        return self.median_ms + self.ms_per_mib * np.asarray(size_bytes, dtype=np.float64) / MIB


def _round_ms(x: float) -> float:
    return round(x, 3) if abs(x) >= 1 or x == 0 else float(f"{x:.4g}")


def _checked(kind: str, latency_ms, size_bytes) -> tuple[np.ndarray, np.ndarray | None]:
    x = np.asarray(latency_ms, dtype=np.float64)
    if len(x) < MIN_SAMPLES:
        raise CalibrationError(f"kind {kind!r} has {len(x)} samples; a fit needs at least {MIN_SAMPLES}")
    if not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise CalibrationError(f"kind {kind!r}: every latency must be a finite number > 0 ms")
    if size_bytes is None:
        return x, None
    s = np.asarray(size_bytes, dtype=np.float64)
    if s.shape != x.shape or not np.all(np.isfinite(s)) or np.any(s < 0):
        raise CalibrationError(f"kind {kind!r}: every request needs a body size >= 0 bytes, one per latency")
    return x, s


def fit_kind(kind: str, latency_ms, size_bytes=None, ms_per_mib: float | None = None) -> Fit:
    """Fit one kind's samples. A sized kind (`SIZED_KINDS`) with `size_bytes` spanning MIN_SIZE_SPAN_BYTES gets
    its `ms_per_mib` fitted, unless `ms_per_mib` is given (then held at it); with narrower bodies or none it is
    `ms_per_mib` if given, else 0 (size-blind). Other kinds ignore sizes."""
    sized = kind in SIZED_KINDS
    x, s = _checked(kind, latency_ms, size_bytes if sized else None)
    source = ""
    if sized:
        spans = s is not None and float(s.max() - s.min()) >= MIN_SIZE_SPAN_BYTES
        source = "given" if ms_per_mib is not None else "fitted" if spans else "size-blind"
        if ms_per_mib is None and not spans:
            ms_per_mib = 0.0
        if s is None:
            s = np.zeros_like(x)
    cut = float(np.quantile(x, CENSORED_SHARE))
    fixed, median, sigma, slope = _censored_mle(x, s if sized else None, cut,
                                                ms_per_mib if source != "fitted" else None)
    return Fit(kind, len(x), fixed, median, sigma, slope if sized else None, source, cut)


def fit_samples(samples: Mapping[str, Samples], ms_per_mib: float | None = None) -> dict[str, Fit]:
    """`fit_kind` of every kind, in the mapping's order."""
    return {kind: fit_kind(kind, s.latency_ms, s.size_bytes, ms_per_mib) for kind, s in samples.items()}


def _nll_terms(tau, log_m, sigma, inner, lo_count, cut, lo_log_m):
    """Minus the log-likelihood: the uncensored samples' shifted-lognormal densities (log-medians `log_m`, one a
    sample or one for all) and the censored samples' probability of being at most `cut`."""
    y = np.log(inner - tau)
    z = (y - log_m) / sigma
    ll = -np.sum(y) - len(inner) * math.log(sigma) - 0.5 * float(np.sum(z * z))   # not np.dot: BLAS (below)
    zc = (math.log(cut - tau) - lo_log_m) / sigma
    ll += float(np.sum(log_ndtr(zc))) if np.ndim(zc) else lo_count * float(log_ndtr(zc))
    return -ll


#: the searched parameters' bounds besides the gap's: the median's log (1e-9 to 1e9 ms), sigma's log, ms per MiB's log
_BOUNDS = [(-20.7, 20.7), (-9.0, 3.0), (-20.0, 12.0)]


def _censored_mle(x: np.ndarray, s: np.ndarray | None, cut: float, held_slope: float | None):
    """(fixed, median at 0 bytes, sigma, ms_per_mib) maximising the censored likelihood, from several starts.
    Parameters searched: the log of the gap between the fixed part and `cut` (from 1e-12 of `cut` to `cut`, a
    fixed part of 0: a shift of the samples leaves it, and the search, as they were), the median's log, sigma's
    log, and a sized kind's ms per MiB (its log; unless held)."""
    inner_mask = x > cut
    inner, lo_count = x[inner_mask], int(np.sum(~inner_mask))
    mib = None if s is None else s / MIB
    inner_mib, lo_mib = (None, None) if mib is None else (mib[inner_mask], mib[~inner_mask])
    free_slope = mib is not None and held_slope is None

    def unpack(v):
        tau = max(cut - math.exp(v[0]), 0.0)
        slope = (math.exp(v[3]) if free_slope else held_slope) if mib is not None else None
        return tau, math.exp(v[1]), math.exp(v[2]), slope

    def nll(v):
        tau, median, sigma, slope = unpack(v)
        if slope is None:
            return _nll_terms(tau, math.log(median), sigma, inner, lo_count, cut, math.log(median))
        return _nll_terms(tau, np.log(median + slope * inner_mib), sigma, inner, lo_count, cut,
                          np.log(median + slope * lo_mib))

    bounds = [(math.log(cut) - 27.6, math.log(cut))] + _BOUNDS[:3 if free_slope else 2]
    # Nelder-Mead, not a gradient method: scipy's L-BFGS-B calls BLAS, whose threads made a fit 15x slower on a
    # busy machine (2.8 s against 0.18 s with OPENBLAS_NUM_THREADS=1, measured)
    best = min((minimize(nll, np.clip(v0, *np.transpose(bounds)), method="Nelder-Mead", bounds=bounds,
                         options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 5000})
                for v0 in _starts(inner, cut, inner_mib, free_slope, held_slope)), key=lambda r: r.fun)
    return unpack(best.x)


def _starts(inner: np.ndarray, cut: float, inner_mib, free_slope: bool, held_slope: float | None) -> list:
    """Starting points: the fixed part's gap below `cut` at 5 %, 50 % and 200 % of the samples' median's distance
    above it (at most `cut`: a fixed part of 0), each with the lognormal that the samples above the cut imply at
    that shift (a sized kind's: its smallest fifth of bodies, brought to 0 bytes by a slope from the medians of its
    smallest and largest fifths)."""
    slope, at_zero = held_slope or 0.0, inner
    if inner_mib is not None:
        lo, hi = np.quantile(inner_mib, [0.2, 0.8])
        small, large = inner_mib <= lo, inner_mib >= hi
        if free_slope:
            gap = float(np.median(inner_mib[large]) - np.median(inner_mib[small]))
            slope = max(float(np.median(inner[large]) - np.median(inner[small])) / max(gap, 1e-9), 1e-3)
        at_zero = inner[small] - slope * inner_mib[small]
    spread = max(float(np.median(at_zero)) - cut, 1e-6 * cut)
    out = []
    for share in (0.05, 0.5, 2.0):
        gap = min(share * spread, cut)
        y = np.log(np.maximum(at_zero - (cut - gap), 1e-12 * cut))
        q25, q50, q75 = np.quantile(y, [0.25, 0.5, 0.75])
        v = [math.log(gap), float(q50), math.log(max((q75 - q25) / 1.349, 1e-3))]
        out.append(v + [math.log(slope)] if free_slope else v)
    return out


def fitted_quantiles(fit: Fit, ps, size_bytes=None) -> np.ndarray:
    """The fitted distribution's quantiles at probabilities `ps`; a sized kind's over the bodies given (the mixture
    of each body's distribution, as the samples mix them)."""
    ps = np.asarray(ps, dtype=np.float64)
    medians = fit.medians_ms(size_bytes)
    if np.ndim(medians) == 0:
        return fit.fixed_ms + medians * np.exp(fit.sigma * ndtri(ps))
    log_m = np.log(medians)

    def cdf(q):
        return float(np.mean(ndtr((math.log(q - fit.fixed_ms) - log_m) / fit.sigma))) if q > fit.fixed_ms else 0.0

    lo = fit.fixed_ms + float(np.min(medians)) * math.exp(fit.sigma * ndtri(float(ps.min())))
    hi = fit.fixed_ms + float(np.max(medians)) * math.exp(fit.sigma * ndtri(float(ps.max())))
    return np.array([brentq(lambda q, p=p: cdf(q) - p, lo * (1 - 1e-9), hi * (1 + 1e-9), xtol=1e-12, rtol=1e-12)
                     for p in ps])


def fitted_mean_ms(fit: Fit, size_bytes=None) -> float:
    """The fitted distribution's mean (a sized kind's over the bodies given)."""
    return fit.fixed_ms + float(np.mean(fit.medians_ms(size_bytes))) * math.exp(fit.sigma ** 2 / 2)


def compare(fit: Fit, latency_ms, size_bytes=None, percentiles=PERCENTILES) -> list[tuple[str, float, float, float]]:
    """Per percentile (then the mean): the samples' value, the fitted distribution's, and its relative error."""
    x = np.asarray(latency_ms, dtype=np.float64)
    sizes = size_bytes if fit.ms_per_mib is not None else None
    sample = np.percentile(x, percentiles)
    model = fitted_quantiles(fit, np.asarray(percentiles) / 100.0, sizes)
    rows = [(f"p{p}", float(a), float(b), float(b / a - 1)) for p, a, b in zip(percentiles, sample, model)]
    mean, fitted = float(x.mean()), fitted_mean_ms(fit, sizes)
    return rows + [("mean", mean, fitted, fitted / mean - 1)]
