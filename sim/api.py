"""The public Python API: what notebooks and users call, without touching internals.

    from sim import api
    cfg = api.config("experiments/smoke.yaml" or None, **{"workload.num_tables": 5})
    res = api.run(cfg)                          # one run: RunResult (summary, records, per_table, per_writer,
                                                #   history)
    df = api.replicate(cfg, 5)                  # one row per replication (flat summaries)
    df = api.sweep({"base": {...}, "grid": {...}}, out="results/mine")   # the results table
    df = api.load_results("results/4c")
    agg = api.aggregate(df, by=["provider", "num_tables"])               # means and 95 % CIs
    api.heatmap(agg, "success_rate", rows="num_tables", cols="inter_arrival_ms")
    knee = api.design_knees(df)                 # catalog designs: knee per design x provider x tables x FA
    knees = api.knee_sweep({"base": {...}, "grid": {...}, "knee": {...}}, out="results/mine")   # knee per cell
    doc = api.knee(cfg)                         # one configuration's knee search (knee.json's document)
    doc, tables = api.headroom({"workload": {"trace": {"path": "ours.parquet"}}})   # a trace's headroom, per table
    tr = api.trace_of(res)                      # a run's commits as a trace; api.read_trace, api.write_trace
"""
from __future__ import annotations

import copy

from pathlib import Path
from typing import Any

import pandas as pd

from . import config as _config
from .config import Config, replaced
from .run import RunResult
from .run import run as _run


def config(source: str | Path | dict | Config | None = None, **overrides: Any) -> Config:
    """A validated config from a YAML path, a dict, an existing Config or the defaults, with dotted-path
    overrides given as keyword arguments: `config(None, **{"workload.num_tables": 5})`."""
    if isinstance(source, Config):
        return replaced(source, overrides) if overrides else source
    if source is None or isinstance(source, dict):
        data = copy.deepcopy(source or {})           # an override never writes into the caller's dict
        for path, value in overrides.items():
            _config.set_path(data, path, value)
        return _config.from_dict(data)
    return _config.load(source, overrides)


def run(cfg: Config | dict | str | Path, replication: int = 0, *, history: bool = False,
        engine: str = "fast", stream: bool | None = None) -> RunResult:
    """One replication of one configuration. A large run streams (keeps no records, `sim.run.run`) unless
    `stream=False`."""
    return _run(config(cfg), replication, history=history, engine=engine, stream=stream)


def replicate(cfg: Config | dict | str | Path, replications: int, *, engine: str = "fast") -> pd.DataFrame:
    """Flat summaries of replications 0..n-1, one row each (independent streams per replication)."""
    c = config(cfg)
    return pd.DataFrame([_run(c, r, engine=engine).summary for r in range(replications)])


def sweep(spec: str | Path | dict, out: str | Path | None = None, *, jobs: int | None = None,
          replications: int | None = None, executor: str = "local", scheduler: str | None = None,
          force: bool = False, progress: bool = True, report: bool = False) -> pd.DataFrame:
    """Run a sweep (a file or the same structure as a dict) and return its results table. Results are kept
    under `out` (default `results/<name>`): rerunning reuses finished runs."""
    from .sweep import load, parse, run_sweep
    s = parse(spec) if isinstance(spec, dict) else load(spec)
    out_dir = Path(out) if out is not None else Path("results") / s.name
    run_sweep(s, out_dir, jobs=jobs, executor=executor, scheduler=scheduler, force=force,
              replications=replications, progress=progress, log=lambda *_: None)
    if report:
        from .report import write_report
        write_report(out_dir, s.report or None)
    return load_results(out_dir)


def knee_sweep(spec: str | Path | dict, out: str | Path | None = None, *, jobs: int | None = None,
               executor: str = "local", scheduler: str | None = None, force: bool = False,
               progress: bool = False, report: bool = False) -> pd.DataFrame:
    """A knee sweep (a sweep with a `knee:` section, docs/knee.md#knee-sweeps): one knee search per grid cell,
    the knees table returned (`DIR/knees.parquet`; every point in `DIR/knee_points.parquet`). Runs are cached
    under `out` (default `results/<name>`), so a rerun reuses them."""
    from .sweep import load, parse
    from .sweep.knee import run_knee_sweep
    s = parse(spec) if isinstance(spec, dict) else load(spec)
    if s.knee is None:
        raise ValueError(f"{s.name}: not a knee sweep (no knee: section); use api.sweep")
    out_dir = Path(out) if out is not None else Path("results") / s.name
    knees, _ = run_knee_sweep(s, s.knee, out_dir, jobs=jobs, executor=executor, scheduler=scheduler,
                              force=force, log=print if progress else None)
    if report:
        from .report import write_report
        write_report(out_dir, s.report or None)
    return knees


def knee(cfg: Config | dict | str | Path, out: str | Path | None = None, *, jobs: int | None = None,
         executor: str = "local", scheduler: str | None = None, force: bool = False, progress: bool = False,
         **spec: Any) -> dict:
    """One configuration's knee search (docs/knee.md), as `sim knee` runs it: its document (knee.json's: `knee`,
    `points`, and for a trace's headroom `tables`), written to `out`/knee.json too. `spec`: the knee spec's keys
    (`param`, `threshold`, `start`, `max_runs`, ...; docs/knee.md#knee-sweeps). Runs are cached under `out`
    (default `results/knee-<config hash>`), so a rerun reuses them."""
    from .config import config_hash
    from .knee import KneeSearch, parse_spec
    from .results_io import atomic_write_text, dumps
    from .sweep.knee import knee_json, run_searches
    c = config(cfg)
    search = KneeSearch(c, parse_spec(spec))
    out_dir = Path(out) if out is not None else Path("results") / f"knee-{config_hash(c)}"
    outcome = run_searches([search], out_dir, jobs=jobs, executor=executor, scheduler=scheduler, force=force,
                           log=print if progress else None)
    doc = knee_json(search, {**outcome.results[0], "new_runs": outcome.new_runs})
    atomic_write_text(out_dir / "knee.json", dumps(doc))
    return doc


