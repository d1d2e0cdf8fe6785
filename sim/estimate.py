"""Before running: how many arrivals, how long and how much memory a configuration will take, so that a typo
(`duration_ms` 1000x too large) is refused with numbers instead of eating the machine for hours.

The constants are today's engine's; update them when it changes (e.g. when its memory stops growing with the
run's length). Measured on the 2-core reference machine (AMD EPYC, Python 3.11.7, engine `fast`, JIT cache warm),
wall from the summary's `wall_s`, memory as the child's peak RSS (`resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`)
less that of a process that only imports sim, numpy, pandas, pyarrow and numba (227 MiB). Wall, 2026-11-29 (model
version 13, the model handed to compiled code by reference: `sim.engines.model_ref`; the best of two runs each):
- s3x, 1 table, mean gap 20 ms, 1 h (180,000 arrivals, heavy contention): FA 0.9 1.48 s (measured set), 1.40 s
  (seed set); FA 0.5 (seed set, 4c's heaviest) 1.68 s;
- s3, 1 table, FA only, mean gap 100 ms, 10 h (360,000 arrivals): 2.38 s.
(2026-11-28, model version 11: 3.68, 3.29, 3.67 and 6.26 s; 2026-11: 9.4 s for the first, before long reads were
one draw: model version 10.) Memory, 2026-11: the first 166 MiB, with history 1,367 MiB; the second 358 MiB, with history 3,146 MiB. The larger per-arrival figure of
each is kept, so estimates err on the heavy side. A design that reads much more per commit (log, whose commits read
every log entry since their snapshot) can take longer than this: the estimate is of the commit's events, not of
its reads.
A run above STREAM_ARRIVALS streams its records (`streams`), and its memory no longer grows with its length:
STREAM_BYTES is the heaviest such run measured (benchmarks/memory.md, 2026-11-22: s3x, 20 tables, FA 0.9,
100 arrivals/s, 100 h, `run --json --out`) less BASE_BYTES.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .config import Config, ConfigError, InterArrival, traced

MIB = 1024 * 1024
GIB = 1024 * MIB

WALL_S_PER_ARRIVAL = 10e-6          # 1.68 s / 180,000, rounded up
RECORD_BYTES_PER_ARRIVAL = 1_050    # 358 MiB / 360,000 (records and the engine's per-transaction arrays)
HISTORY_BYTES_PER_ARRIVAL = 8_200   # (3,146 - 358) MiB / 360,000: the history's rows, ~20 per transaction
STREAM_BYTES = 780 * MIB               # a streaming run (`streams`) keeps no records: what it holds does not grow
BASE_BYTES = 230 * MIB              # the interpreter with numpy, pandas, pyarrow and numba loaded
SLOT_BYTES = 32                     # arrays sized by tables, attempts and I/O lanes (int64/float64, a few each)

STREAM_ARRIVALS = 2_000_000         # a run expected to have more streams its records (`streams`)

LIMIT_WALL_S = 3600.0               # one run longer than an hour is refused without --yes
LIMIT_MEMORY_SHARE = 0.5            # ... and one needing more than half of this machine's memory


def mean_gap_ms(ia: InterArrival) -> float:
    """The mean inter-arrival gap of a resolved config (a lognormal's mean, not its median)."""
    if ia.distribution == "lognormal":
        return ia.median_ms * math.exp(min(700.0, ia.sigma ** 2 / 2))
    return ia.mean_ms


@dataclass(frozen=True)
class Estimate:
    arrivals: float
    wall_s: float
    memory_bytes: float

    def describe(self) -> str:
        return (f"~{self.arrivals:,.0f} arrivals, {_about(self.wall_s)} of run time, "
                f"~{_bytes(self.memory_bytes)} of memory")


def expected_transactions(cfg: Config) -> float:
    """Open-loop arrivals: duration / mean gap; writers: each at the pace of an uncontended transaction (or its
    interval), at most its budget; a trace: its rows replayed."""
    if cfg.workload.writers.count > 0 or traced(cfg):
        from .model.sources import expected_arrivals
        return float(expected_arrivals(cfg))
    return cfg.duration_ms / mean_gap_ms(cfg.workload.inter_arrival)


def estimate(cfg: Config, history: bool = False) -> Estimate:
    arrivals = expected_transactions(cfg)
    records = STREAM_BYTES if streams(cfg) else arrivals * RECORD_BYTES_PER_ARRIVAL
    slots = cfg.workload.num_tables + cfg.max_attempts + cfg.io.max_parallel
    memory = BASE_BYTES + records + arrivals * (HISTORY_BYTES_PER_ARRIVAL if history else 0) + slots * SLOT_BYTES
    return Estimate(arrivals, arrivals * WALL_S_PER_ARRIVAL, memory)


def streams(cfg: Config) -> bool:
    """Whether a run summarizes its records as they come instead of keeping them (`sim.run.run`): above
    STREAM_ARRIVALS expected arrivals, whose records would take ~RECORD_BYTES_PER_ARRIVAL each."""
    return expected_transactions(cfg) > STREAM_ARRIVALS


def physical_memory_bytes() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 16.0 * GIB


@dataclass(frozen=True)
class Limits:
    wall_s: float
    memory_bytes: float

    @classmethod
    def default(cls) -> "Limits":
        return cls(LIMIT_WALL_S, LIMIT_MEMORY_SHARE * physical_memory_bytes())

    def exceeded(self, est: Estimate) -> list[str]:
        """What `est` goes over, in words; empty if nothing."""
        out = []
        if est.wall_s > self.wall_s:
            out.append(f"run time above {_duration(self.wall_s)}")
        if est.memory_bytes > self.memory_bytes:
            out.append(f"memory above {_bytes(self.memory_bytes)}")
        return out


def guard(est: Estimate, limits: Limits | None, what: str) -> None:
    """Refuse (ConfigError: exit 2) a run whose estimate goes over `limits`; None (`--yes`) lets it through."""
    over = limits.exceeded(est) if limits is not None else []
    if over:
        raise ConfigError("", f"{what} looks too big: {est.describe()} ({', '.join(over)}); check duration_ms and "
                          "the inter-arrival gap, or pass --yes to run it anyway")


def _duration(s: float) -> str:
    if s < 0.05:
        return "< 0.1 s"
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:,.1f} h"


def _about(s: float) -> str:
    """An estimated duration: `~0.4 s`, or `< 0.1 s` (not `~0.0 s`)."""
    d = _duration(s)
    return d if d.startswith("<") else f"~{d}"


def _bytes(n: float) -> str:
    return f"{n / GIB:,.1f} GiB" if n >= GIB else f"{n / MIB:,.0f} MiB"
