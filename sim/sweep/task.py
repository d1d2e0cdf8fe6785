"""One sweep task: a pure function from (config, replication) to a JSON-able result; runs in any worker."""
from __future__ import annotations

import math
import os
import signal
import time
import traceback

from ..config import Config, from_dict, traced
from ..providers import profile_digest
from ..run import run
from ..version import MODEL_VERSION
from .store import RunKey


def standard_columns(cfg: Config) -> dict:
    """Parameter columns every results table has, whatever was swept (docs/FORMATS.md)."""
    ia = cfg.workload.inter_arrival
    writers = cfg.workload.writers.count > 0 or traced(cfg)   # (a trace's rows are its arrivals: no gap)
    cat, lk, ls = cfg.catalog, cfg.lock, cfg.log_store
    if cat.backend == "storage":
        cat_ms = math.nan
    else:
        cat_ms = cat.latency_ms if cat.latency is None else _median_ms(cat.latency)
    # the other services' round trips: a lock's (HMS: the catalog's), or Delta's DynamoDB log store's
    if lk.variant is not None:
        svc_ms = lk.latency_ms if lk.latency is None else _median_ms(lk.latency)
    elif ls.kind is not None:
        svc_ms = ls.latency_ms if ls.latency is None else _median_ms(ls.latency)
    else:
        svc_ms = math.nan
    zipf = cfg.workload.table_selection.distribution == "zipf"
    return {
        "provider": cfg.storage.provider, "backend": cat.backend, "num_tables": cfg.workload.num_tables,
        "fast_append_ratio": cfg.workload.fast_append_ratio,
        "inter_arrival_ms": math.nan if writers else ia.median_ms if ia.distribution == "lognormal" else ia.mean_ms,
        "inter_arrival_distribution": "trace" if traced(cfg) else "" if writers else ia.distribution,
        "catalog_latency_ms": cat_ms,
        "service_latency_ms": svc_ms,
        "table_selection": cfg.workload.table_selection.distribution,
        "zipf_alpha": cfg.workload.table_selection.alpha if zipf else math.nan,
        "max_retries": cfg.commit.max_retries,
        # catalog design (MODEL.md 'Named designs'): the named design, or the one its keys amount to
        "design": cfg.design or design_of(cfg), "scope": cat.scope, "protocol": cfg.commit.protocol,
        **_workload_columns(cfg),
    }


def _median_ms(latency) -> float:
    """A lognormal service latency's median: its fixed part (if any) plus its lognormal's."""
    return latency.median_ms if latency.fixed_ms is None else latency.fixed_ms + latency.median_ms


def _workload_columns(cfg: Config) -> dict:
    """Writers (MODEL.md 'Writers'): their count (0: open-loop arrivals, whose gap is inter_arrival_ms), mode,
    interval or think time; and the transaction's shape."""
    w = cfg.workload.writers
    periodic, closed = w.count > 0 and w.mode == "periodic", w.count > 0 and w.mode == "closed"
    return {"writers": w.count, "writers_mode": w.mode if w.count > 0 else "",
            "interval_ms": w.interval_ms if periodic else math.nan, "think_ms": w.think_ms if closed else math.nan,
            "shape": cfg.commit.shape}


def design_of(cfg: Config) -> str:
    """The design a config's keys amount to when it names none: file, fs-table, log or rest for the shapes of
    sim/designs.py, else backend/scope/protocol (e.g. 4a's service catalog with one global object, or one
    storage object per table without version files)."""
    shape = (cfg.catalog.backend, cfg.catalog.scope, cfg.commit.protocol)
    if cfg.catalog.version_files:
        return "fs-table"
    if cfg.lock.variant is not None:   # a commit lock: around Iceberg's commit (HMS), or Hudi's timeline
        return "hudi" if cfg.commit.protocol == "log" else "hive"
    if cfg.log_store.kind is not None:
        return "delta-dynamodb"
    named = {("storage", "global", "rewrite"): "file", ("storage", "table", "log"): "log",
             ("service", "table", "rewrite"): "rest"}
    if shape == ("service", "table", "rewrite") and cfg.catalog.server.variant == "lakekeeper":
        return "rest-lakekeeper"
    return named.get(shape, "/".join(shape))


def execute(task: dict) -> dict:
    """Run one (config, replication); never raises: a failure comes back as a record with its error. A finished
    run records its cache key as it ran here: the provider profile this worker read and this sim's model
    version (sim/sweep/store.py)."""
    start = time.perf_counter()
    key, rep = task["key"], task["replication"]
    _test_kill_worker(key)
    try:
        cfg = from_dict(task["config"])
        result = run(cfg, rep, engine=task.get("engine", "fast"))
        run_key = RunKey(result.summary["config_hash"], rep, cfg.storage.provider,
                         profile_digest(result.resolved["provider_profile"]), MODEL_VERSION)
        return {"key": key, "status": "ok", "error": "", "params": task["params"], "replication": rep,
                "summary": result.summary, "per_table": result.per_table,
                "per_writer": result.per_writer, "resolved": result.resolved,
                "run_key": run_key.ingredients()}
    except Exception:  # noqa: BLE001 - recorded, the sweep goes on
        return failure(task, traceback.format_exc(limit=8), time.perf_counter() - start)


def failure(task: dict, error: str, wall_s: float = math.nan) -> dict:
    """The record of a run that did not finish: `error` says why (a traceback, or why its worker died)."""
    return {"key": task["key"], "status": "failed", "error": error, "params": task["params"],
            "replication": task["replication"], "summary": {"wall_s": wall_s}, "per_table": [],
            "per_writer": [],
            "resolved": {"config": task["config"]}}


def _test_kill_worker(key: str) -> None:
    """Test-only fault injection: SIM_TEST_KILL_WORKER="<run key>[@<marker file>]" makes the worker running that
    run SIGKILL itself, as the OOM killer would; with a marker file, only the first time (it creates the file)."""
    spec = os.environ.get("SIM_TEST_KILL_WORKER")
    if not spec:
        return
    target, _, marker = spec.partition("@")
    if target != key:
        return
    if marker:
        try:
            open(marker, "x").close()
        except FileExistsError:
            return
    os.kill(os.getpid(), signal.SIGKILL)
