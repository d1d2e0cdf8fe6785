"""The random sources that keep a run's draws filled (docs/MODEL.md, "Randomness").

Every random source is its own stream, declared with what it draws in `sim.rng.SOURCES`. Sources are drawn in
batches with the distribution objects of `sim.latency` and `sim.workload`; the model reads them through cursors
(`sim.model.draws`). When a source could run short, the engine stops between two events and `Source.refill` keeps
the unconsumed tail, appends fresh draws from the same generator (numpy's float draws are concatenation-consistent,
so batch sizes never change the numbers) and the cursor rewinds; memory stays bounded whatever a run consumes.
Arrivals are drawn the same way, in chunks: their gaps, and each arrival's table (drawn with `integers`, always in
batches of BATCH, so the numbers are those of one long draw), operation and runtime. Nobody counts the arrivals up
front: the gaps end at the first `now + gap >= duration_ms`.
"""
from __future__ import annotations

import math

import numpy as np

from ..config import Config, operations_on, traced
from ..latency import BATCH, LogNormal, latency_model
from ..workload import (Constant, IsValidatedOverwrite, OperationMix, Partitions, StandardNormal, inter_arrival_dist,
                        TableChoice, runtime_dist, table_choice, table_dist, think_dist)
from .state import SRC_SOURCES, Op, Params

CHUNK = 1 << 20           # draws per refill of a source, at most (beyond what one event needs)
GROWTH = 8                # with nothing to project from, a refill draws this many times what the source held, up to
                          # CHUNK: a source that starts empty (a long read's uniforms) reaches CHUNK in 4 refills, not 10
MARGIN = 1.5              # a projected refill draws this much more than the run is expected to take (`Source.refill`)
LEAST_SHARE = 16          # ... and at least 1/16 of what the source gave so far (a run past its end, draining)
ARRIVAL_CHUNK = 1 << 16   # arrivals' tables, operations and runtimes drawn per refill, at most


class Uniform:
    """U(0, 1) draws (backoff jitter, real conflicts)."""
    is_constant = False

    def draw(self, rng, n):
        return rng.random(n)


