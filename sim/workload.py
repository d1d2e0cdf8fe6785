"""The workload: arrival gaps (or writers' think times), table choice, operation and runtime of each transaction."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import Operations, Workload
from .latency import LogNormal


@dataclass(frozen=True)
class Exponential:
    mean_ms: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.exponential(self.mean_ms, n)


@dataclass(frozen=True)
class Constant:
    value: float
    is_constant = True

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.full(n, self.value)


@dataclass(frozen=True)
class TableChoice:
    """Table ids 0..n-1; id k-1 has popularity rank k. Zipf: P(rank k) ~ k^-alpha."""
    num_tables: int
    zipf_alpha: float | None = None

    def probabilities(self) -> np.ndarray:
        if self.zipf_alpha is None:
            return np.full(self.num_tables, 1.0 / self.num_tables)
        w = np.arange(1, self.num_tables + 1, dtype=float) ** -self.zipf_alpha
        return w / w.sum()

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.zipf_alpha is None:
            return rng.integers(0, self.num_tables, n)
        return rng.choice(self.num_tables, size=n, p=self.probabilities())


class StandardNormal:
    """N(0, 1) draws (a maintenance job's run time: its job's lognormal scales them)."""

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.standard_normal(n)


@dataclass(frozen=True)
class OperationMix:
    """Each arrival's operation, as the model's codes `codes` (append, overwrite, row delta): an overwrite with
    probability overwrite_share, a row delta with row_delta_share, else an append (a FastAppend)."""
    operations: Operations
    codes: tuple[int, int, int]

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        u = rng.random(n)
        ow, rd = self.operations.overwrite_share, self.operations.row_delta_share
        append, overwrite, row_delta = self.codes
        return np.where(u < ow, overwrite, np.where(u < ow + rd, row_delta, append))


@dataclass(frozen=True)
class Partitions:
    """The partitions each arrival touches, one bit each: `touches` distinct of `partitions`, uniformly."""
    partitions: int
    touches: int

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.touches >= self.partitions:
            return np.full(n, (1 << self.partitions) - 1, dtype=np.int64)
        picked = np.argsort(rng.random((n, self.partitions)), axis=1)[:, :self.touches]
        return np.bitwise_or.reduce(np.left_shift(np.int64(1), picked.astype(np.int64)), axis=1)


@dataclass(frozen=True)
class IsValidatedOverwrite:
    """True for a ValidatedOverwrite, with probability 1 - fast_append_ratio."""
    fast_append_ratio: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.random(n) >= self.fast_append_ratio


class Bursty:
    """Arrival gaps of a two-state Markov-modulated Poisson process (see `sim.config.InterArrival`).

    The whole arrival sequence up to `horizon_ms` is generated at the first draw, from the arrival stream
    alone (phase lengths, then per phase a Poisson count and uniform times); later draws hand out the
    following gaps, then +inf (no more arrivals). `aimed[i]` says whether arrival i is a burst's extra
    arrival, sent to the burst table. A fresh object per run: it holds that run's sequence."""

    def __init__(self, mean_ms, burst_mean_ms, burst_ms, quiet_ms, horizon_ms, burst_table=None):
        self.burst_ms, self.quiet_ms, self.horizon_ms = burst_ms, quiet_ms, horizon_ms
        self.burst_rate = 1.0 / burst_mean_ms
        cycle = burst_ms + quiet_ms
        self.quiet_rate = max(0.0, (cycle / mean_ms - burst_ms * self.burst_rate) / quiet_ms)
        self.burst_table = burst_table
        self._gaps: np.ndarray | None = None
        self.aimed: np.ndarray | None = None
        self._next = 0

    def _generate(self, rng: np.random.Generator) -> None:
        times, aimed = [], []
        t = 0.0
        in_burst = bool(rng.random() < self.burst_ms / (self.burst_ms + self.quiet_ms))  # stationary start
        extra = (self.burst_rate - self.quiet_rate) / self.burst_rate if self.burst_table else 0.0
        while t < self.horizon_ms:
            length = rng.exponential(self.burst_ms if in_burst else self.quiet_ms)
            end = min(t + length, self.horizon_ms)
            rate = self.burst_rate if in_burst else self.quiet_rate
            n = rng.poisson(rate * (end - t))
            times.append(np.sort(rng.uniform(t, end, n)))
            aimed.append(rng.random(n) < extra if in_burst else np.zeros(n, dtype=bool))
            t, in_burst = end, not in_burst
        at = np.concatenate(times) if times else np.zeros(0)
        self._gaps = np.diff(at, prepend=0.0)
        self.aimed = np.concatenate(aimed) if aimed else np.zeros(0, dtype=bool)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self._gaps is None:
            self._generate(rng)
        out = np.full(n, np.inf)
        chunk = self._gaps[self._next:self._next + n]
        out[:len(chunk)] = chunk
        self._next += n
        return out


def inter_arrival_dist(w: Workload, horizon_ms: float):
    """The gap source of a run; `horizon_ms` (the run's duration_ms) bounds a bursty sequence."""
    ia = w.inter_arrival
    if ia.distribution == "exponential":
        return Exponential(ia.mean_ms)
    if ia.distribution == "lognormal":
        return LogNormal(ia.median_ms, ia.sigma)
    if ia.distribution == "bursty":
        return Bursty(ia.mean_ms, ia.burst_mean_ms, ia.burst_ms, ia.quiet_ms, horizon_ms, ia.burst_table)
    return Constant(ia.mean_ms)


def think_dist(writers):
    """A closed-loop writer's think time (constant 0 under any other workload: a source never drawn from)."""
    if writers.count == 0 or writers.mode != "closed":
        return Constant(0.0)
    if writers.think == "exponential" and writers.think_ms > 0:
        return Exponential(writers.think_ms)
    return Constant(writers.think_ms)


def runtime_dist(w: Workload) -> LogNormal:
    return LogNormal(w.runtime.median_ms, w.runtime.sigma, w.runtime.min_ms)


def table_choice(w: Workload) -> TableChoice:
    alpha = w.table_selection.alpha if w.table_selection.distribution == "zipf" else None
    return TableChoice(w.num_tables, alpha)


class AimedTableChoice:
    """Table choice with a bursty source's aimed arrivals sent to its burst table. The underlying choice is
    always drawn, so the table stream is the same with or without aiming; draws are handed out in arrival
    order (the gap source has generated `aimed` by the first arrival)."""

    def __init__(self, choice: TableChoice, gaps: Bursty):
        self.choice, self.gaps, self._next = choice, gaps, 0

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        tables = self.choice.draw(rng, n)
        aimed = self.gaps.aimed[self._next:self._next + n]
        tables[:len(aimed)][aimed] = self.gaps.burst_table - 1
        self._next += n
        return tables


def table_dist(w: Workload, gaps):
    """The table source of a run whose gap source is `gaps` (bursts may be aimed at one table)."""
    choice = table_choice(w)
    if isinstance(gaps, Bursty) and gaps.burst_table:
        return AimedTableChoice(choice, gaps)
    return choice
