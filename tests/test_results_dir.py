"""The results directory as a cache and as a shared place: a rerun reuses a run only if nothing it depends on
changed (and says what did), and files are as readable as the umask allows."""
import json
import os
import shutil
import stat

import pytest

from helpers import ROOT, TINY_SWEEP
from sim import cli
from sim.report import write_report
from sim.sweep import parse, run_sweep, store, task


def _sweep(out, logs=None):
    return run_sweep(parse(TINY_SWEEP), out, jobs=1, progress=False, log=(logs if logs is not None else []).append)


def test_a_rerun_recomputes_runs_whose_provider_or_model_changed_and_says_why(tmp_path, monkeypatch):
    providers = tmp_path / "providers"
    shutil.copytree(ROOT / "providers", providers)
    monkeypatch.setenv("SIM_PROVIDERS_DIR", str(providers))
    out = tmp_path / "out"
    assert _sweep(out).ran == 4

    # an edited provider profile (the set the runs use: the default, measured): its runs (2 of 4) are recomputed
    s3 = providers / "s3.yaml"
    s3.write_text(s3.read_text().replace("cas: {fixed_ms: 21.009, median_ms: 12.244,", "cas: {fixed_ms: 21.009, median_ms: 13,"))
    logs = []
    outcome = _sweep(out, logs)
    assert (outcome.reused, outcome.ran) == (2, 2)
    line, = [m for m in logs if m.startswith("recomputing")]
    assert line.startswith("recomputing 2 finished run(s): provider s3 changed (profile digest ") and "->" in line

    # a new model version: everything is recomputed
    v = store.MODEL_VERSION
    monkeypatch.setattr(store, "MODEL_VERSION", v + 1)
    monkeypatch.setattr(task, "MODEL_VERSION", v + 1)
    logs = []
    assert _sweep(out, logs).ran == 4
    assert f"recomputing 4 finished run(s): model version {v} -> {v + 1}" in logs

    # a run file from before run keys were recorded: stale, with a reason
    f = next((out / "runs").glob("*.json"))
    f.write_text(json.dumps({k: v for k, v in json.loads(f.read_text()).items() if k != "run_key"}))
    logs = []
    assert _sweep(out, logs).ran == 1
    assert any("recomputing 1 finished run(s): written by a sim that did not record" in m for m in logs)
    assert (_sweep(out).reused, _sweep(out).ran) == (4, 0)


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_result_files_follow_the_umask(tmp_path, umask):
    """Run files, tables, report files and `run --out` files get 0666 less the umask, as `open()` would."""
    old = os.umask(umask)
    try:
        out = tmp_path / "out"
        run_sweep(parse({**TINY_SWEEP, "grid": {}}), out, jobs=1, progress=False, log=lambda *_: None)
        write_report(out, TINY_SWEEP["report"])
        cfg = tmp_path / "c.yaml"
        cfg.write_text(json.dumps(TINY_SWEEP["base"]))
        assert cli.main(["run", str(cfg), "--out", str(tmp_path / "run"), "--history"]) == 0
    finally:
        os.umask(old)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != cfg]
    assert {p.suffix for p in files} >= {".json", ".parquet", ".yaml", ".csv", ".html", ".png"}
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in files}
    assert set(modes.values()) == {oct(0o666 & ~umask)}, modes
    dirs = {oct(stat.S_IMODE(p.stat().st_mode)) for p in tmp_path.rglob("*") if p.is_dir()}
    assert dirs == {oct(0o777 & ~umask)}
