"""The command line end to end: what a user types, what they see, what is (not) written."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from helpers import ROOT, run_cli

SMALL = {"duration_ms": 300_000, "warmup_ms": 60_000, "cooldown_ms": 60_000,
         "workload": {"inter_arrival": {"mean_ms": 200}, "num_tables": 2, "fast_append_ratio": 0.8,
                      "runtime": {"median_ms": 5000, "sigma": 1.0, "min_ms": 1000}}}


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.yaml"
    p.write_text(yaml.safe_dump(SMALL))
    return p


def test_run_json_prints_one_object(small):
    r = run_cli("run", small, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)            # exactly one JSON object, nothing else on stdout
    assert 0 <= out["success_rate"] <= 1
    for key in ("throughput_cps", "offered_cps", "config_hash"):
        assert key in out
    assert set(out["commit_latency_ms"]) == {"mean", "p50", "p95", "p99"}
    for op in ("fa", "vo"):
        assert {"success_rate", "throughput_cps", "commit_latency_ms"} <= set(out["per_op"][op])
    assert set(out["retries"]) >= {"catalog_conflicts", "table_conflicts"}
    t = out["transactions"]
    assert t["arrived"] == t["committed"] + t["aborted"] + t["unfinished"] > 0


#: what a fast-engine `sim run --json` has no use for: frames and parquet, the SimPy engine, plotting, the other
#: commands' modules
NOT_FOR_A_RUN = ("pandas", "pyarrow", "simpy", "matplotlib", "seaborn", "dask", "distributed", "jinja2",
                 "sim.engines.simpy_engine", "sim.sweep", "sim.knee", "sim.checker", "sim.report", "sim.api")
#: ... but what the parser imports: `sim.sweep.cli` adds the sweep's commands (its package loads names when used)
PARSER = ("sim.sweep", "sim.sweep.cli")


def test_a_fast_run_imports_only_what_it_needs(small, tmp_path, monkeypatch):
    """`python -m sim run CONFIG --json` imports none of the modules above, nor any part of scipy but the bare
    package numba imports to check its version: imports are most of a light run's time (benchmarks/run.py). Its
    long-read table is on disk already, as after any earlier run of its provider (building one needs
    scipy.special; sim/long_reads.py)."""
    from sim import long_reads
    from sim.config import load
    from sim.latency import latency_model
    monkeypatch.setenv("SIM_CACHE_DIR", str(tmp_path))
    long_reads.table.__wrapped__(latency_model(load(small)).get)   # past the process's cache: written to disk
    probe = ("import gc, json, runpy, sys\n"
             f"sys.argv = ['sim', 'run', {str(small)!r}, '--json']\n"
             "try:\n    runpy.run_module('sim', run_name='__main__', alter_sys=True)\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "print(json.dumps({'code': code, 'modules': sorted(sys.modules), 'frozen': gc.get_freeze_count()}))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=900,
                       env={**os.environ, "SIM_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["code"] == 0, r.stderr
    mods = out["modules"]
    assert "sim.engines.fast" in mods
    unneeded = [m for m in mods if m not in PARSER and any(m == n or m.startswith(n + ".") for n in NOT_FOR_A_RUN)]
    unneeded += [m for m in mods if m.startswith("scipy.") and m != "scipy.version" and not m.startswith("scipy._")]
    assert unneeded == []
    assert out["frozen"] > 0      # its objects were left to the OS at exit (`sim.cli.exiting`)


#: gcp's 1 write/s per object name (the seed set's bucket, burst 1) under 2 arrivals/s on 20 tables, no drain: most
#: window transactions are still resending 429s when the run stops (measured: 382 arrived, 42 committed, 81
#: aborted, 259 unfinished)
GCP_THROTTLED = {"duration_ms": 300_000, "warmup_ms": 60_000, "cooldown_ms": 60_000, "drain_limit_ms": 0,
                 "storage": {"provider": "gcp", "profile_set": "seed"},
                 "workload": {"inter_arrival": {"mean_ms": 500}, "num_tables": 20, "fast_append_ratio": 1.0}}


def test_run_counts_unfinished_in_commit_as_not_successful(tmp_path):
    """Success is over the window transactions that began to commit: one still in its commit when the run ended
    is not a success (a throttled gcp run leaves many so), one still in its runtime is left out and reported as
    its own share. The finished-only figure is `success_rate_finished`; the text output shows both, whole run
    and per kind."""
    p = tmp_path / "gcp.yaml"
    p.write_text(yaml.safe_dump(GCP_THROTTLED))
    out = json.loads(run_cli("run", p, "--json").stdout)
    t = out["transactions"]
    assert t["unfinished"] > t["unfinished_in_runtime"] >= 0          # some were stuck in their commit
    assert t["began_commit"] == t["arrived"] - t["unfinished_in_runtime"]
    assert t["unfinished_in_runtime_share"] == t["unfinished_in_runtime"] / t["arrived"]
    assert out["success_rate"] == t["committed"] / t["began_commit"]
    assert out["success_rate_finished"] == t["committed"] / (t["committed"] + t["aborted"])
    assert out["success_rate"] < out["success_rate_finished"]
    fa = out["per_op"]["fa"]
    assert (fa["success_rate"], fa["success_rate_finished"]) == (out["success_rate"], out["success_rate_finished"])
    text = run_cli("run", p).stdout
    both = f"success {out['success_rate']:.4f} (of finished {out['success_rate_finished']:.4f})"
    assert f"{both}   throughput" in text.replace("success rate", "success")
    assert f"  FA: {both}  " in text
    assert f"{t['unfinished_in_runtime']} still in their runtime, left out of the success rate" in text


def test_run_overrides_and_seed_change_the_result(small):
    a = json.loads(run_cli("run", small, "--json").stdout)
    b = json.loads(run_cli("run", small, "--json", "--seed", "7").stdout)
    c = json.loads(run_cli("run", small, "--json", "--set", "workload.num_tables=5").stdout)
    assert a["config_hash"] != b["config_hash"] != c["config_hash"]
    assert c["config"]["config"]["workload"]["num_tables"] == 5


def test_run_writes_records_summary_config_and_history(small, tmp_path):
    out = tmp_path / "out"
    r = run_cli("run", small, "--out", out, "--history")
    assert r.returncode == 0, r.stderr
    assert "success rate" in r.stdout
    rec = pd.read_parquet(out / "transactions.parquet")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["arrived"] == int(rec.in_window.sum())
    resolved = yaml.safe_load((out / "config.yaml").read_text())
    assert resolved["config"]["workload"]["num_tables"] == 2 and resolved["provider_profile"]["name"] == "s3"
    assert (out / "history.parquet").is_file()

    ok = run_cli("check", out)
    assert ok.returncode == 0 and ok.stdout.startswith("ok")

    h = pd.read_parquet(out / "history.parquet")
    first_read = h.index[h.kind == "read"][5]
    h.loc[first_read, "seq"] += 1          # a read that saw the future
    h.to_parquet(out / "history.parquet", index=False)
    bad = run_cli("check", out)
    assert bad.returncode == 1
    assert bad.stdout.startswith("invariant 5 violated")


@pytest.mark.parametrize("override, path", [
    ("workload.num_tabels=3", "workload.num_tabels"),
    ("workload.num_tables=0", "workload.num_tables"),
    ("workload.fast_append_ratio=1.2", "workload.fast_append_ratio"),
    ("storage.provider=s4", "storage.provider"),
    ("retry.table.policy=sometimes", "retry.table.policy"),
    ("catalog.backend=service", "catalog.latency_ms"),
])
def test_bad_config_exits_2_with_one_line_and_writes_nothing(small, tmp_path, override, path):
    out = tmp_path / "never"
    r = run_cli("run", small, "--set", override, "--out", out, "--json")
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:"), r.stderr
    assert not out.exists()


def test_bad_yaml_and_missing_file_exit_2(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("workload: [unclosed")
    assert run_cli("run", p).returncode == 2
    assert run_cli("run", tmp_path / "missing.yaml").returncode == 2
    assert run_cli("check", tmp_path).returncode == 2
    assert run_cli("sweep", tmp_path / "missing.yaml").returncode == 2


def test_bad_sweep_file_exits_2(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump({"name": "s", "grid": {"workload.num_tabels": [1, 2]}}))
    r = run_cli("sweep", p, "--out", tmp_path / "out")
    assert r.returncode == 2 and "grid.workload.num_tabels" in r.stderr
    assert not (tmp_path / "out").exists()


def test_run_text_of_periodic_writers(tmp_path):
    """A writers run's text summary has its writers line (count, commits per writer, lag, missed intervals), and
    --json its writers group."""
    p = tmp_path / "w.yaml"
    p.write_text(yaml.safe_dump({**{k: SMALL[k] for k in ("duration_ms", "warmup_ms", "cooldown_ms")},
                                 "workload": {"writers": {"count": 3, "mode": "periodic", "interval_ms": 5000},
                                              "runtime": {"median_ms": 500, "sigma": 0.5, "min_ms": 0}}}))
    r = run_cli("run", p)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("writers: "))
    assert line.startswith("writers: 3, ") and "missed intervals" in line
    out = json.loads(run_cli("run", p, "--json").stdout)
    assert out["writers"]["count"] == 3 and out["writers"]["missed_interval_share"] == 0.0


@pytest.mark.parametrize("argv, collects", [(["run", "c.yaml"], False), (["run", "c.yaml", "--engine", "simpy"], True),
                                            (["sweep", "s.yaml"], True)])
def test_garbage_collector_back_on_but_for_a_compiled_run(argv, collects):
    """`sim.entry` starts the process with the collector off; `sim.cli` turns it back on (old objects frozen out of
    its passes) for every command but a compiled `run`, and leaves a process that has it on as it is."""
    import gc

    from sim import cli

    args = cli.build_parser("sim").parse_args(argv)
    was = gc.isenabled()
    try:
        gc.disable()
        cli._collector(args)
        assert gc.isenabled() == collects
        gc.enable()
        cli._collector(args)
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


def test_process_settings_before_numba_loads():
    """`python -m sim` sets one BLAS thread and no loop vectorization before numpy and numba load (an explicit
    setting is kept), and starts with the garbage collector off."""
    code = ("import sim.entry as e; e._settings(); import gc, numba; "
            "print(numba.config.LOOP_VECTORIZE, __import__('os').environ['OPENBLAS_NUM_THREADS'], gc.isenabled())")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_LOOP_VECTORIZE", "OPENBLAS_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "1", "False"]
    env["NUMBA_LOOP_VECTORIZE"] = "1"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "1"
