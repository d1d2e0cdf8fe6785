"""Latency distributions of one configuration (docs/MODEL.md, "Storage providers" and "Catalog").

Sources are drawn in batches of `BATCH` (`sim.model.build`), so a draw inside the model is an array read.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .rng import BATCH  # noqa: F401  (the sources' batch, declared with them)


def _phi(x: float) -> float:
    """The standard normal CDF (scipy's `norm.cdf`, without importing scipy for one mean)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@njit(cache=True, nogil=True)
def _lognormal_into(rng, sigma, median, floor, fixed, out):
    """`out[:] = np.maximum(fixed + median * np.exp(sigma * rng.standard_normal(len(out))), floor)`, leaving `rng` in the
    same state. numba's Generator runs numpy's ziggurat on the same bit generator, ~2.5x faster than numpy's own
    fill (7.5 vs 19 ns a draw, measured; VO validation draws up to a billion GET latencies in one 4c run). exp is
    libm's scalar `exp`, never numpy's: numpy dispatches float64 exp to its own AVX-512 kernel where the CPU has
    one and to libm elsewhere, and the two differ in the last bit, so results would depend on the machine."""
    for i in range(out.shape[0]):
        v = fixed + median * math.exp(sigma * rng.standard_normal())
        out[i] = v if v >= floor else floor


@njit(cache=True, nogil=True)
def _log_into(x, out):
    """`out[:] = log(x)` with libm's scalar log (numpy's own dispatches on the CPU, see `_lognormal_into`)."""
    for i in range(x.shape[0]):
        out[i] = math.log(x[i]) if x[i] > 0.0 else -math.inf


@njit(cache=True, nogil=True)
def _exp_into(x, out):
    """`out[:] = exp(x)` with libm's scalar exp."""
    for i in range(x.shape[0]):
        out[i] = math.exp(x[i])


@dataclass(frozen=True)
class LogNormal:
    """fixed_ms + LogNormal(mu=ln(median_ms), sigma), clamped below at floor_ms (mass below the floor lands on it).
    sigma = 0 is a constant. `fixed_ms` is a request's fixed part (the measured profile set's: a fixed floor plus a
    lognormal reproduces one writer's whole loop where a lognormal alone cannot; docs/MODEL.md, "Profile sets");
    0 adds nothing, to the bit."""
    median_ms: float
    sigma: float = 0.0
    floor_ms: float = 0.0
    fixed_ms: float = 0.0

    @property
    def is_constant(self) -> bool:
        return self.sigma == 0.0

    def mean_ms(self) -> float:
        """E[max(X, floor)], the analytic mean the low-load test holds the simulator against."""
        c = self.fixed_ms
        m, s, a = self.median_ms, self.sigma, self.floor_ms - c   # the floor on the lognormal part
        if s == 0:
            return c + max(m, a)
        mu = math.log(m)
        if a <= 0:
            return c + math.exp(mu + s * s / 2)
        la = math.log(a)
        above = math.exp(mu + s * s / 2) * _phi((mu + s * s - la) / s)
        return c + above + a * _phi((la - mu) / s)

    @property
    def min_ms(self) -> float:
        """The least value a draw takes."""
        if self.sigma == 0:
            return max(self.fixed_ms + self.median_ms, self.floor_ms)
        return max(self.fixed_ms, self.floor_ms)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """P(X <= x), elementwise (`sim.long_reads` tabulates sums of draws from it). Only IEEE arithmetic, libm
        and scipy's scalar normal CDF: the same bits on every machine."""
        from scipy.special import ndtr
        x = np.ascontiguousarray(x, dtype=np.float64)
        if self.sigma == 0:
            return (x >= self.min_ms).astype(np.float64)
        z = np.empty_like(x)
        _log_into(x - self.fixed_ms if self.fixed_ms else x, z)
        z = (z - math.log(self.median_ms)) / self.sigma
        return np.where(x < self.floor_ms, 0.0, ndtr(z))

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """The u-quantile, elementwise (as `cdf`, the same bits on every machine)."""
        from scipy.special import ndtri
        u = np.ascontiguousarray(u, dtype=np.float64)
        if self.sigma == 0:
            return np.full(u.shape, self.min_ms)
        x = np.empty_like(u)
        _exp_into(self.sigma * ndtri(u), x)
        return np.maximum(self.fixed_ms + self.median_ms * x, self.floor_ms)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.sigma == 0:
            return np.full(n, self.min_ms)
        x = np.empty(n, dtype=np.float64)
        _lognormal_into(rng, self.sigma, self.median_ms, self.floor_ms, self.fixed_ms, x)
        return x


# `_last_checkpoint`: version, size, sizeInBytes, numOfAddFiles and the checkpoint's schema (est.)
LAST_CHECKPOINT_BYTES = 1024


@dataclass(frozen=True)
class LatencyModel:
    """Every I/O latency of one configuration: storage GET and PUTs, catalog read and CAS (for the log protocol:
    the LIST of a table's log and the put-if-absent of an entry), a checkpoint's PUT."""
    get: LogNormal
    head: LogNormal               # the microbenchmark's HEAD (a profile without one: its GET)
    put_manifest_list: LogNormal
    put_table_metadata: LogNormal
    catalog_read: LogNormal
    catalog_cas: LogNormal
    put_checkpoint: LogNormal
    put_version_hint: LogNormal   # version files: version-hint.text, a few bytes (the PUT's base latency)
    put_last_checkpoint: LogNormal   # log fidelity: `_last_checkpoint`, a small JSON object
    lock: LogNormal               # a lock service's round trip (a poll; a storage lock's: the provider's GET)
    lock_write: LogNormal         # ... (a request, a release; a storage lock's: the provider's conditional PUT)
    delete: LogNormal             # an object DELETE: the provider's `delete` profile, else a GET draw (a request
                                  # with no body; no shipped provider has one)
    put_timeline: LogNormal       # Hudi: a timeline instant, heartbeat or metadata-table file (the PUT's base latency)
    log_store: LogNormal          # Delta's DynamoDB log store: a DynamoDB round trip (its conditional PutItem is
                                  # catalog_cas)
    list: LogNormal               # a LIST request (the profile's own, else a GET): PyArrow's check of a name
    server_load: LogNormal        # a REST server with local steps (`catalog.server.load_latency`): its own time per
    server_commit: LogNormal      # load, and per commit from its check to its CAS (`commit_latency`)
    client_work: LogNormal        # the client's own time per attempt: its factor, median 1 (`commit.client_work.sigma`)


def _spec(latency) -> LogNormal:
    """`spec` of a latency a config may leave out (a REST server's local steps): none given, 0."""
    return LogNormal(0.0, 0.0) if latency is None else spec(latency)


def spec(latency) -> LogNormal:
    """A service's lognormal latency (`catalog.latency`, `lock.latency`, `log_store.latency`: a `LatencySpec`),
    with its fixed part if it has one (none: 0, which adds nothing, to the bit), no floor."""
    return LogNormal(latency.median_ms, latency.sigma, 0.0, latency.fixed_ms or 0.0)


def latency_model(cfg) -> LatencyModel:
    """MODEL.md 'Storage providers', 'Catalog' and 'The log protocol': the storage backend reads and CASes the
    catalog in the provider (the log protocol LISTs with the provider's `list` profile, else a GET, and creates
    entries with its CAS); the service backend has its own latency (constant, or lognormal without floor). The
    provider's profile is that of the config's set (`storage.profile_set`)."""
    from .providers import profile_of
    prof = profile_of(cfg)
    floor = prof.min_latency_ms

    def request(median_ms, sigma, fixed_ms):    # a profile's request: its lognormal and fixed part, the floor
        return LogNormal(median_ms, sigma, floor, fixed_ms or 0.0)

    get = request(prof.get_median_ms, prof.get_sigma, prof.get_fixed_ms)
    head = get if prof.head_median_ms is None else request(prof.head_median_ms, prof.head_sigma, prof.head_fixed_ms)
    delete = get if prof.delete_median_ms is None else request(prof.delete_median_ms, prof.delete_sigma,
                                                               prof.delete_fixed_ms)
    cas_profile = request(prof.cas_median_ms, prof.cas_sigma, prof.cas_fixed_ms)
    cat = cfg.catalog
    if cat.backend == "storage":
        read = get
        if cfg.commit.protocol == "log" and prof.list_median_ms is not None:
            read = request(prof.list_median_ms, prof.list_sigma, prof.list_fixed_ms)
        cas = cas_profile
    elif cat.latency is not None:
        read = cas = spec(cat.latency)
    else:
        read = cas = LogNormal(cat.latency_ms, 0.0)
    put = lambda size_bytes: request(prof.put_median_ms(size_bytes), prof.put_sigma, prof.put_fixed_ms)  # noqa: E731
    lk, ls = cfg.lock, cfg.log_store
    lock = spec(lk.latency) if lk.latency is not None else LogNormal(lk.latency_ms or 0.0, 0.0)
    lock_write = lock
    if lk.variant == "storage":   # Hudi's storage lock: a lock object in the provider
        lock, lock_write = get, cas_profile
    store = spec(ls.latency) if ls.latency is not None else LogNormal(ls.latency_ms or 0.0, 0.0)
    if ls.kind is not None:   # the entry's conditional PutItem is DynamoDB's
        cas = store
    return LatencyModel(
        get=get, head=head, put_manifest_list=put(cfg.io.manifest_list_bytes),
        put_table_metadata=put(cfg.io.table_metadata_bytes),
        catalog_read=read, catalog_cas=cas, put_checkpoint=put(cfg.commit.checkpoint_bytes or 0),
        put_version_hint=put(0), put_last_checkpoint=put(LAST_CHECKPOINT_BYTES), lock=lock, lock_write=lock_write,
        delete=delete, put_timeline=put(0), log_store=store,
        list=get if prof.list_median_ms is None else request(prof.list_median_ms, prof.list_sigma, prof.list_fixed_ms),
        server_load=_spec(cat.server.load_latency), server_commit=_spec(cat.server.commit_latency),
        client_work=LogNormal(1.0, cfg.commit.client_work.sigma))
