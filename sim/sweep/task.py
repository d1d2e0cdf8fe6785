"""One sweep task: a pure function from (config, replication) to a JSON-able result; runs in any worker."""
from __future__ import annotations

import math
import time
import traceback

from ..config import Config, from_dict
from ..run import run


def standard_columns(cfg: Config) -> dict:
    """Parameter columns every results table has, whatever was swept (docs/FORMATS.md)."""
    ia = cfg.workload.inter_arrival
    cat = cfg.catalog
    if cat.backend == "storage":
        cat_ms = math.nan
    else:
        cat_ms = cat.latency_ms if cat.latency is None else cat.latency.median_ms
    zipf = cfg.workload.table_selection.distribution == "zipf"
    return {
        "provider": cfg.storage.provider, "backend": cat.backend, "num_tables": cfg.workload.num_tables,
        "fast_append_ratio": cfg.workload.fast_append_ratio,
        "inter_arrival_ms": ia.median_ms if ia.distribution == "lognormal" else ia.mean_ms,
        "inter_arrival_distribution": ia.distribution, "catalog_latency_ms": cat_ms,
        "table_selection": cfg.workload.table_selection.distribution,
        "zipf_alpha": cfg.workload.table_selection.alpha if zipf else math.nan,
        "max_retries": cfg.commit.max_retries,
    }


def execute(task: dict) -> dict:
    """Run one (config, replication); never raises: a failure comes back as a record with its error."""
    start = time.perf_counter()
    key, rep = task["key"], task["replication"]
    try:
        cfg = from_dict(task["config"])
        result = run(cfg, rep, engine=task.get("engine", "fast"))
        return {"key": key, "status": "ok", "error": "", "params": task["params"], "replication": rep,
                "summary": result.summary, "per_table": result.per_table, "resolved": result.resolved}
    except Exception:  # noqa: BLE001 - recorded, the sweep goes on
        return {"key": key, "status": "failed", "error": traceback.format_exc(limit=8), "params": task["params"],
                "replication": rep, "summary": {"wall_s": time.perf_counter() - start}, "per_table": [],
                "resolved": {"config": task["config"]}}
