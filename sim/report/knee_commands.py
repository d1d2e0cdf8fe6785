"""The commands that bound the knees a grid cannot (sim.knee.status: `undecided`, `below_range`, `above_range`),
or narrow the ones it bounds more loosely than a knee search would (a 95 % CI wider than the search's target,
+-5 % of the knee: `wide`), and their answers read back into the grid's knee table.

- `report/base.yaml`: the sweep's base as a config file; a row that is not `ok`, or `wide`, names `sim knee` on it
  with the cell's swept values as `--set` (`knee_command`).
- `report/knee-unbounded.yaml`: one knee sweep of every such cell (a zip of their swept values); run into
  `DIR/knee-unbounded/`, its knees replace the grid's for those cells when the report is written again
  (`knee_source` `search`). A sweep file with `report: {knees: search}` has `sim sweep` run it before its report
  (`grid_unbounded_sweep`, sim.sweep.open_knees).
"""
from __future__ import annotations

import math
import shlex
from pathlib import Path

import pandas as pd
import yaml

from ..results_io import atomic_write_text
from .aggregate import _hashable, _key, format_value, knee_group_columns, knee_table, ok_rows, resolve_layout

BASE_NAME = "base.yaml"
UNBOUNDED = "knee-unbounded"
#: measured: the 90 cells 4c's grid leaves open or wide searched in 149 s on 2 cores (2026-11-29, model version 13,
#: the model handed to compiled code by reference: `sim sweep experiments/4c.yaml`'s searches on a fresh clone,
#: 1,329 runs; 162 s at model version 10; model version 6's took 475 s, before long reads were one draw); the
#: estimate a report gives for its cells to search (smoke's 4 cells: 5.8 s of searching at version 10)
SEARCH_S_PER_CELL = 149 / 90
#: the knee searches' spec for a grid's unbounded cells (experiments/4c-knee.yaml's; the start bracket is the grid's
#: own loads, so the pilot begins where the grid left off)
SEARCH_SPEC = {"threshold": 0.95, "precision": 0.05, "max_runs": 36, "halfwidth": 0.05}
#: a search record's columns, as the grid knee table names them
_FROM_SEARCH = {"knee_status": "knee_status", "knee_reason": "knee_reason", "knee_bound_cps": "knee_bound_cps",
                "knee_offered_cps": "offered_cps", "knee_offered_cps_low": "offered_cps_low",
                "knee_offered_cps_high": "offered_cps_high", "knee_throughput_cps": "knee_throughput_cps",
                "knee_throughput_cps_low": "knee_throughput_cps_low",
                "knee_throughput_cps_high": "knee_throughput_cps_high", "knee_inter_arrival": "value",
                "knee_success_rate": "success_rate", "knee_vo_success_rate": "vo_success_rate",
                "latency_mean_ms": "commit_latency_mean_ms", "p99_ms": "commit_latency_p99_ms",
                "fa_latency_mean_ms": "fa_commit_latency_mean_ms", "vo_latency_mean_ms": "vo_commit_latency_mean_ms",
                "fa_p99_ms": "fa_commit_latency_p99_ms", "vo_p99_ms": "vo_commit_latency_p99_ms"}


def report_knees(results_dir: Path, out: Path, ok: pd.DataFrame, keys: list[str], load: str) -> pd.DataFrame:
    """The grid knee table of a report (aggregate.knee_table over `ok`, the finished runs, grouped by `keys`),
    with `knee_command` on `out/base.yaml`, the knees a search of `results_dir/knee-unbounded/` found in place
    of the grid's (`knee_source`), and `out/knee-unbounded.yaml` for the cells still not bounded."""
    results_dir, out = Path(results_dir), Path(out)
    base = write_base_config(results_dir, out)
    knee = knee_table(ok, keys, load,
                      command_for=lambda runs, row: knee_command(base, runs, load) if to_search(row) else "")
    knee["knee_source"] = "grid"
    write_unbounded_sweep(results_dir, out, knee, ok, keys, load)    # every cell the grid leaves open: a rerun
    searched = results_dir / UNBOUNDED / "knees.parquet"           # reuses the searches' cached runs
    if searched.is_file():
        knee = with_searched(knee, pd.read_parquet(searched), keys)
    return knee


