"""Running one configuration: a pure function (config, replication) -> RunResult."""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import metrics, records as records_mod
from .config import Config, config_hash
from .engines import ENGINES, make_engine
from .providers import load_provider

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ENGINES", "RunResult", "resolved_config", "run"]


def resolved_config(cfg: Config) -> dict:
    """What a result is stored with: the config with defaults filled in, the provider profile it ran on, its
    hash."""
    return {"config": cfg.to_dict(), "provider_profile": load_provider(cfg.storage.provider).to_dict(),
            "config_hash": config_hash(cfg)}


@dataclass
class RunResult:
    config: Config
    replication: int
    summary: dict                 # flat metrics (sim.metrics.summarize) plus run facts
    per_table: list[dict]
    columns: dict                 # the records as numpy arrays, codes for op/outcome/reason (sim.records)
    history: "pd.DataFrame | None" = None
    resolved: dict = field(default_factory=dict)

    @functools.cached_property
    def records(self) -> "pd.DataFrame":
        """One row per transaction (in and out of the window); built when first asked for, so that a sweep or
        `run --json` never pays for (or imports) pandas."""
        return records_mod.records_frame_of(self.columns)


def run(cfg: Config, replication: int = 0, *, history: bool = False, engine: str = "fast") -> RunResult:
    """`engine`: `fast` (compiled, the default) or `simpy` (SimPy processes); both run the one model of
    `sim.model` and give identical results."""
    start = time.perf_counter()
    eng = make_engine(cfg, replication, history, engine).run()
    cols = records_mod.record_columns(eng.r)
    window = eng.window
    summary = metrics.summarize(cols, window)
    n = len(cols["txn"])
    summary.update({
        "config_hash": config_hash(cfg), "replication": replication,
        # engine-independent event count: arrivals plus catalog effect points (reads and CASes)
        "events": int(n + cols["catalog_reads"].sum() + cols["cases"].sum()),
        "sim_end_ms": eng.end_ms, "transactions_total": n,
        "wall_s": time.perf_counter() - start,
    })
    return RunResult(cfg, replication, summary, metrics.per_table(cols, window), cols, eng.history_frame(),
                     resolved_config(cfg))
