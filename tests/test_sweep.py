"""Sweeps: the file format, resume after a kill, executor equivalence, the report on smoke results."""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from sim.config import ConfigError
from sim.sweep import load, parse, run_sweep

from helpers import ROOT, results_table, run_cli

SMOKE = ROOT / "experiments" / "smoke.yaml"
VOLATILE = ["wall_s"]   # how long a run took is the only column allowed to differ between two executions


def test_grid_and_zip_expand_to_the_product():
    s = parse({"name": "t", "base": {"catalog": {"backend": "service"}},
               "grid": {"catalog.latency_ms": [1, 10], "workload.num_tables": [1, 2, 5]},
               "zip": [{"workload.fast_append_ratio": [1.0, 0.5], "commit.max_retries": [10, 4]}]})
    pts = s.points
    assert len(pts) == 2 * 3 * 2
    assert {(p.config.workload.fast_append_ratio, p.config.commit.max_retries) for p in pts} == {(1.0, 10), (0.5, 4)}
    assert len({p.hash for p in pts}) == 12


@pytest.mark.parametrize("doc, path", [
    ({"grid": {"workload.num_tabels": [1, 2]}}, "grid.workload.num_tabels"),
    ({"grid": {"workload": [1]}}, "grid.workload"),
    ({"grid": {"retry.table": ["immediate"]}}, "grid.retry.table"),
    ({"grid": {"workload.num_tables": []}}, "grid.workload.num_tables"),
    ({"zip": [{"seed": [1, 2], "workload.num_tables": [1]}]}, "zip[0]"),
    ({"grdi": {}}, "grdi"),
    ({"base": {"io": {"max_paralel": 2}}}, "base.io.max_paralel"),
    ({"report": {"rowz": "x"}}, "report.rowz"),
    ({"report": {"knees": "searched"}}, "report.knees"),
    ({"report": {"knees": "search"}, "grid": {"workload.num_tables": [1, 2]}}, "report.knees"),     # no load axis
    ({"report": {"knees": "search"}, "knee": {}}, "report.knees"),                      # a knee sweep searches all
    ({"grid": {"workload.num_tables": [1, 0]}}, "workload.num_tables"),
    ({"replications": 0}, "replications"),
])
def test_bad_sweep_files_name_the_path(doc, path):
    with pytest.raises(ConfigError) as exc:
        parse({"name": "t", **doc})
    assert exc.value.path == path


@pytest.mark.parametrize("name, n", [("4a", 240), ("4b", 240), ("4c", 900), ("4a-zipf", 240), ("4b-zipf", 240),
                                     ("1", 10), ("2", 80), ("3a", 70), ("3b", 70)])
def test_experiment_sizes(name, n):
    for sub in ("", "published/"):
        s = load(ROOT / "experiments" / f"{sub}{name}.yaml")
        assert len(s.points) == n


def test_published_setup_is_the_documented_one():
    for p in (ROOT / "experiments" / "published").glob("*.yaml"):
        sweep = load(p)
        assert sweep.replications == 5
        for point in sweep.points[:3]:
            c = point.config
            assert c.commit.first_attempt == "stale" and c.commit.metadata_read_on_failure
            assert c.workload.inter_arrival.distribution == "lognormal" and c.workload.inter_arrival.sigma == 0.5
            assert (c.drain_limit_ms, c.warmup_ms, c.cooldown_ms, c.duration_ms) == (0, 900_000, 900_000, 3_600_000)
            assert c.io.max_parallel == 1 and not c.catalog.table_metadata_inlined
            assert c.storage.throttle is False            # the seed did not model per-object limits


def test_dry_run_prints_the_count():
    r = run_cli("sweep", ROOT / "experiments" / "4c.yaml", "--dry-run")
    assert r.returncode == 0 and r.stdout.strip() == "900"


def _table(d: Path) -> pd.DataFrame:
    return results_table(d, VOLATILE)


def test_rerun_reuses_everything(smoke_reference, tmp_path):
    logs = []
    outcome = run_sweep(load(SMOKE), smoke_reference, jobs=1, progress=False, log=logs.append)
    assert (outcome.reused, outcome.ran) == (16, 0)
    assert "reusing 16 of 16" in logs[0]


@pytest.mark.slow   # a sweep killed and resumed (tests/test_faults.py kills workers mid-sweep by default)
def test_resume_after_kill(smoke_reference, tmp_path):
    """Kill a sweep mid-way (SIGKILL: no chance to clean up), rerun it: it reuses what finished, computes the
    rest, and the final table equals an uninterrupted sweep's."""
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "sim", "sweep", str(SMOKE), "--out", str(out), "--jobs", "1", "--no-report",
           "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline:
        done = list((out / "runs").glob("*.json")) if (out / "runs").is_dir() else []
        if len(done) >= 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = list((out / "runs").glob("*.json"))
    assert 4 <= len(finished) < 16, "the sweep should have been killed mid-way"
    for f in finished:
        assert json.loads(f.read_text())["status"] == "ok"   # every file present is whole
    r = run_cli(*cmd[3:])
    assert r.returncode == 0, r.stderr
    assert f"reusing {len(finished)} of 16" in r.stdout + r.stderr
    pd.testing.assert_frame_equal(_table(out), _table(smoke_reference), check_exact=True)


