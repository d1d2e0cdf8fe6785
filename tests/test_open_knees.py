"""`report: {knees: search}`: `sim sweep` runs the grid, then a knee search of every cell whose grid knee is not
`ok` within +-5 % (the cells and spec of `report/knee-unbounded.yaml`), under one progress bar, then writes the
report once with the searched knees in place; a rerun reuses every run; a failed search phase keeps the grid's
results and report."""
import re

import pandas as pd
import pytest
import yaml

from helpers import ROOT, run_cli
from sim.cli import main

#: experiments/smoke.yaml on one provider, table count and replication: 2 runs, then one knee search (its grid knee,
#: two loads of one run each, is above range)
SPEC = {**yaml.safe_load((ROOT / "experiments" / "smoke.yaml").read_text()), "name": "searched", "replications": 1,
        "grid": {"storage.provider": ["s3x"], "workload.num_tables": [1],
                 "workload.inter_arrival.mean_ms": [100, 1000]}}
SPEC["report"] = {**SPEC["report"], "knees": "search"}


def _sweep_file(tmp_path, spec=SPEC):
    path = tmp_path / "searched.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _knee_csv(out):
    return pd.read_csv(out / "report" / "knee.csv", dtype={"knee_reason": str, "knee_command": str})


def test_one_command_searches_the_open_knees_then_writes_the_report_and_a_rerun_reuses_everything(tmp_path):
    f, out = _sweep_file(tmp_path), tmp_path / "out"
    r = run_cli("sweep", f, "--out", out, "--jobs", "1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("2 runs: 0 reused, 2 ran (0 failed) in ")
    found = re.fullmatch(r"1 knee searches of the cells the grid leaves open or wider than \+-5 % \(1 ok\): "
                         r"(\d+) runs \((\d+) new\), \d+ simulated hours, [\d.]+ s; results: (.+)", lines[1])
    assert found and found[1] == found[2] and found[3] == str(out / "knee-unbounded" / "knees.parquet"), lines[1]
    assert lines[2:] == [f"report: {out / 'report' / 'index.html'}", "knees: 1 ok"]
    # one progress bar: the grid's phase, then the searches' rounds
    assert "grid: " in r.stderr and "knee searches: " in r.stderr and "1/1 searches done" in r.stderr
    knee = _knee_csv(out).iloc[0]
    assert (knee["knee_status"], knee["knee_source"]) == ("ok", "search")
    # the searches are the ones the report's knee-unbounded.yaml names: its command would reuse them all
    searched = yaml.safe_load((out / "knee-unbounded" / "sweep.yaml").read_text())
    assert searched == yaml.safe_load((out / "report" / "knee-unbounded.yaml").read_text())
    first = re.search(r'<table class="knees">.*?</table>', (out / "report" / "index.html").read_text())[0]
    assert re.search(r"<td [^>]*title=\"[^\"]*from a knee search[^\"]*\">[\d.]+ \[[\d.]+, [\d.]+\] c/s</td>", first)

    again = run_cli("sweep", f, "--out", out, "--jobs", "1", "--no-progress")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0].startswith("2 runs: 2 reused, 0 ran (0 failed)")
    assert f"{found[1]} runs (0 new)" in again.stdout.splitlines()[1]
    pd.testing.assert_frame_equal(_knee_csv(out), pd.DataFrame([knee]).reset_index(drop=True), check_dtype=False)


def test_without_the_key_the_sweep_reads_its_knees_off_the_grid(tmp_path):
    spec = {**SPEC, "report": {k: v for k, v in SPEC["report"].items() if k != "knees"}}
    out = tmp_path / "out"
    r = run_cli("sweep", _sweep_file(tmp_path, spec), "--out", out, "--jobs", "1", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "knee searches of" not in r.stdout and not (out / "knee-unbounded").exists()
    assert r.stdout.splitlines()[-1].endswith(f"sim report {out}")       # the command that would search it
    assert _knee_csv(out)["knee_source"].tolist() == ["grid"]


def _run_in_process(tmp_path, capsys) -> tuple[int, str, str]:
    code = main(["sweep", str(_sweep_file(tmp_path)), "--out", str(tmp_path / "out"), "--jobs", "1",
                 "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_failed_search_run_is_exit_1_with_the_report_written(tmp_path, monkeypatch, capsys):
    """A knee search whose run fails ends `failed`; its knee is `undecided` (the search failed: why); the grid's
    results and the report stand."""
    import sim.sweep.task as task
    real = task.run

    def failing_searches(cfg, rep, **kw):     # the searches' runs share their workload streams; the grid's do not
        if cfg.common_random_numbers:
            raise RuntimeError("disk on fire")
        return real(cfg, rep, **kw)

    monkeypatch.setattr(task, "run", failing_searches)   # --jobs 1 runs every task in this process
    code, out, _ = _run_in_process(tmp_path, capsys)
    assert code == 1
    assert "1 knee searches of the cells the grid leaves open or wider than +-5 % (1 undecided; 1 searches failed)" \
        in out
    knee = _knee_csv(tmp_path / "out").iloc[0]
    assert (knee["knee_status"], knee["knee_source"]) == ("undecided", "search")
    assert knee["knee_reason"].startswith("the search failed: ") and "disk on fire" in knee["knee_reason"]
    assert len(pd.read_parquet(tmp_path / "out" / "results.parquet")) == 2


def test_a_search_phase_that_stops_keeps_the_grids_results_and_report(tmp_path, monkeypatch, capsys):
    import sim.sweep.open_knees as open_knees

    def boom(*_, **__):
        raise RuntimeError("boom")

    monkeypatch.setattr(open_knees, "search_open_knees", boom)
    code, out, err = _run_in_process(tmp_path, capsys)
    assert code == 1
    assert out.splitlines()[0].startswith("2 runs: 0 reused, 2 ran (0 failed)")
    assert out.splitlines()[1] == "knee searches: stopped on an error (below)"
    assert "error: the knee searches stopped: RuntimeError: boom; the report keeps the grid's knees" in err
    assert len(pd.read_parquet(tmp_path / "out" / "results.parquet")) == 2
    assert _knee_csv(tmp_path / "out")["knee_source"].tolist() == ["grid"]


@pytest.mark.parametrize("extra", [(), ("--no-report",)])
def test_dry_run_says_the_searches_follow(tmp_path, extra):
    r = run_cli("sweep", _sweep_file(tmp_path), "--dry-run", *extra)
    assert r.returncode == 0 and r.stdout.strip() == "2"
    assert ("then a knee search of each cell" in r.stderr) == (not extra)
