"""The parameter a knee search moves, and its load level: the search works on the level (larger is more load; the
fit is in its log), each run sets the parameter.

- `RateParam` (the load knee): the inter-arrival gap in ms (its mean, or median for lognormal gaps); the level is
  the offered rate in arrivals/s, 1000 / (mean gap). Gaps are rounded to 6 significant digits, so a rate asked
  for twice is one point (and one config hash).
- `ScaleParam` (a trace's headroom): its `rate_scale` k, the history's load k times (its gaps divided by k); the
  level is the offered rate, k times the history's own (`sim.config.trace_rate_cps`), so a headroom is a load knee
  in arrivals/s whose parameter reads as "k times this history's load". k is rounded to 6 significant digits and
  kept within the start bracket pushed out `expansions` times (4x each) each way, as writers are within [1, most].
- `WritersParam` (the writers knee): `workload.writers.count`, an integer >= 1; the level is the writer count
  itself. Every level asked for is rounded to an integer within [1, most]: `most` is the start bracket's upper end
  doubled `expansions` times, the largest count the search may try. Points are integers, so the search's
  placements keep a new point strictly inside a bracket (or beyond the nearest point of a walk) when an integer
  is left there, and the fit's spread is at least one writer on each side of the crossing."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..config import Config, ConfigError, from_dict, trace_rate_cps, traced

LOAD_PARAMS = ("workload.inter_arrival.mean_ms", "workload.inter_arrival.median_ms")
WRITERS_PARAM = "workload.writers.count"
SCALE_PARAM = "workload.trace.rate_scale"
#: the start brackets when the spec gives none: gap ms [fast, slow]; writers [fewest, most]; a trace's rate_scale
#: [least, most]
RATE_START = (20.0, 5000.0)
WRITERS_START = (1, 64)
SCALE_START = (0.25, 16.0)


@dataclass(frozen=True)
class RateParam:
    """The inter-arrival gap (ms) at `path`; level: offered arrivals/s."""
    path: str
    gap_per_unit: float            # mean gap / parameter: exp(sigma^2 / 2) for a lognormal median, else 1
    start: tuple[float, float]     # gap ms: the fast (high-rate) and slow ends
    unit = "arrivals/s"
    load_key = "offered_cps"       # the level's name in the knee record and trace
    integer = False
    pilot_bias = 1.5               # short runs' crossing / full runs' (4c: 1.4-1.65, concurrency builds up)

    def canon(self, gap_ms: float) -> float:
        return float(f"{gap_ms:.6g}")

    def level(self, gap_ms: float) -> float:
        return 1000.0 / (gap_ms * self.gap_per_unit)

    def value_at(self, rate_cps: float) -> float:
        return 1000.0 / (rate_cps * self.gap_per_unit)

    def between(self, rate_cps: float, lo: float | None, hi: float | None) -> float | None:
        """The gap for `rate_cps` (a rate is always inside its bracket)."""
        return self.value_at(rate_cps)

    @staticmethod
    def expanded(gaps: list[float], up: bool) -> float | None:
        """The start bracket's end pushed out 4x: a faster gap when nothing fails (`up`), else a slower one."""
        return min(gaps) / 4 if up else max(gaps) * 4

    @staticmethod
    def min_spread(rate_cps: float) -> float:
        return 0.0

    @staticmethod
    def halfwidth_target(rate_cps: float, halfwidth: float) -> float:
        return halfwidth

    def knee_value(self, rate_cps: float) -> float:
        """The gap at the knee."""
        return float(f"{1000.0 / (rate_cps * self.gap_per_unit):.6g}")


@dataclass(frozen=True)
class ScaleParam:
    """A trace's rate_scale k; level: offered arrivals/s, k x the history's own rate `base_cps`."""
    base_cps: float
    start: tuple[float, float]     # k: the least and the most load
    least: float                   # the loads a search may run: start pushed out 4x `expansions` times each way
    most: float
    path = SCALE_PARAM
    unit = "arrivals/s"
    load_key = "offered_cps"
    integer = False
    pilot_bias = 1.5               # a short run replays the history's first sixth: as an open loop's, concurrency
                                   # builds up over its runtimes (it only moves where the full-length walk starts)

    def canon(self, k: float) -> float:
        return float(f"{k:.6g}")

    def level(self, k: float) -> float:
        return self.base_cps * k

    def value_at(self, rate_cps: float) -> float:
        return rate_cps / self.base_cps

    def between(self, rate_cps: float, lo: float | None, hi: float | None) -> float | None:
        """k for `rate_cps`, within [least, most]; None when that leaves nothing beyond the bracket's end a walk
        goes past (the full-length walk then stops above or below range, as a writers knee's does)."""
        k = min(max(self.value_at(rate_cps), self.least), self.most)
        if (lo is not None and self.level(k) <= lo) or (hi is not None and self.level(k) >= hi):
            return None
        return k

    @staticmethod
    def expanded(ks: list[float], up: bool) -> float:
        """The start bracket's end pushed out 4x: more load when nothing fails (`up`), else less."""
        return max(ks) * 4 if up else min(ks) / 4

    min_spread = staticmethod(RateParam.min_spread)
    halfwidth_target = staticmethod(RateParam.halfwidth_target)

    def knee_value(self, rate_cps: float) -> float:
        """k at the knee."""
        return self.canon(rate_cps / self.base_cps)


