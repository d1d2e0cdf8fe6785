"""Running knee searches (sim.knee): their runs go through the sweep executors and the results store, so
`--jobs` spreads them over processes and every run is cached by config hash and replication (a rerun, or a
finer precision, reuses what is there). Searches advance in rounds: every unfinished search lists the runs it
needs next, they run together, and each search is fed its results."""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config import config_hash, from_dict
from ..knee import KneeSearch, KneeSpec
from ..knee.status import knee_text
from ..results_io import atomic_write_parquet, atomic_write_text
from .executors import default_jobs, make_executor
from .progress import RunProgress
from .runner import precompile, run_cost
from .store import ResultStore, RunKey, run_key
from .task import execute, standard_columns


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass
class KneeOutcome:
    results: list[dict]       # one flat knee record per search, in order
    runs: int                 # runs the searches used
    new_runs: int             # of which were run now (the rest came from the store)
    wall_s: float


def run_searches(searches: list[KneeSearch], out_dir: str | Path, *, jobs: int | None = None,
                 executor: str = "local", scheduler: str | None = None, engine: str = "fast",
                 force: bool = False, log=None, progress: RunProgress | None = None) -> KneeOutcome:
    """`log`: a line per round (and the compile message); `progress`: the command's bar instead, its postfix the
    round's and each new run a step."""
    start = time.perf_counter()
    store = ResultStore(out_dir)
    ex = None
    new = used = 0
    seen: set[str] = set()
    try:
        while True:
            wanted = _wanted(searches, engine)
            if not wanted:
                if progress:
                    progress.status(_round_line(searches, used, new))
                break
            results, todo = _stored(wanted, store, force, seen)
            if todo:
                todo.sort(key=lambda t: -t["cost"])   # the heavy runs first (`run_cost`)
                if ex is None:
                    if engine == "fast":
                        precompile([from_dict(t["config"]) for t in todo], log or _to_stderr)
                    ex = make_executor(executor, jobs or default_jobs(), scheduler)
                if progress:
                    progress.add(len(todo))
                for res in ex.map_unordered(execute, todo):
                    store.write(res["key"], res)
                    results[res["key"]] = res
                    new += 1
                    if progress:
                        progress.done()
            seen.update(wanted)
            for key, (_, users) in wanted.items():
                res = results[key]
                used += 1
                for s, point in users:
                    ok = res["status"] == "ok"
                    s.feed(point, s.summary_of(res) if ok else None,
                           "" if ok else res["error"].strip().splitlines()[-1])
            if progress:
                progress.status(_round_line(searches, used, new))
            elif log:
                log(f"knee: {_round_line(searches, used, new)}")
    finally:
        if ex is not None:
            ex.close()
    return KneeOutcome([s.result() for s in searches], used, new, time.perf_counter() - start)


def _wanted(searches: list[KneeSearch], engine: str) -> dict:
    """The runs the searches' next points need: run key -> (task, [(search, point)]); a run two searches share is
    one task."""
    wanted = {}
    for s in searches:
        for point, rep in s.pending():
            cfg = s.config_of(point)
            key = run_key(config_hash(cfg), rep)
            if key not in wanted:
                wanted[key] = ({"key": key, "config": cfg.to_dict(), "params": {s.param.path: point.value},
                                "replication": rep, "engine": engine, "run_key": RunKey.expected(cfg, rep),
                                "cost": run_cost(cfg)}, [])
            wanted[key][1].append((s, point))
    return wanted


def _stored(wanted: dict, store: ResultStore, force: bool, seen: set) -> tuple[dict, list]:
    """The wanted runs the store holds (key -> result) and the tasks left to run. A stored run is reused only if its
    whole key matches (provider profile, model version); with `force`, only if this command ran it."""
    results, todo = {}, []
    for key, (task, _) in wanted.items():
        reusable = not (force and key not in seen) and store.check(task["run_key"])[0]
        cached = store.read(key) if reusable else None
        if cached is not None and cached.get("status") == "ok":
            results[key] = cached
        else:
            todo.append(task)
    return results, todo


def _round_line(searches: list[KneeSearch], used: int, new: int) -> str:
    return f"{sum(s.done for s in searches)}/{len(searches)} searches done, {used} runs ({new} new)"


