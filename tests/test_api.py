"""The public API, as a notebook uses it."""
import matplotlib
import pandas as pd
import pytest

from sim import api
from sim.config import set_path

SMALL = {"duration_ms": 300_000, "warmup_ms": 60_000, "cooldown_ms": 60_000,
         "workload.runtime.median_ms": 2000, "workload.runtime.min_ms": 100, "workload.inter_arrival.mean_ms": 300}


def test_config_run_and_replicate():
    cfg = api.config(None, **SMALL)
    assert api.config(cfg, seed=3).seed == 3
    res = api.run(cfg)
    assert 0 <= res.summary["success_rate"] <= 1 and len(res.records) > 0
    reps = api.replicate(cfg, 3)
    assert len(reps) == 3 and reps.replication.tolist() == [0, 1, 2]
    assert reps.committed.nunique() > 1          # independent streams per replication


def test_sweep_results_aggregate_and_heatmap(tmp_path):
    base = {}
    for path, value in SMALL.items():       # the sweep base is nested: SMALL's dotted workload paths too
        set_path(base, path, value)
    spec = {"name": "api", "base": base,
            "grid": {"workload.num_tables": [1, 3],
                     "retry.table": [{"policy": "immediate"}, {"policy": "fixed", "delay_ms": 50}]},
            "replications": 2}
    df = api.sweep(spec, tmp_path / "out", jobs=1, progress=False)
    assert len(df) == 8 and set(df["retry.table"]) == {"{policy: immediate}", "{policy: fixed, delay_ms: 50}"}
    assert (df["inter_arrival_ms"] == SMALL["workload.inter_arrival.mean_ms"]).all()   # the base's workload ran
    pd.testing.assert_frame_equal(df, api.load_results(tmp_path / "out"))
    agg = api.aggregate(df, by=["num_tables", "retry.table"])
    assert len(agg) == 4 and (agg.n_reps == 2).all() and "success_rate_ci95" in agg.columns
    ax = api.heatmap(df[df["retry.table"] == "{policy: immediate}"], "success_rate")
    assert isinstance(ax, matplotlib.axes.Axes)


def test_knee_sweep_returns_the_knees_table(tmp_path):
    base = {"duration_ms": 600_000, "warmup_ms": 120_000, "cooldown_ms": 120_000,
            "workload": {"runtime": {"median_ms": 2000, "sigma": 0.5, "min_ms": 0},
                         "writers": {"count": 1, "mode": "closed"}}}
    spec = {"name": "api_knee", "base": base, "grid": {"workload.num_tables": [1]},
            "knee": {"start": [1, 16], "max_runs": 4, "halfwidth": 0.5}}
    knees = api.knee_sweep(spec, tmp_path / "out", jobs=1)
    assert len(knees) == 1 and knees.loc[0, "unit"] == "writers" and knees.loc[0, "status"] != "failed"
    pd.testing.assert_frame_equal(knees, pd.read_parquet(tmp_path / "out" / "knees.parquet"))
    with pytest.raises(ValueError, match="not a knee sweep"):
        api.knee_sweep({"name": "plain", "base": base}, tmp_path / "plain")


def test_config_overrides_leave_the_callers_dict_as_it_was():
    """A dotted override into a nested section writes into a copy: a base dict reused for several configs (a
    notebook's loop) gives each its own overrides only."""
    base = {"workload": {"runtime": {"median_ms": 1000, "sigma": 0, "min_ms": 0}}}
    a = api.config(base, **{"workload.runtime.median_ms": 5, "workload.num_tables": 3})
    b = api.config(base)
    assert base == {"workload": {"runtime": {"median_ms": 1000, "sigma": 0, "min_ms": 0}}}
    assert (a.workload.runtime.median_ms, a.workload.num_tables) == (5, 3)
    assert (b.workload.runtime.median_ms, b.workload.num_tables) == (1000, 1)
