"""The knee searches of a grid sweep's open knees, run by `sim sweep` itself when the sweep file asks for them
(`report: {knees: search}`): after the grid, every cell whose grid knee is not `ok` within +-5 % gets a knee
search, the same cells and spec its report writes as `report/knee-unbounded.yaml`
(`sim.report.knee_commands.grid_unbounded_sweep`), run into `DIR/knee-unbounded/` as that file's command would, so
the report reads their knees in place of the grid's and a rerun reuses every run of either way."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .knee import KneeOutcome, run_knee_sweep
from .progress import RunProgress
from .spec import parse


@dataclass(frozen=True)
class Searched:
    """The searches' knees (`DIR/knee-unbounded/knees.parquet`, a row per cell) and what they took."""
    knees: pd.DataFrame
    outcome: KneeOutcome
    path: Path


def search_open_knees(results_dir: Path, spec_report: dict, *, jobs=None, executor="local", scheduler=None,
                      engine="fast", force=False, progress: RunProgress | None = None) -> Searched | None:
    """Search the knees the grid in `results_dir` leaves open or wide; None when there is none to search."""
    from ..report.knee_commands import UNBOUNDED, grid_unbounded_sweep
    spec = grid_unbounded_sweep(results_dir, spec_report)
    if spec is None:
        return None
    sweep = parse(spec, source_name=UNBOUNDED)
    out = Path(results_dir) / UNBOUNDED
    knees, outcome = run_knee_sweep(sweep, sweep.knee, out, jobs=jobs, executor=executor, scheduler=scheduler,
                                    engine=engine, force=force, log=progress.write if progress else None,
                                    progress=progress)
    return Searched(knees, outcome, out / "knees.parquet")
