"""A run's commits as a trace (`sim run --trace-out`; docs/FORMATS.md, "Trace"): what a table's history would hold.

A history holds the commits that landed, so a row is a transaction that committed (outcome `committed`, or
`duplicated`: it landed twice and its client was told it committed; one row). `time_ms` is its end (when its
client learned it had committed), `runtime_ms` its end less its start (`arrival_ms`: the whole of it, reads and
retries included), so that the trace's arrival, time_ms - runtime_ms, is its start again, up to the rounding of
that one subtraction (within half a unit in the last place of time_ms: 2.3e-10 ms at an hour). `writer` names its
writer (`w<N>`, or a trace's own names), empty for an open-loop arrival and a maintenance job; `table` is `t<N>`
(a trace's own names); `operation` is its operation, an append for a FastAppend and an overwrite for a
ValidatedOverwrite (whose conflicts were drawn: a replay decides them by the format's rules)."""
from __future__ import annotations

import numpy as np

from ..schema import ConfigError
from ..model.state import OPS, Outcome

#: the model's operations as a trace names them
TRACE_OPS = {"fa": "append", "vo": "overwrite", **{op: op for op in OPS if op not in ("fa", "vo")}}


def trace_of(cfg, cols: dict):
    """The committed transactions of a run of `cfg` (its record columns, `sim.records.record_columns`), as a trace
    DataFrame in commit order."""
    import pandas as pd
    if cols is None:
        raise ConfigError("--trace-out", "the run kept no records (it streamed them)")
    if (cols["tables"] > 1).any():
        raise ConfigError("--trace-out", "a commit over several tables (workload.multi_table) has no row in a "
                          "trace (one table a commit)")
    done = np.isin(cols["outcome"], (Outcome.COMMITTED, Outcome.DUPLICATED))
    end, start = cols["end_ms"][done], cols["arrival_ms"][done]
    tables, writers = _names(cfg)
    w = cols["writer"][done]
    order = np.argsort(end, kind="stable")
    out = pd.DataFrame({
        "time_ms": end, "table": np.array(tables, dtype=object)[cols["table"][done]],
        "operation": np.array([TRACE_OPS[op] for op in OPS], dtype=object)[cols["op"][done]],
        "writer": np.where(w >= 0, np.array(writers + ("",), dtype=object)[np.where(w >= 0, w, len(writers))],
                           None),
        "runtime_ms": end - start})
    return out.iloc[order].reset_index(drop=True)


def _names(cfg) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The run's table and writer names: a trace's own (each copy's), else `t<N>` and `w<N>`."""
    from ..config import trace_data, traced
    if traced(cfg):
        from .replay import copy_names
        data, c = trace_data(cfg), cfg.workload.trace.tables_scale
        return copy_names(data.tables, c), copy_names(data.writers, c)
    return (tuple(f"t{i}" for i in range(cfg.workload.num_tables)),
            tuple(f"w{i}" for i in range(cfg.workload.writers.count)))