class Source:
    """One random source: its distribution, its generator and a window of its draws (or its constant)."""

    def __init__(self, dist, rng, n0=0):
        self.dist = dist
        self.rng = rng
        self.const = bool(getattr(dist, "is_constant", False))
        if self.const:   # one draw, reused (step 0); the stream is never touched again
            self.values = np.ascontiguousarray(dist.draw(rng, 1), dtype=np.float64)
        else:
            self.values = self._draw(n0)
        self.drawn = len(self.values)   # values drawn from the stream so far

    @property
    def step(self) -> int:
        return 0 if self.const else 1

    def _draw(self, n: int) -> np.ndarray:
        n = max(BATCH, -(-n // BATCH) * BATCH)
        return np.ascontiguousarray(self.dist.draw(self.rng, n), dtype=np.float64)

    def used(self, cursor: int) -> int:
        """Values the run has taken so far (its cursor is at `cursor` in `values`)."""
        return self.drawn - (len(self.values) - cursor)

    def refill(self, cursor: int, need: int, share_left: float | None = None) -> np.ndarray:
        """Values from `cursor` on, with at least `need` of them; the caller rewinds its cursor to 0.

        `share_left`: the run's time to come over its time so far, if known. The draw is then at most what the run
        is expected to take at the rate it took so far (with a margin): sized by what the source held alone, a
        run's last refill drew up to 8 times what the run then used, a fifth of a heavy 4c run's draws (s3, 1 table,
        FA 0.5, 20 ms: 16.9 M drawn, 13.4 M used) and nearly three quarters of a lighter one's (10 tables, 100 ms:
        2.07 M, 0.55 M). A size, never the numbers: refills continue the same stream."""
        if self.const:
            return self.values
        tail = self.values[cursor:]
        more = GROWTH * len(self.values)
        if share_left is not None:
            used = self.used(cursor)
            more = min(more, max(int(MARGIN * used * share_left), used // LEAST_SHARE))
        fresh = self._draw(max(need - len(tail), min(CHUNK, max(more, BATCH))))
        self.drawn += len(fresh)
        self.values = np.concatenate([tail, fresh])
        return self.values


def expected_arrivals(cfg: Config) -> int:
    """A first guess of a run's arrivals (its transactions), to size its first draws and arrays; nothing more."""
    if traced(cfg):
        from ..trace.replay import expected_rows
        return expected_rows(cfg)
    w = cfg.workload.writers
    if w.count > 0:
        cycle = w.interval_ms if w.mode == "periodic" else w.think_ms + _uncontended_ms(cfg)
        n = w.count * cfg.duration_ms / max(cycle, 1e-3)
        return int(min(n if w.commits is None else min(n, w.count * w.commits), 1 << 40)) + w.count
    ia = cfg.workload.inter_arrival
    mean = ia.mean_ms if ia.distribution != "lognormal" else LogNormal(ia.median_ms, ia.sigma).mean_ms()
    return int(min(cfg.duration_ms / mean * 1.05, 1 << 40)) if mean > 0 else 1 << 40


def _uncontended_ms(cfg: Config) -> float:
    """A transaction's mean time from start to end with nothing to contend with: its reads, runtime, prepare
    and conditional write (the microbenchmark's: HEAD, read, conditional write)."""
    lat = latency_model(cfg)
    ends = lat.catalog_read.mean_ms() + lat.catalog_cas.mean_ms()
    if cfg.commit.shape == "object":
        return ends + lat.head.mean_ms()
    io = 2 * lat.get.mean_ms() + lat.put_manifest_list.mean_ms() + lat.put_table_metadata.mean_ms()
    return ends + lat.catalog_read.mean_ms() + runtime_dist(cfg.workload).mean_ms() + io


def sources_of(cfg: Config, p: Params, rng: dict, n_guess: int) -> list[Source]:
    """One Source per `Src`, its first draws sized by what the run is expected to consume (at most CHUNK)."""
    lat = latency_model(cfg)
    return [Source(_dist(s.draws, cfg, p, lat), rng[s.stream], min(s.first(p, n_guess), CHUNK)) for s in SRC_SOURCES]


def _dist(draws: str, cfg: Config, p: Params, lat):
    """The distribution a source's `draws` (`sim.rng.SOURCES`) names, for this run."""
    kind, _, name = draws.partition(".")
    if kind == "latency":
        return getattr(lat, name)
    if draws == "uniform":
        return Uniform()
    if draws == "workload.inter_arrival":   # writers start their own transactions: no gaps
        return Constant(math.inf) if p.writers else inter_arrival_dist(cfg.workload, cfg.duration_ms)
    if draws == "workload.think":
        return think_dist(cfg.workload.writers)
    if draws == "workload.job_runtime":
        return StandardNormal()
    raise ValueError(f"a model source draws {draws!r}: no such distribution")


class Arrivals:
    """The arrivals' own draws, chunk by chunk: table, operation, partitions and runtime of each arrival in order."""

    def __init__(self, cfg: Config, gap_dist, rng):
        w = cfg.workload
        self.tc = table_dist(w, gap_dist)   # bursts may be aimed at one table
        self.ops = operations_on(cfg)
        self.op = (OperationMix(w.operations, (Op.FA, Op.OVERWRITE, Op.ROW_DELTA)) if self.ops
                   else IsValidatedOverwrite(w.fast_append_ratio))
        self.parts = Partitions(w.operations.partitions or 1, w.operations.touches)
        self.rt = runtime_dist(w)
        self.rng_table, self.rng_op, self.rng_rt = rng["table"], rng["operation"], rng["runtime"]
        self.rng_parts = rng["partitions"]
        self.more = OtherTables(w.multi_table, table_choice(w), rng["tables"])
        self.rt_const = Source(self.rt, self.rng_rt).values[0] if getattr(self.rt, "is_constant", False) else None

    def draw(self, n: int) -> tuple[np.ndarray, ...]:
        """The next n (a multiple of BATCH) arrivals' tables, operations, partitions and runtimes, the tables each
        one's commit spans and the others (`OtherTables`)."""
        k = n // BATCH
        tables = np.concatenate([self.tc.draw(self.rng_table, BATCH) for _ in range(k)]).astype(np.int64)
        ops = np.concatenate([self.op.draw(self.rng_op, BATCH) for _ in range(k)]).astype(np.int64)
        parts = self.parts.draw(self.rng_parts, n) if self.ops else np.zeros(n, dtype=np.int64)
        if self.rt_const is not None:
            runtimes = np.full(n, self.rt_const)
        else:
            runtimes = np.ascontiguousarray(self.rt.draw(self.rng_rt, n), dtype=np.float64)
        return (tables, ops, parts, runtimes, *self.more.draw(tables))


class OtherTables:
    """Commits over several tables (`workload.multi_table`): each arrival's count k (fixed, or uniform on
    1..tables), and its k - 1 other tables, distinct and none its first, drawn by the table selection's weights one
    after another without replacement (the Gumbel top-k: the largest k - 1 of log p + Gumbel noise, in order)."""
    ROWS = 4096   # arrivals drawn at once (a row of noise per table each)

    def __init__(self, mt, choice: TableChoice, rng: np.random.Generator):
        self.k_max, self.uniform, self.rng = mt.tables, mt.distribution == "uniform", rng
        with np.errstate(divide="ignore"):
            self.log_p = np.log(choice.probabilities())

    def draw(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(k of each arrival, its others: n x (k_max - 1) table ids, -1 past its k - 1), flat."""
        n, K = len(tables), self.k_max
        if K == 1:
            return np.ones(n, dtype=np.int64), np.zeros(0, dtype=np.int64)
        k = self.rng.integers(1, K + 1, n) if self.uniform else np.full(n, K)
        more = np.empty((n, K - 1), dtype=np.int64)
        for lo in range(0, n, self.ROWS):
            rows = np.arange(lo, min(n, lo + self.ROWS))
            keys = self.log_p + self.rng.gumbel(size=(len(rows), len(self.log_p)))
            keys[np.arange(len(rows)), tables[rows]] = -np.inf
            more[rows] = np.argsort(-keys, axis=1, kind="stable")[:, :K - 1]
        more[np.arange(K - 1) >= (k - 1)[:, None]] = -1
        return k.astype(np.int64), more.reshape(-1)


def conflict_table(p: float, lo: int, hi: int) -> np.ndarray:
    """thr[lo:hi]: P(a real conflict among n snapshots) = 1 - (1 - p) ** n, in Python floats as ever."""
    return np.array([1.0 - (1.0 - p) ** n for n in range(lo, hi)], dtype=np.float64)