def write_base_config(results_dir: Path, out: Path) -> str | None:
    """Write the sweep's base config (from `results_dir/sweep.yaml`) to `out/base.yaml`; return the path a command
    names it by, `results_dir/report/base.yaml` (`out` is the report's staging directory), or None when the results
    directory has no sweep file."""
    base = _sweep(results_dir).get("base")
    if base is None:
        return None
    atomic_write_text(Path(out) / BASE_NAME, "# the sweep's base config (sweep.yaml): `sim knee` on it bounds a "
                      "cell's knee\n" + yaml.safe_dump(base, sort_keys=False))
    return str(Path(results_dir) / "report" / BASE_NAME)


def _sweep(results_dir: Path) -> dict:
    path = Path(results_dir) / "sweep.yaml"
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def cell_overrides(runs: pd.DataFrame, load: str) -> dict:
    """A cell's swept config paths and values: every dotted-path column but the load's that is constant over its
    runs."""
    out = {}
    for c in runs.columns:
        if "." not in str(c) or c == load or str(c).endswith(("inter_arrival.mean_ms", "inter_arrival.median_ms")):
            continue
        values = runs[c].dropna().unique()
        if len(values) == 1:
            out[c] = values[0]
    return out


def knee_command(config: str, runs: pd.DataFrame, load: str) -> str:
    """`sim knee` on one group's configuration: `config` (the sweep's base) with the cell's swept values
    (`cell_overrides`) as --set overrides."""
    sets = [f"--set {shlex.quote(f'{c}={format_value(v)}')}" for c, v in cell_overrides(runs, load).items()]
    return " ".join(["sim knee", shlex.quote(str(config)), *sets])


def wide(row) -> bool:
    """An `ok` grid knee whose 95 % CI (offered rate) is wider than a knee search's target, +-SEARCH_SPEC's
    halfwidth of the knee."""
    if row["knee_status"] != "ok":
        return False
    halfwidth = (row["knee_offered_cps_high"] - row["knee_offered_cps_low"]) / 2
    return bool(halfwidth > SEARCH_SPEC["halfwidth"] * row["knee_offered_cps"])


def to_search(row) -> bool:
    """A cell a knee search should answer: its grid knee is not `ok`, or `wide`."""
    return row["knee_status"] != "ok" or wide(row)


def write_unbounded_sweep(results_dir: Path, out: Path, knee: pd.DataFrame, ok: pd.DataFrame, keys: list[str],
                          load: str) -> None:
    """`out/knee-unbounded.yaml`: `unbounded_sweep`'s knee sweep, when there is one."""
    spec = unbounded_sweep(results_dir, knee, ok, keys, load)
    if spec is not None:
        atomic_write_text(Path(out) / f"{UNBOUNDED}.yaml", yaml.safe_dump(spec, sort_keys=False))


def unbounded_sweep(results_dir: Path, knee: pd.DataFrame, ok: pd.DataFrame, keys: list[str],
                    load: str) -> dict | None:
    """A knee sweep (SEARCH_SPEC, the start bracket the grid's slowest and fastest gaps) of the cells whose grid
    knee (`knee`) is not `ok` or is `wide`, a zip of their swept values; None when there is no such cell, the grid
    has no sweep file, or its cells do not all sweep the same paths."""
    base = _sweep(results_dir).get("base")
    open_ = {_key(tuple(r[k] for k in keys)) for _, r in knee.iterrows() if to_search(r)}
    if base is None or not open_ or not keys:
        return None
    cells = [cell_overrides(part, load) for key, part in _hashable(ok, keys).groupby(keys, dropna=False)
             if _key(key) in open_]
    paths = list(cells[0]) if cells else []
    if not paths or any(list(c) != paths for c in cells):
        return None
    gaps = pd.to_numeric(ok[load], errors="coerce")
    return {"name": UNBOUNDED, "description": f"knee searches of the cells whose knee the grid of {results_dir} "
            "does not bound, or bounds wider than +-5 % (written by its report)", "base": base,
            "zip": [{p: [_plain(c[p]) for c in cells] for p in paths}],
            "knee": {**SEARCH_SPEC, "start": [float(gaps.min()), float(gaps.max())]}}