@pytest.mark.slow   # the optional executor (the process pool's same table stays in the default run)
def test_dask_executor_gives_the_same_table(smoke_reference, tmp_path):
    pytest.importorskip("dask.distributed")
    out = tmp_path / "dask"
    outcome = run_sweep(load(SMOKE), out, jobs=2, executor="dask", progress=False, log=lambda *_: None)
    assert outcome.failed == 0
    pd.testing.assert_frame_equal(_table(out), _table(smoke_reference), check_exact=True)


def test_process_pool_gives_the_same_table(smoke_reference, tmp_path):
    out = tmp_path / "pool"
    run_sweep(load(SMOKE), out, jobs=2, progress=False, log=lambda *_: None)
    pd.testing.assert_frame_equal(_table(out), _table(smoke_reference), check_exact=True)


def test_results_table_has_the_documented_columns(smoke_reference):
    df = pd.read_parquet(smoke_reference / "results.parquet")
    for col in ["storage.provider", "workload.num_tables", "workload.inter_arrival.mean_ms", "provider",
                "num_tables", "inter_arrival_ms", "fast_append_ratio", "config_hash", "replication", "status",
                "success_rate", "fa_success_rate", "vo_success_rate", "throughput_cps", "offered_cps",
                "commit_latency_p99_ms", "vo_commit_latency_mean_ms", "catalog_conflict_share", "unfinished_share"]:
        assert col in df.columns, col
    assert len(df) == 16 and (df.status == "ok").all()
    assert ((df.success_rate >= 0) & (df.success_rate <= 1)).all()
    per = pd.read_parquet(smoke_reference / "per_table.parquet")
    assert set(per.table_rank) == {1, 2, 3, 4, 5}


def test_a_failing_configuration_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    import sim.sweep.task as task
    real = task.run

    def flaky(cfg, rep, **kw):
        if cfg.workload.num_tables == 2:
            raise RuntimeError("disk on fire")
        return real(cfg, rep, **kw)

    monkeypatch.setattr(task, "run", flaky)   # the serial executor (jobs=1) runs tasks in this process
    s = parse({"name": "t", "base": {"duration_ms": 60_000, "warmup_ms": 10_000, "cooldown_ms": 10_000,
                                     "workload": {"runtime": {"median_ms": 100, "min_ms": 10}}},
               "grid": {"workload.num_tables": [1, 2, 3]}})
    out = tmp_path / "out"
    outcome = run_sweep(s, out, jobs=1, progress=False, log=lambda *_: None)
    assert (outcome.ran, outcome.failed) == (3, 1)
    df = pd.read_parquet(out / "results.parquet")
    bad = df[df.status == "failed"]
    assert len(bad) == 1 and "disk on fire" in bad.error.iloc[0] and bad.num_tables.iloc[0] == 2
    assert (df[df.status == "ok"].success_rate >= 0).all()
    # a rerun retries the failure (and only it)
    monkeypatch.setattr(task, "run", real)
    again = run_sweep(s, out, jobs=1, progress=False, log=lambda *_: None)
    assert (again.reused, again.ran, again.failed) == (2, 1, 0)


@pytest.mark.slow   # a whole report again (tests/test_report.py writes one by default)
def test_report_on_smoke_results(smoke_reference):
    r = run_cli("report", smoke_reference)
    assert r.returncode == 0, r.stderr
    index = smoke_reference / "report" / "index.html"
    html = index.read_text()
    for src in [s.split('"')[0] for s in html.split('src="')[1:]]:
        assert (index.parent / src).is_file(), src
    knee = pd.read_csv(smoke_reference / "report" / "knee.csv")
    assert len(knee) == 4   # provider x num_tables


def test_the_heaviest_configuration_line_names_the_first_of_tied_ones():
    """Configurations that differ only where the estimate does not look (the linearization fraction) tie: the line
    names the first in the grid's order, whatever order the runs to do come in (they came from a set before)."""
    from sim.sweep.runner import _check_size, tasks_of
    s = parse({"name": "tie", "base": {"duration_ms": 60_000, "warmup_ms": 0, "cooldown_ms": 0},
               "grid": {"catalog.linearization_fraction": [0.3, 0.5, 0.7]}})
    todo = tasks_of(s)
    lines = []
    for order in (todo, todo[::-1]):
        log = []
        _check_size(s, order, None, log.append)
        lines.append(log[0])
    assert lines[0] == lines[1] and "catalog.linearization_fraction=0.3" in lines[0]
