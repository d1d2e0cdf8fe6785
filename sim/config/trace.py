"""A trace's rules (docs/model/workload.md, "Trace"): what the trace file fills in (its content's sha256, the table
count, the replay's start and period, the length of the run) and which workload keys it leaves unread (an error
naming the key); and the run's window on the simulated clock.

With a trace, `duration_ms`, `warmup_ms` and `cooldown_ms` are on the history's clock (ms from the replay's start,
before `rate_scale`), so that the load's what-ifs compare the same stretch of history: the run replays history
[0, duration_ms) in duration_ms / rate_scale of simulated time (`run_window`)."""
from __future__ import annotations

import dataclasses

from ..schema import ConfigError
from .types import Config, InterArrival, MultiTable, TableSelection, Trace, Workload

DEFAULT_DURATION_MS = 3_600_000.0
PATH = "workload.trace"
#: trace operations a design has no commit of (docs/model/operations-and-maintenance.md)
_NO_SUCH = {"log": ("row_delta", "rewrite_manifests", "expire_snapshots"),
            "ducklake": ("row_delta", "rewrite_manifests", "expire_snapshots")}


def traced(cfg: Config) -> bool:
    return cfg.workload.trace.path is not None


def run_window(cfg: Config) -> tuple[float, float, float]:
    """(duration, window start, window end) in simulated ms: the config's, divided by a trace's rate_scale."""
    k = cfg.workload.trace.rate_scale if traced(cfg) else 1.0
    return cfg.duration_ms / k, cfg.warmup_ms / k, (cfg.duration_ms - cfg.cooldown_ms) / k


def trace_rate_cps(cfg: Config) -> float:
    """The history's own rate on the simulated clock at rate_scale 1: its commits (each copy's) per second of its
    period."""
    return len(trace_data(cfg)) * cfg.workload.trace.tables_scale / (cfg.workload.trace.period_ms / 1000.0)


def trace_data(cfg: Config):
    """The trace file of `cfg` (`sim.trace.source.TraceData`), read once per process and version of the file."""
    from ..trace.source import load
    try:
        return load(cfg.workload.trace.path)
    except ConfigError as exc:
        raise ConfigError(f"{PATH}.path", exc.message) from None


def resolve_trace(cfg: Config) -> Config:
    """`cfg` with what its trace fills in (nothing but the 1-hour default duration without one)."""
    t = cfg.workload.trace
    if t == Trace():
        return cfg if cfg.duration_ms is not None else dataclasses.replace(cfg, duration_ms=DEFAULT_DURATION_MS)
    if t.path is None:
        raise ConfigError(f"{PATH}.path", "required when any workload.trace key is given: the trace file")
    data = trace_data(cfg)
    if t.sha256 is not None and t.sha256 != data.sha256:
        raise ConfigError(f"{PATH}.sha256", f"{t.path} has changed: its content's sha256 is {data.sha256[:16]}.., "
                          f"not {t.sha256[:16]}.. (remove sha256 to replay the file as it is now)")
    _check_unread(cfg.workload)
    start = data.first_start_ms() if t.start_ms is None else t.start_ms
    span = float(data.time_ms[-1]) - start
    period = t.period_ms if t.period_ms is not None else span + data.mean_gap_ms()
    if t.period_ms is not None and t.period_ms < span:
        raise ConfigError(f"{PATH}.period_ms", f"{t.period_ms:g} is shorter than the history's span from "
                          f"start_ms ({span:g} ms): a loop would overlap the next")
    if period <= 0:
        raise ConfigError(f"{PATH}.period_ms", "required: the trace spans no time (one commit, no runtime)")
    trace = dataclasses.replace(t, sha256=data.sha256, start_ms=float(start), period_ms=float(period))
    workload = dataclasses.replace(cfg.workload, trace=trace, num_tables=_tables(cfg.workload, data),
                                   operations=_operations(cfg, data))
    duration = cfg.duration_ms if cfg.duration_ms is not None else period * t.repeat
    out = dataclasses.replace(cfg, workload=workload, duration_ms=float(duration))
    _check_operations(out, data)
    return out


def _check_unread(w: Workload) -> None:
    """The keys a trace replaces: its rows are the arrivals, their tables, operations and writers."""
    for wrong, key, why in (
            (w.inter_arrival != InterArrival(), "inter_arrival", "the trace's commits are the arrivals"),
            (w.writers.count > 0, "writers", "the trace names its writers (its `writer` column)"),
            (w.table_selection != TableSelection(), "table_selection", "each commit names its table"),
            (w.fast_append_ratio != 1.0, "fast_append_ratio", "each commit names its operation"),
            (w.vo_conflict_probability > 0, "vo_conflict_probability", "the format's rules decide a trace's "
                                                                       "conflicts"),
            (w.operations.overwrite_share > 0 or w.operations.row_delta_share > 0, "operations",
             "each commit names its operation (keep partitions, touches, isolation, row_delta_deletes)"),
            (w.multi_table != MultiTable(), "multi_table", "a trace's commit is on one table")):
        if wrong:
            raise ConfigError(f"workload.{key}", f"not used with workload.trace ({why}); remove it")


def _tables(w: Workload, data) -> int:
    """The trace's tables x tables_scale (a given num_tables must say the same)."""
    n = len(data.tables) * w.trace.tables_scale
    if w.num_tables not in (1, n):
        raise ConfigError("workload.num_tables", f"{w.num_tables}, but the trace has {len(data.tables)} table(s) x "
                          f"tables_scale {w.trace.tables_scale} = {n}: with a trace it follows the trace (remove it)")
    return n


def _operations(cfg: Config, data):
    """A trace with commits other than appends has the format's rules decide conflicts: operations on, each
    table one partition unless `workload.operations.partitions` says otherwise."""
    ops = cfg.workload.operations
    if ops.partitions is None and set(data.operations) - {"append"}:
        return dataclasses.replace(ops, partitions=1)
    return ops


def _check_operations(cfg: Config, data) -> None:
    """The trace's operations must be commits the design has."""
    kind = ("log" if cfg.commit.protocol == "log" else "ducklake" if cfg.catalog.file_lists_inlined else None)
    if cfg.commit.shape == "object" and set(data.operations) - {"append"}:
        raise ConfigError(f"{PATH}.path", f"{data.path} holds {', '.join(data.operations)} commits: "
                          "commit.shape object writes no table (appends only)")
    for op in _NO_SUCH.get(kind, ()):
        if op in data.operations:
            what = "a Delta log or Hudi timeline" if kind == "log" else "DuckLake"
            raise ConfigError(f"{PATH}.path", f"{data.path} holds {op} commits, which {what} has none of "
                              "(docs/model/operations-and-maintenance.md)")


def derived_paths(cfg: Config, overrides) -> list[str]:
    """The keys of a resolved `cfg` that its trace filled in and that `overrides` (dotted paths) may change: left
    out, they follow the trace again (`sim.config.replaced`)."""
    if not traced(cfg) or not any(p.startswith(PATH) for p in overrides):
        return []
    t, data = cfg.workload.trace, trace_data(cfg)
    out = []
    if cfg.workload.num_tables == len(data.tables) * t.tables_scale:
        out.append("workload.num_tables")
    if cfg.duration_ms == t.period_ms * t.repeat:
        out.append("duration_ms")
    if f"{PATH}.path" in overrides:
        out.append(f"{PATH}.sha256")
        if t.start_ms == data.first_start_ms():
            out.append(f"{PATH}.start_ms")
        if t.period_ms == float(data.time_ms[-1]) - t.start_ms + data.mean_gap_ms():
            out.append(f"{PATH}.period_ms")
    return out
