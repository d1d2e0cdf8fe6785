"""The open-loop workload: arrival gaps, table choice, operation and runtime of each transaction."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import Workload
from .latency import LogNormal, Sampler


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


@dataclass(frozen=True)
class IsValidatedOverwrite:
    """True for a ValidatedOverwrite, with probability 1 - fast_append_ratio."""
    fast_append_ratio: float

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.random(n) >= self.fast_append_ratio


def inter_arrival_dist(w: Workload):
    ia = w.inter_arrival
    if ia.distribution == "exponential":
        return Exponential(ia.mean_ms)
    if ia.distribution == "lognormal":
        return LogNormal(ia.median_ms, ia.sigma)
    return Constant(ia.mean_ms)


def runtime_dist(w: Workload) -> LogNormal:
    return LogNormal(w.runtime.median_ms, w.runtime.sigma, w.runtime.min_ms)


def table_choice(w: Workload) -> TableChoice:
    alpha = w.table_selection.alpha if w.table_selection.distribution == "zipf" else None
    return TableChoice(w.num_tables, alpha)


class WorkloadSamplers:
    """The four workload random sources, each on its own stream."""

    def __init__(self, w: Workload, streams: dict[str, np.random.Generator]):
        self.gap = Sampler(inter_arrival_dist(w), streams["arrival"])
        self.table = Sampler(table_choice(w), streams["table"])
        self.is_vo = Sampler(IsValidatedOverwrite(w.fast_append_ratio), streams["operation"])
        self.runtime = Sampler(runtime_dist(w), streams["runtime"])
