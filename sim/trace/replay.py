"""A trace replayed (docs/model/workload.md, "Trace"): its commits expanded by the what-ifs, given arrivals on the
simulated clock, grouped by writer for the model (`sim.model.trace`).

On the history's clock (ms from `start_ms`), commit i of the file is at h = time_ms - start_ms. Copy c of
`tables_scale` C (its tables and writers distinct: `name~c`) moves it by c / C of `period_ms` P, within the period
(h + c P / C mod P); loop r of `repeat` by r P. Its arrival is h less its runtime (the row's, else a draw of
`workload.runtime` from the runtime stream, row by row in the order loop, copy, row), 0 if that is before the
replay's start; rows arriving at or after `duration_ms` are not replayed. On the simulated clock every arrival is
divided by `rate_scale`: the gaps between arrivals are the history's divided by it, the runtimes are not. Each row
of an operation with read and write sets touches `touches` of its table's `partitions`, drawn from the partitions
stream as an arrival's are (a maintenance operation: all of them)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import Config, operations_on, trace_data
from ..workload import Partitions, runtime_dist
from .schema import OPERATIONS

#: the operations that touch `touches` partitions (a maintenance operation rewrites the whole table)
DATA_OPERATIONS = ("append", "overwrite", "row_delta")


@dataclass(frozen=True)
class Replay:
    """The rows replayed, grouped: each named writer's in arrival order (writer g's rows are
    `starts[g]:starts[g + 1]`), then the rows of no writer (group `len(writers)`)."""
    arrival_ms: np.ndarray       # on the simulated clock
    table: np.ndarray            # index into `tables`
    operation: np.ndarray        # index into schema.OPERATIONS
    parts: np.ndarray            # partitions, one bit each (0 without operations)
    runtime_ms: np.ndarray       # the file's, or drawn
    starts: np.ndarray           # len(writers) + 2 offsets
    tables: tuple[str, ...]
    writers: tuple[str, ...]


def copy_names(names: tuple[str, ...], copies: int) -> tuple[str, ...]:
    """The names of `copies` copies: the first's as they are, copy c's `name~c`."""
    return tuple(n if c == 0 else f"{n}~{c}" for c in range(copies) for n in names)


def table_names(cfg: Config) -> tuple[str, ...]:
    """The replay's tables in index order (a table's index + 1 is its `table_rank`)."""
    return copy_names(trace_data(cfg).tables, cfg.workload.trace.tables_scale)


def replay(cfg: Config, rng_runtime: np.random.Generator, rng_parts: np.random.Generator) -> Replay:
    """The rows `cfg`'s trace replays (a resolved config: its trace's start and period filled in)."""
    data, t = trace_data(cfg), cfg.workload.trace
    C, R, P = t.tables_scale, t.repeat, t.period_ms
    h0 = data.time_ms - t.start_ms
    h = np.concatenate([_copy(h0, c, C, P) + (r * P if r else 0.0) for r in range(R) for c in range(C)])
    copy = np.tile(np.repeat(np.arange(C, dtype=np.int64), len(data)), R)
    table = np.tile(data.table, R * C) + copy * len(data.tables)
    writer = np.tile(data.writer, R * C)
    writer = np.where(writer >= 0, writer + copy * len(data.writers), -1)
    operation = np.tile(data.operation, R * C)
    runtime = _runtimes(cfg, np.tile(data.runtime_ms, R * C), rng_runtime)
    parts = _parts(cfg, operation, rng_parts)
    arrival = np.maximum(h - runtime, 0.0)
    keep = arrival < cfg.duration_ms
    n_writers = len(data.writers) * C
    group = np.where(writer >= 0, writer, n_writers)[keep]
    order = np.lexsort((arrival[keep], group))
    starts = np.searchsorted(group[order], np.arange(n_writers + 2))
    pick = np.flatnonzero(keep)[order]
    return Replay(arrival[pick] / t.rate_scale, table[pick], operation[pick], parts[pick], runtime[pick], starts,
                  copy_names(data.tables, C), copy_names(data.writers, C))


def _copy(h0: np.ndarray, c: int, copies: int, period: float) -> np.ndarray:
    """Copy c's history clock: shifted by c / copies of the period, within it (copy 0 as it is, to the bit)."""
    return h0 if c == 0 else np.mod(h0 + c * period / copies, period)


def _runtimes(cfg: Config, runtime: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The rows' runtimes: the file's, and where it has none a draw of `workload.runtime`, in row order."""
    unknown = np.isnan(runtime)
    if unknown.any():
        runtime = runtime.copy()
        runtime[unknown] = runtime_dist(cfg.workload).draw(rng, int(unknown.sum()))
    return runtime


def _parts(cfg: Config, operation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row's partitions (operations on): a data operation's `touches` drawn as an arrival's, in row order; a
    maintenance operation's all of them."""
    parts = np.zeros(len(operation), dtype=np.int64)
    if not operations_on(cfg):
        return parts
    ops = cfg.workload.operations
    n = ops.partitions or 1
    data_rows = np.isin(operation, [OPERATIONS.index(o) for o in DATA_OPERATIONS])
    parts[~data_rows] = (1 << n) - 1
    parts[data_rows] = Partitions(n, ops.touches).draw(rng, int(data_rows.sum()))
    return parts


def expected_rows(cfg: Config) -> int:
    """About how many rows a replay starts (sizes a run's first arrays; nothing more)."""
    data, t = trace_data(cfg), cfg.workload.trace
    return int(len(data) * t.tables_scale * min(t.repeat, cfg.duration_ms / t.period_ms)) + 1