def headroom(cfg: Config | dict | str | Path, out: str | Path | None = None, **kwargs: Any
             ) -> tuple[dict, pd.DataFrame]:
    """A trace's headroom (docs/knee.md, "Headroom"): the knee over `workload.trace.rate_scale` (`knee`'s
    arguments), and each table's k as a DataFrame, the whole history's first (`table`, `table_rank`,
    `window_commits`, `checked`, `k`, `k_low`, `k_high`, `k_status`, `k_bound`, `k_reason`, `k_text`).
    `doc["knee"]["rate_scale"]` (with `rate_scale_ci95`) is how many times its load the history takes, and
    `doc["knee"]["binding_table"]` the table that breaks first."""
    from .knee.headroom import k_text
    from .knee.param import SCALE_PARAM
    doc = knee(cfg, out, **{"param": SCALE_PARAM, **kwargs})
    tables = pd.DataFrame(doc["tables"])
    return doc, tables.assign(k_text=[k_text(r) if r["checked"] else "not checked" for r in doc["tables"]])


def trace_of(result: RunResult) -> pd.DataFrame:
    """A run's commits as a trace (docs/FORMATS.md, "Trace"): what `sim run --trace-out` writes (the run must have
    kept its records: `api.run(..., stream=False)` for a large one)."""
    from .trace.export import trace_of as _trace_of
    return _trace_of(result.config, result.columns)


def read_trace(path: str | Path) -> pd.DataFrame:
    """A trace file (Parquet or CSV), checked: docs/FORMATS.md, "Trace"."""
    from .trace import read_trace as _read
    return _read(path)


def write_trace(df: pd.DataFrame, path: str | Path) -> None:
    """Write a trace (checked as `read_trace` checks a file), Parquet or CSV by the extension."""
    from .trace import write_trace as _write
    _write(df, path)


def load_results(path: str | Path) -> pd.DataFrame:
    """A sweep's results table (`DIR/results.parquet`, or the file itself)."""
    p = Path(path)
    return pd.read_parquet(p / "results.parquet" if p.is_dir() else p)


def load_per_table(path: str | Path) -> pd.DataFrame:
    p = Path(path)
    return pd.read_parquet(p / "per_table.parquet" if p.is_dir() else p)


def load_per_writer(path: str | Path) -> pd.DataFrame:
    """A writers sweep's per-writer rows (`DIR/per_writer.parquet`; none for open-loop sweeps)."""
    p = Path(path)
    return pd.read_parquet(p / "per_writer.parquet" if p.is_dir() else p)


def aggregate(df: pd.DataFrame, by: list[str] | None = None, metrics: list[str] | None = None) -> pd.DataFrame:
    """Means over replications with 95 % confidence half-widths (`<metric>_ci95`)."""
    from .report import aggregate as _aggregate
    return _aggregate(df, by=by, metrics=metrics)


def knee_table(df: pd.DataFrame, group_by: list[str], load: str = "inter_arrival_ms") -> pd.DataFrame:
    """Usable throughput per group: where success over the transactions that began to commit (and VO success)
    crosses 95 %, by the knee search's binomial regression over the grid's runs near the crossing, with its CI; or
    a status with its bound (`knee_status`, `knee_bound_cps`; docs/knee.md#grid-knee). `knee_text(row)` words a
    row as the report does."""
    from .report import knee_table as _knee
    return _knee(df, group_by, load)


def knee_text(row, prefix: str = "") -> str:
    """A knee row as read: `12.3 [11.0, 13.1] c/s`, `below_range (< 0.40 c/s)`, `above_range (> 40.0 c/s)`,
    `undecided (why)` (sim.knee.status)."""
    from .knee.status import knee_text as _text
    return _text(row, prefix)


def design_knees(df: pd.DataFrame, load: str = "inter_arrival_ms", baseline: str | None = "file") -> pd.DataFrame:
    """The knee per design x provider x tables x FA ratio (and any other swept key that varies within those),
    with unfinished share, throttled resends per commit, mean latency and GETs per commit at the knee (`ok` rows;
    the others carry a status with its bound, `knee_status` and `knee_bound_cps`) and `ratio_to_<baseline>`."""
    from .report.designs import design_knees as _knees
    from .report.designs import with_ratio_to
    knee = _knees(df, load)
    return with_ratio_to(knee, baseline) if baseline and (knee["design"] == baseline).any() else knee


def design_headline(knee: pd.DataFrame, tables=(1, 50), mixes=(1.0, 0.9)) -> pd.DataFrame:
    """The report's headline table of `design_knees`: rows tables x mix x design, one column per provider."""
    from .report.designs import headline
    return headline(knee, tables, mixes)


def heatmap(df: pd.DataFrame, metric: str, rows: str = "num_tables", cols: str = "inter_arrival_ms", ax=None,
            **kwargs):
    """A seaborn heatmap of `metric` (aggregated over replications first if needed); returns the Axes."""
    from .report import aggregate as _aggregate
    from .report import heatmap as _heatmap
    if "n_reps" not in df.columns:
        df = _aggregate(df)
    return _heatmap(df, metric, rows, cols, ax=ax, **kwargs)


def write_report(results_dir: str | Path, layout: dict | None = None) -> Path:
    from .report import write_report as _write
    return _write(results_dir, layout)
