"""Running one configuration: a pure function (config, replication) -> RunResult."""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pathlib import Path

import numpy as np

from . import metrics, records as records_mod
from .config import Config, config_hash, run_window
from .engines import ENGINES, make_engine
from .providers import profile_of
from .sink import ROW_GROUP_ROWS, StreamSink

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ENGINES", "RunResult", "resolved_config", "run"]


def resolved_config(cfg: Config) -> dict:
    """What a result is stored with: the config with defaults filled in, the provider profile it ran on, its
    hash."""
    return {"config": cfg.to_dict(), "provider_profile": profile_of(cfg).to_dict(),
            "config_hash": config_hash(cfg)}


@dataclass
class RunResult:
    config: Config
    replication: int
    summary: dict                 # flat metrics (sim.metrics.summarize) plus run facts
    per_table: list[dict]
    columns: dict | None          # the records as numpy arrays, codes for op/outcome/reason (sim.records);
                                  # None if they were streamed (`run(stream=True)`)
    history: "pd.DataFrame | None" = None
    resolved: dict = field(default_factory=dict)
    per_writer: list[dict] = field(default_factory=list)   # sim.metrics.per_writer: none under open loop

    @functools.cached_property
    def records(self) -> "pd.DataFrame":
        """One row per transaction (in and out of the window); built when first asked for, so that a sweep or
        `run --json` never pays for (or imports) pandas."""
        if self.columns is None:
            raise ValueError("this run streamed its records (to its --out directory, if any) and kept none")
        return records_mod.records_frame_of(self.columns)


def run(cfg: Config, replication: int = 0, *, history: bool = False, engine: str = "fast",
        stream: bool | None = None, records_path: Path | None = None, row_group_rows: int = ROW_GROUP_ROWS,
        slots: int | None = None) -> RunResult:
    """`engine`: `fast` (compiled, the default) or `simpy` (SimPy processes); both run the one model of
    `sim.model` and give identical results.

    `stream`: summarize the records as transactions finish instead of keeping them (memory flat in the run's
    length; percentiles within `metrics.ALPHA_SUMMARY`, see `metrics.StreamSummary`); None: if the run is
    large (`sim.estimate.streams`). `records_path`: write the records there (parquet, row groups of
    `row_group_rows`) as transactions finish; a run that does not stream keeps them too, for its exact
    summary. `slots`: the first size of the transactions' ring (`sim.model.build.Run`)."""
    from .estimate import streams
    start = time.perf_counter()
    stream = streams(cfg) if stream is None else stream
    sink = None
    if stream or records_path is not None:
        keep = (records_mod.HISTORY_NEEDS if history else ()) if stream else records_mod.RECORD_COLUMNS
        sink = StreamSink(run_window(cfg)[1:], cfg.workload.num_tables,
                          records_path, row_group_rows, keep=keep, summarize=stream, ops=metrics.op_codes(cfg))
    eng = make_engine(cfg, replication, history, engine, sink=sink, slots=slots).run()
    window = eng.window
    if stream:
        cols = None
        ss = sink.summary
        summary, per_table, total = ss.summary(eng.end_ms), ss.per_table(eng.end_ms), ss.total
        per_writer = ss.per_writer(eng.end_ms)
    else:
        cols = records_mod.record_columns(eng.r)
        summary = metrics.summarize(cols, window, eng.end_ms, metrics.op_codes(cfg))
        per_table = metrics.per_table(cols, window, eng.end_ms)
        per_writer = metrics.per_writer(cols, window, eng.end_ms)
        total = {"transactions": len(cols["txn"]), "catalog_reads": int(cols["catalog_reads"].sum()),
                 "cases": int(cols["cases"].sum())}
    if eng.r.replay is not None:
        _trace_waiting(eng.r.trace_waiting(), summary, per_table)
    n = total["transactions"]
    summary.update({
        "config_hash": config_hash(cfg), "replication": replication,
        # engine-independent event count: arrivals plus catalog effect points (reads and CASes)
        "events": int(n + total["catalog_reads"] + total["cases"]),
        "sim_end_ms": eng.end_ms, "transactions_total": n,
        "wall_s": time.perf_counter() - start,
    })
    return RunResult(cfg, replication, summary, per_table, cols, eng.history_frame(), resolved_config(cfg),
                     per_writer)


def _trace_waiting(waiting, summary: dict, per_table: list[dict]) -> None:
    """A trace's window rows whose writer had not started them when the run ended (docs/model/workload.md,
    "Trace"): `trace_waiting` in the summary and per table (a knee counts them as failures: `sim.knee.points`)."""
    summary["trace_waiting"] = int(waiting.sum())
    seen = {row["table_rank"] for row in per_table}
    per_table += [metrics.blank_table_row(t + 1) for t in np.flatnonzero(waiting) if t + 1 not in seen]
    per_table.sort(key=lambda row: row["table_rank"])
    for row in per_table:
        row["trace_waiting"] = int(waiting[row["table_rank"] - 1])