def grid_unbounded_sweep(results_dir: Path, spec_report: dict | None) -> dict | None:
    """The knee sweep the report of `results_dir` will write as `report/knee-unbounded.yaml` (`unbounded_sweep`),
    from its results alone, before any report: what `sim sweep` searches for a file with `report: {knees: search}`.
    None when that report has no grid knee table (no finished run, or a writers sweep) or no cell to search."""
    from .writers import is_writers_sweep
    ok = ok_rows(pd.read_parquet(Path(results_dir) / "results.parquet"))
    if ok.empty or is_writers_sweep(ok):
        return None
    layout, _ = resolve_layout(ok, spec_report)
    keys, load = knee_group_columns(layout), layout["cols"]
    return unbounded_sweep(results_dir, knee_table(ok, keys, load), ok, keys, load)


def _plain(v):
    """A swept value as YAML reads it back: numpy scalars as Python's, a structured value (flow YAML) parsed."""
    if hasattr(v, "item"):
        return v.item()
    if isinstance(v, str) and v.startswith("{"):
        return yaml.safe_load(v)
    return v


def unbounded_command(results_dir: Path) -> str:
    """The command that searches the cells a written report's grid did not bound (or bound wide), then rewrites
    the report."""
    d = Path(results_dir)
    return (f"sim sweep {shlex.quote(str(d / 'report' / f'{UNBOUNDED}.yaml'))} --out "
            f"{shlex.quote(str(d / UNBOUNDED))} --no-report && sim report {shlex.quote(str(d))}")


def unbounded_note(results_dir: Path) -> str | None:
    """One line on a written report's knees: how many have each status (and how many `ok` grid knees are `wide`),
    and, when some are open or wide, the command that searches them and its estimated time (SEARCH_S_PER_CELL);
    None without a knee table."""
    d = Path(results_dir)
    path = d / "report" / "knee.csv"
    if not path.is_file():
        return None
    knee = pd.read_csv(path, dtype={"knee_reason": str, "knee_source": str})
    counts = knee["knee_status"].value_counts()
    source = knee["knee_source"] if "knee_source" in knee.columns else pd.Series("grid", index=knee.index)
    grid = source != "search"
    n_wide = int(sum(wide(r) for _, r in knee[grid].iterrows()))
    parts = [f"{int(counts[s])} {s}" + (f" ({n_wide} of them grid knees wider than +-5 %)" if s == "ok" and n_wide
                                         else "")
             for s in ("ok", "below_range", "above_range", "undecided") if s in counts]
    line = "knees: " + ", ".join(parts)
    open_ = knee["knee_status"] != "ok"
    searched = knee[open_ & ~grid]
    if len(searched):
        line += f"; {len(searched)} still without a bounded knee after a knee search (knee_reason, knee_bound_cps)"
    n_open = int((open_ & grid).sum())
    n = n_open + n_wide
    if not n or not (d / "report" / f"{UNBOUNDED}.yaml").is_file():
        return line
    seconds = n * SEARCH_S_PER_CELL
    took = f"{math.ceil(seconds)} s" if seconds < 60 else f"{math.ceil(seconds / 60)} min"
    what = " and ".join(w for w in (f"bound the other {n_open}" if n_open else "",
                                    f"narrow the {n_wide} wide" if n_wide else "") if w)
    return f"{line}; to {what} with knee searches (about {took} on 2 cores): {unbounded_command(d)}"


def with_searched(knee: pd.DataFrame, searched: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`knee` with each cell a search of `searched` (a knees.parquet) answered in its place: its knee as reported
    and the values at it (`_FROM_SEARCH`), `knee_source` `search`, no further command."""
    knee = knee.copy()
    if not set(keys) <= set(searched.columns):
        return knee
    found = {_key(tuple(r[k] for k in keys)): r for _, r in _hashable(searched, keys).iterrows()}
    for i, row in _hashable(knee, keys).iterrows():
        r = found.get(_key(tuple(row[k] for k in keys)))
        if r is None:
            continue
        bounded = r["knee_status"] == "ok"
        for col, src in _FROM_SEARCH.items():
            if col in knee.columns:
                keep = bounded or col in ("knee_status", "knee_reason", "knee_bound_cps")
                knee.at[i, col] = r.get(src, math.nan) if keep else math.nan
        knee.at[i, "knee_command"] = ""
        knee.at[i, "knee_source"] = "search"
    return knee
