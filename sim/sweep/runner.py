"""Running a sweep: expand, skip what is done, execute the rest, assemble the results table, report."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from ..estimate import Limits, estimate, expected_transactions, guard
from ..results_io import atomic_write_parquet, atomic_write_text
from .executors import default_jobs, make_executor
from .progress import RunProgress
from .spec import Sweep
from .store import ResultStore, RunKey
from .task import execute, failure, standard_columns

if TYPE_CHECKING:   # pandas is imported where the results table is made: `sim run` loads this module too
    import pandas as pd


@dataclass
class Outcome:
    total: int
    reused: int
    ran: int
    failed: int
    wall_s: float
    out_dir: Path


def run_cost(cfg) -> float:
    """A run's rough relative cost (arrivals x the attempts they may make): an executor starts the heavy runs first,
    so that the last ones to finish are short and no core idles long at the end of a batch."""
    return expected_transactions(cfg) * cfg.max_attempts


def tasks_of(sweep: Sweep, replications: int | None = None, engine: str = "fast") -> list[dict]:
    reps = replications or sweep.replications
    out = []
    for point in sweep.points:
        cfg = point.config
        columns = {**point.params, **standard_columns(cfg), "config_hash": point.hash}
        cost = run_cost(cfg)
        for rep in range(reps):
            key = RunKey.expected(cfg, rep)
            out.append({"key": key.name, "run_key": key.ingredients(), "config": cfg.to_dict(),
                        "params": point.params, "columns": columns, "replication": rep, "engine": engine,
                        "cost": cost})
    return out


def run_sweep(sweep: Sweep, out_dir: str | Path, *, jobs: int | None = None, executor: str = "local",
              scheduler: str | None = None, force: bool = False, replications: int | None = None,
              engine: str = "fast", progress: bool = True, log=print, limits: Limits | None = None,
              bar: RunProgress | None = None) -> Outcome:
    """`limits`: refuse (ConfigError) if the heaviest run to do is estimated above them; None runs anything.
    `bar`: the command's progress bar when it spans more than this grid (else the grid draws its own, `progress`)."""
    start = time.perf_counter()
    out = Path(out_dir)
    store = ResultStore(out)
    tasks = tasks_of(sweep, replications, engine)
    todo, stale = _to_do(tasks, store, force)
    reused = len(tasks) - len(todo)
    if reused:
        log(f"reusing {reused} of {len(tasks)} finished runs in {out} (--force recomputes)")
    for why, n in stale.items():
        log(f"recomputing {n} finished run(s): {why}")
    if todo:
        _check_size(sweep, todo, limits, log)
    atomic_write_text(out / "sweep.yaml", yaml.safe_dump(
        {**sweep.source, "replications": replications or sweep.replications}, sort_keys=False))
    todo.sort(key=lambda t: -t["cost"])
    failed = ran = 0
    if todo:
        jobs = jobs or default_jobs()
        if engine == "fast":   # compiled here once, not by every worker at once: the bar starts after it
            configs = {p.hash: p.config for p in sweep.points}
            precompile([configs[h] for h in dict.fromkeys(t["columns"]["config_hash"] for t in todo)], log)
        ex = make_executor(executor, jobs, scheduler)
        own = bar is None
        bar = RunProgress(progress) if own else bar
        bar.add(len(todo))
        try:
            for result in ex.map_unordered(execute, todo, on_lost=failure):
                store.write(result["key"], result)
                ran += 1
                if result["status"] != "ok":
                    failed += 1
                    log(f"run {result['key']} failed: {result['error'].strip().splitlines()[-1]}")
                bar.done(failed=failed)
        finally:
            if own:
                bar.close()
            ex.close()
    assemble(tasks, store, out)
    return Outcome(len(tasks), reused, ran, failed, time.perf_counter() - start, out)


def precompile(configs, log) -> None:
    """Compile the loop of every design the configs run, in this process, before any worker starts
    (`sim.engines.fast.compile_designs`): workers then load them from numba's cache."""
    from ..engines.fast import compile_designs
    compile_designs(configs, say=log)


def _to_do(tasks: list[dict], store: ResultStore, force: bool) -> tuple[list[dict], dict[str, int]]:
    """The tasks to run, and why finished runs among them are recomputed (reason -> count)."""
    todo, stale = [], {}
    for t in tasks:
        reusable, why = (False, "") if force else store.check(RunKey(**t["run_key"]))
        if not reusable:
            todo.append(t)
        if why:
            stale[why] = stale.get(why, 0) + 1
    return todo, stale


def _check_size(sweep: Sweep, todo: list[dict], limits: Limits | None, log) -> None:
    """Estimate the heaviest configuration to run, say it, and refuse it above `limits`; of tied ones the first in
    the grid's order, so that the line names the same one on every run."""
    configs = {p.hash: p for p in sweep.points}
    todo_hashes = {t["columns"]["config_hash"] for t in todo}
    hashes = [h for h in configs if h in todo_hashes]
    est, point = max(((estimate(configs[h].config), configs[h]) for h in hashes), key=lambda e: e[0].wall_s)
    where = ", ".join(f"{k}={v}" for k, v in point.params.items()) or "the base config"
    log(f"estimate for the heaviest configuration ({where}): {est.describe()} per run")
    guard(est, limits, f"the configuration {where}")


def assemble(tasks: list[dict], store: ResultStore, out: Path) -> "pd.DataFrame":
    """The results table from the run files of exactly this sweep's tasks (older runs in DIR are ignored)."""
    import pandas as pd
    rows, per_table, per_writer = [], [], []
    for t in tasks:
        res = store.read(t["key"])
        if res is None:
            continue
        common = {**t["columns"], "replication": t["replication"]}
        rows.append({**common, "status": res["status"], "error": res["error"],
                     **{k: _num(v) for k, v in res["summary"].items() if k not in common}})
        for pt in res["per_table"]:
            per_table.append({**common, **{k: _num(v) for k, v in pt.items()}})
        for pw in res.get("per_writer", ()):      # run files written before writers have none
            per_writer.append({**common, **{k: _num(v) for k, v in pw.items()}})
    df = pd.DataFrame(rows)
    atomic_write_parquet(out / "results.parquet", df)
    for name, part in (("per_table", per_table), ("per_writer", per_writer)):
        if part:
            atomic_write_parquet(out / f"{name}.parquet", pd.DataFrame(part))
        else:
            (out / f"{name}.parquet").unlink(missing_ok=True)
    return df


def _num(v):
    return math.nan if v is None else v