def knee_json(search: KneeSearch, rec: dict) -> dict:
    """The `knee --json` object: the knee with CIs, what it cost, and every point run."""
    def ci(m):
        return {"value": rec[m], "ci95": rec[f"{m}_ci95"]}

    lat = {op.rstrip("_") or "all": {"mean_ms": ci(f"{op}commit_latency_mean_ms"), "p99_ms": ci(f"{op}commit_latency_p99_ms")}
           for op in ("", "fa_", "vo_")}
    writers = {} if "unit" not in rec else {
        "unit": rec["unit"], "writers": rec["writers"], "writers_ci95": [rec["writers_low"], rec["writers_high"]],
        "writers_crossing": rec["writers_crossing"],
        "writers_crossing_ci95": [rec["writers_crossing_low"], rec["writers_crossing_high"]]}
    bound = "knee_bound_writers" if "unit" in rec else "knee_bound_cps"
    scale = {} if "rate_scale" not in rec else {
        "rate_scale": rec["rate_scale"], "rate_scale_ci95": [rec["rate_scale_low"], rec["rate_scale_high"]],
        "base_cps": rec["base_cps"], "binding_table": rec["binding_table"]}
    tables = search.headroom()
    return {
        "knee": {
            "status": rec["status"], "knee_status": rec["knee_status"], "knee_text": knee_text(rec),
            "knee_reason": rec["knee_reason"], bound: rec[bound], **writers, "offered_cps": rec["offered_cps"],
            "offered_cps_ci95": [rec["offered_cps_low"], rec["offered_cps_high"]],
            "ci95_halfwidth_rel": rec["ci95_halfwidth_rel"],
            "param": rec["param"], "value": rec["value"],
            "success_rate": rec["success_rate"], "vo_success_rate": rec["vo_success_rate"],
            "throughput_cps": {"value": rec["knee_throughput_cps"],
                               "ci95": [rec["knee_throughput_cps_low"], rec["knee_throughput_cps_high"]]},
            "commit_latency": lat,
            "full_runs": rec["full_runs"], "fit_runs": rec["fit_runs"], "decided": rec["decided"], **scale,
        },
        **({"tables": tables} if tables else {}),
        "threshold": rec["threshold"], "precision": rec["precision"],
        "common_random_numbers": rec["common_random_numbers"],
        "runs": rec["runs"], "pilot_runs": rec["pilot_runs"], "new_runs": rec.get("new_runs"),
        "simulated_hours": rec["simulated_hours"],
        "error": rec["error"], "config_hash": config_hash(search.base), "points": search.trace(),
    }


def cell_row(point_params: dict, cfg, rec: dict, searched: str = "inter_arrival_ms") -> dict:
    """One knees-table row: the cell's swept values and standard columns (not the `searched` one: the load, or
    the writer count), then the knee."""
    cols = {k: v for k, v in standard_columns(cfg).items() if k != searched}
    return {**point_params, **cols, **{k: _num(v) for k, v in rec.items()}}


def run_knee_sweep(sweep, spec: KneeSpec, out_dir: str | Path, *, jobs=None, executor="local", scheduler=None,
                   engine="fast", force=False, log=print,
                   progress: RunProgress | None = None) -> tuple[pd.DataFrame, KneeOutcome]:
    """Every grid cell's knee: DIR/knees.parquet and DIR/knees.csv (one row per cell)."""
    import yaml
    out = Path(out_dir)
    atomic_write_text(out / "sweep.yaml", yaml.safe_dump(sweep.source, sort_keys=False))
    searches = [KneeSearch(p.config, spec) for p in sweep.points]
    outcome = run_searches(searches, out, jobs=jobs, executor=executor, scheduler=scheduler, engine=engine,
                           force=force, log=log, progress=progress)
    col = {s: "writers" if s.param.integer else "inter_arrival_ms" for s in searches}   # the searched column
    rows = [cell_row(p.params, p.config, rec, col[s])
            for p, s, rec in zip(sweep.points, searches, outcome.results)]
    df = pd.DataFrame(rows)
    atomic_write_parquet(out / "knees.parquet", df)
    df.to_csv(out / "knees.csv", index=False)
    trace = [{**p.params, **{k: v for k, v in cell_row({}, p.config, {}, col[s]).items()}, **t}
             for p, s in zip(sweep.points, searches) for t in s.trace()]
    atomic_write_parquet(out / "knee_points.parquet", pd.DataFrame(trace))
    tables = [{**p.params, **cell_row({}, p.config, {}, col[s]), **row}
              for p, s in zip(sweep.points, searches) for row in s.headroom()]
    if tables:   # a headroom sweep: each cell's tables (docs/knee.md, "Headroom")
        atomic_write_parquet(out / "knee_tables.parquet", pd.DataFrame(tables))
    return df, outcome


def _num(v):
    return math.nan if v is None else v