@dataclass(frozen=True)
class WritersParam:
    """The writer count; level: writers."""
    start: tuple[int, int]         # fewest and most writers of the start bracket
    most: int                      # the largest count tried: start[1] doubled `expansions` times
    path = WRITERS_PARAM
    unit = "writers"
    load_key = "writers"
    integer = True
    pilot_bias = 1.0               # N writers contend from the start: 0.96-1.09 (benchmarks/calibration/writers_knee_fit.md)

    def canon(self, n: float) -> int:
        return int(n)

    @staticmethod
    def level(n: int) -> float:
        return float(n)

    def value_at(self, writers: float) -> int:
        """The nearest allowed count (halves round up)."""
        return min(max(math.floor(writers + 0.5), 1), self.most)

    def between(self, writers: float, lo: float | None, hi: float | None) -> int | None:
        """The count nearest `writers` strictly between the counts `lo` and `hi` (None: unbounded) and within
        [1, most]; None when no integer is left there."""
        first = 1 if lo is None else max(int(lo) + 1, 1)
        last = self.most if hi is None else min(int(hi) - 1, self.most)
        return None if first > last else min(max(math.floor(writers + 0.5), first), last)

    def expanded(self, counts: list[int], up: bool) -> int | None:
        """The start bracket's end pushed out: twice the most writers when nothing fails (`up`); one writer when
        nothing passes (None when one writer was run already)."""
        if up:
            return max(counts) * 2
        return 1 if min(counts) > 1 else None

    @staticmethod
    def min_spread(writers: float) -> float:
        """New runs sit at least one writer from the crossing (relative: 1 / crossing), so the runs around it
        are distinct counts and the fit's window holds counts on both sides."""
        return 1.0 / max(writers, 1.0)

    @staticmethod
    def halfwidth_target(writers: float, halfwidth: float) -> float:
        """The relative CI half-width that stops the search: `halfwidth`, but at least half a writer (5 % of 4
        writers is a fifth of one: the integer knee is pinned to within one count before that)."""
        return max(halfwidth, 0.5 / writers) if writers > 0 else halfwidth

    @staticmethod
    def knee_value(writers: float) -> int:
        """The writers knee: the largest count whose fitted success is at least the threshold."""
        return math.floor(writers)


def writers_count(cfg: Config) -> int:
    return cfg.workload.writers.count


def search_param(cfg: Config, param: str | None, start, expansions: int) -> RateParam | WritersParam | ScaleParam:
    """The parameter a search of `cfg` moves: `param` when given, else a trace's rate_scale when `cfg` replays one,
    the writer count when it has writers (workload.writers.count > 0), else the inter-arrival gap; with its start
    bracket (`start`, or the default)."""
    if param == SCALE_PARAM or (param is None and traced(cfg)):
        if not traced(cfg):
            raise ConfigError("knee.param", f"{SCALE_PARAM} scales a trace's load: the config has no workload.trace")
        lo, hi = tuple(start) if start is not None else SCALE_START
        return ScaleParam(trace_rate_cps(cfg), (lo, hi), lo / 4 ** expansions, hi * 4 ** expansions)
    if traced(cfg):
        raise ConfigError("knee.param", f"{param} does not set the load of a trace (use {SCALE_PARAM})")
    if param == WRITERS_PARAM or (param is None and writers_count(cfg) > 0):
        lo, hi = start if start is not None else WRITERS_START
        if not (float(lo).is_integer() and float(hi).is_integer() and 1 <= lo < hi):
            raise ConfigError("knee.start", f"expected [fewest writers, most writers], integers with "
                              f"1 <= fewest < most, got {[lo, hi]!r}")
        return WritersParam((int(lo), int(hi)), int(hi) * 2 ** expansions)
    if writers_count(cfg) > 0:
        raise ConfigError("knee.param", f"{param} does not set the load of writers (workload.writers.count > 0 "
                          f"ignores workload.inter_arrival; use {WRITERS_PARAM})")
    return RateParam(load_param(cfg, param), mean_gap_per_unit(cfg),
                     tuple(start) if start is not None else RATE_START)


def with_writers(cfg: Config, n: int) -> Config:
    """`cfg` as a config with writers: itself when it has some, else `n` closed-loop writers of the defaults
    (think 0, a simultaneous start) in place of its open-loop arrivals, which writers do not read."""
    if writers_count(cfg) > 0:
        return cfg
    data = cfg.to_dict()
    del data["workload"]["inter_arrival"]
    data["workload"]["writers"]["count"] = n
    return from_dict(data)


def load_param(cfg: Config, param: str | None = None) -> str:
    """The load parameter of `cfg`: its inter-arrival mean, or median for lognormal gaps."""
    ia = cfg.workload.inter_arrival
    want = LOAD_PARAMS[1] if ia.distribution == "lognormal" else LOAD_PARAMS[0]
    if param is not None and param != want:
        raise ConfigError("knee.param", f"{param} does not set the load of {ia.distribution} arrivals "
                          f"(use {want})")
    return want


def mean_gap_per_unit(cfg: Config) -> float:
    """Mean gap / load parameter: exp(sigma^2 / 2) for a lognormal median, else 1."""
    ia = cfg.workload.inter_arrival
    return math.exp(ia.sigma ** 2 / 2) if ia.distribution == "lognormal" else 1.0
