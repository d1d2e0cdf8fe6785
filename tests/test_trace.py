"""A trace replayed (docs/model/workload.md, "Trace"; sim/trace/, sim/model/trace.py): the file's errors, each one
line naming the file and the field; arrivals equal the trace's at scale 1; rate_scale divides the gaps; a writer's
rows one at a time; the what-ifs; the config's rules; a run's commits exported and replayed (the round trip)."""
from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pandas as pd
import pytest

from helpers import ROOT
from sim import cli
from sim.config import ConfigError, config_hash, from_dict, replaced, seed_hash
from sim.run import run
from sim.trace import OPERATIONS, read_trace, write_trace
from sim.trace.export import trace_of
from sim.trace.replay import replay
from sim.rng import run_streams

TRACE = ROOT / "tests" / "data" / "trace.csv"
WINDOW = {"warmup_ms": 5_000, "cooldown_ms": 5_000, "drain_limit_ms": 60_000}
FAST = {"median_ms": 500, "sigma": 0.5, "min_ms": 50}


def _frame(n=40, seed=0, writers=True, runtimes=True) -> pd.DataFrame:
    """n commits over a minute (epoch ms): 2 tables, appends, a named writer for a third of them."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "time_ms": 1.7e12 + np.sort(rng.uniform(0, 60_000, n)),
        "table": rng.choice(["a", "b"], n), "operation": "append",
        "writer": np.where(np.arange(n) % 3 == 0, "job", None) if writers else None,
        "runtime_ms": rng.uniform(100, 900, n) if runtimes else np.nan})


def _config(path, **trace) -> dict:
    return {**WINDOW, "workload": {"trace": {"path": str(path), **trace}, "runtime": FAST}}


def _main(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


# -- the file: read, written, refused -----------------------------------------------------------------------------

def test_parquet_and_csv_read_the_same(tmp_path):
    df = _frame().assign(snapshot_id=np.arange(40))
    for name in ("t.parquet", "t.csv"):
        write_trace(df, tmp_path / name)
    a, b = read_trace(tmp_path / "t.parquet"), read_trace(tmp_path / "t.csv")
    assert list(a.columns[:7]) == ["time_ms", "table", "operation", "writer", "runtime_ms", "files", "bytes"]
    assert "snapshot_id" in a.columns and "snapshot_id" in b.columns    # other columns are carried, unread
    pd.testing.assert_frame_equal(a.drop(columns="snapshot_id"), b.drop(columns="snapshot_id"))
    assert (a["time_ms"].to_numpy() == np.sort(df["time_ms"].to_numpy())).all()   # exact, sorted
    assert a["writer"].isna().sum() == (df["writer"].isna()).sum()


BAD = [  # (column, value in row 3, the field the error names, words it has)
    ("time_ms", "noon", "time_ms", "not a number in row"),
    ("time_ms", "-5", "time_ms", "expected a finite number >= 0"),
    ("time_ms", "", "time_ms", "empty"),
    ("time_ms", "nan", "time_ms", "not a number"),
    ("time_ms", "inf", "time_ms", "expected a finite number >= 0"),
    ("operation", "merge", "operation", "unknown operation 'merge'"),
    ("operation", "", "operation", "empty"),
    ("table", "  ", "table", "empty"),
    ("runtime_ms", "-1", "runtime_ms", "expected a finite number >= 0"),
    ("runtime_ms", "slow", "runtime_ms", "not a number"),
    ("files", "2.5", "files", "expected a whole number"),
]


@pytest.mark.parametrize("column, value, field, words", BAD)
def test_a_bad_cell_is_one_line_naming_the_file_and_the_field(tmp_path, column, value, field, words):
    path = tmp_path / "bad.csv"
    df = _frame().assign(files=1).astype({column: object})
    df.loc[2, column] = value
    df.to_csv(path, index=False)
    with pytest.raises(ConfigError) as err:
        read_trace(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and f": {field}: " in msg and words in msg, msg


@pytest.mark.parametrize("drop", ["time_ms", "table", "operation"])
def test_a_missing_column_names_it(tmp_path, drop):
    path = tmp_path / "t.parquet"
    _frame().drop(columns=drop).to_parquet(path)
    with pytest.raises(ConfigError, match=f"{path}: {drop}: missing"):
        read_trace(path)


def test_other_unusable_files(tmp_path):
    with pytest.raises(ConfigError, match="a trace is a .parquet or .csv file"):
        read_trace(tmp_path / "t.json")
    with pytest.raises(ConfigError, match="not found"):
        from_dict(_config(tmp_path / "none.csv"))
    (tmp_path / "e.csv").write_text("time_ms,table,operation\n")
    with pytest.raises(ConfigError, match="no rows"):
        read_trace(tmp_path / "e.csv")
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ConfigError, match="not a readable trace"):
        read_trace(tmp_path / "x.parquet")
    with pytest.raises(ConfigError, match="the trace to write: operation: unknown"):
        write_trace(_frame().assign(operation="upsert"), tmp_path / "w.csv")
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbftime_ms,table,operation\n5,a,append\n")   # (a spreadsheet's)
    assert read_trace(tmp_path / "bom.csv")["time_ms"].tolist() == [5.0]


def test_the_command_line_says_one_line(tmp_path):
    path = tmp_path / "bad.csv"
    df = _frame().astype({"time_ms": object})
    df.loc[4, "time_ms"] = "yesterday"
    df.to_csv(path, index=False)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"workload: {{trace: {{path: {path}}}}}\n")
    code, out, err = _main("run", cfg)
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and str(path) in err and "time_ms: not a number in row 5" in err, err


def test_operations_are_the_models():
    from sim.model.state import OPS
    from sim.trace.schema import MODEL_OPS
    assert set(MODEL_OPS) == set(OPERATIONS) and set(MODEL_OPS.values()) <= set(OPS)


# -- the replay: arrivals, rate_scale, writers ------------------------------------------------------------------

def _arrivals(res) -> np.ndarray:
    """Each transaction's row's arrival (`due_ms`), in arrival order."""
    return np.sort(res.records["due_ms"].to_numpy())


def test_replay_at_scale_1_arrives_as_the_trace_says(tmp_path):
    df = _frame(writers=False)
    write_trace(df, tmp_path / "t.parquet")
    cfg = from_dict(_config(tmp_path / "t.parquet"))
    start = cfg.workload.trace.start_ms                      # (its earliest start: the first row arrives at 0)
    assert start == (df["time_ms"] - df["runtime_ms"]).min()
    res = run(cfg, 0)
    # (at epoch ms, t - start rounds: the earliest may come out a hair below 0, which starts at 0)
    expected = np.sort(np.maximum((df["time_ms"].to_numpy() - start) - df["runtime_ms"].to_numpy(), 0.0))
    assert len(res.records) == len(df)
    assert (_arrivals(res) == expected).all()                       # exactly
    assert (res.records["arrival_ms"] == res.records["due_ms"]).all()   # no writer: each starts as it arrives


def test_drawn_runtimes_arrive_that_much_before_their_commit(tmp_path):
    """A row with no runtime draws one of `workload.runtime` and arrives that long before its commit."""
    df = _frame(writers=False, runtimes=False)
    write_trace(df, tmp_path / "t.parquet")
    start = float(df["time_ms"].min()) - 1e6                 # (no row arrives before the start)
    cfg = from_dict(_config(tmp_path / "t.parquet", start_ms=start))
    rng = run_streams(cfg, 0)
    rows = replay(cfg, rng["runtime"], rng["partitions"])
    assert (rows.runtime_ms >= FAST["min_ms"]).all() and len(np.unique(rows.runtime_ms)) == len(df)
    np.testing.assert_allclose(np.sort(rows.arrival_ms + rows.runtime_ms), np.sort(df["time_ms"] - start),
                               rtol=0, atol=1e-6)


@pytest.mark.parametrize("k", [2.0, 4.0, 2.5, 0.3])
def test_rate_scale_divides_the_gaps(tmp_path, k):
    """Every arrival is the history's divided by k, to the bit, drawn runtimes included (rate_scale is not
    seeded: every k replays the same draws); the gaps then are the history's / k (to the bit for a power of 2)."""
    df = _frame(runtimes=False)
    write_trace(df, tmp_path / "t.parquet")
    base = from_dict(_config(tmp_path / "t.parquet"))
    one, scaled = run(base, 0), run(replaced(base, {"workload.trace.rate_scale": k}), 0)
    assert seed_hash(replaced(base, {"workload.trace.rate_scale": k})) == seed_hash(base)
    a1, ak = _arrivals(one), _arrivals(scaled)
    assert (ak == a1 / k).all()
    gaps, gaps_k = np.diff(a1), np.diff(ak)
    if math.log2(k).is_integer():
        assert (gaps_k == gaps / k).all()
    else:
        np.testing.assert_allclose(gaps_k, gaps / k, rtol=1e-12, atol=1e-9)
    assert scaled.summary["sim_end_ms"] < one.summary["sim_end_ms"] or k < 1


def test_a_writer_runs_its_rows_one_at_a_time(tmp_path):
    """Its rows come faster than they run: each starts at its arrival or at the last one's end, if later."""
    rng = np.random.default_rng(3)
    n = 30
    df = pd.DataFrame({"time_ms": np.sort(rng.uniform(0, 20_000, n)), "table": "a", "operation": "append",
                       "writer": np.where(np.arange(n) % 2 == 0, "fast-job", "other"),
                       "runtime_ms": rng.uniform(1_500, 3_000, n)})
    write_trace(df, tmp_path / "t.parquet")
    res = run(from_dict(_config(tmp_path / "t.parquet", start_ms=0.0)), 0)
    rec = res.records.sort_values("txn")
    waited = 0
    for _, mine in rec.groupby("writer"):
        mine = mine.sort_values("due_ms")
        start, due, end = (mine[c].to_numpy() for c in ("arrival_ms", "due_ms", "end_ms"))
        assert (start[1:] == np.maximum(due[1:], end[:-1])).all()    # max(its arrival, the last one's end)
        assert start[0] == due[0]
        waited += int((start > due).sum())
    assert waited > 0                                               # the case waits
    assert res.summary["writers_seen"] == 2 and res.summary["commit_lag_mean_ms"] > 0


def test_rows_still_waiting_at_the_end_are_counted(tmp_path):
    """A writer whose rows take far longer than their gaps is still behind when the drain limit ends the run."""
    n = 40
    df = pd.DataFrame({"time_ms": np.linspace(0, 20_000, n), "table": "a", "operation": "append",
                       "writer": "slow", "runtime_ms": 10_000.0})
    write_trace(df, tmp_path / "t.parquet")
    cfg = from_dict({**_config(tmp_path / "t.parquet", start_ms=0.0), "drain_limit_ms": 1_000})
    res = run(cfg, 0)
    assert res.summary["trace_waiting"] > 0
    assert sum(r["trace_waiting"] for r in res.per_table) == res.summary["trace_waiting"]
    from sim.knee.headroom import with_waiting
    w = with_waiting(res.summary)
    assert w["began_commit"] == res.summary["began_commit"] + res.summary["trace_waiting"]


# -- the what-ifs and the config's rules ----------------------------------------------------------------------------

def test_tables_scale_and_repeat(tmp_path):
    df = _frame(writers=True)
    write_trace(df, tmp_path / "t.parquet")
    one = from_dict(_config(tmp_path / "t.parquet"))
    big = from_dict(_config(tmp_path / "t.parquet", tables_scale=3, repeat=2))
    t = big.workload.trace
    assert big.workload.num_tables == 3 * one.workload.num_tables
    assert big.duration_ms == 2 * t.period_ms == 2 * one.duration_ms
    rng = run_streams(big, 0)
    rows = replay(big, rng["runtime"], rng["partitions"])
    assert len(rows.arrival_ms) == 6 * len(df)
    assert len(rows.writers) == 3 and rows.writers[1] == "job~1" and rows.tables[2].endswith("~1")
    per_copy = np.bincount(rows.table // 2)
    assert (per_copy == 2 * len(df)).all()                     # each copy replays every row, in both loops
    res = run(big, 0)
    assert set(res.records["table"]) == set(range(6))


def test_maintenance_jobs_run_beside_the_trace(tmp_path):
    """Today's maintenance jobs on every table of the trace (each copy's too), beside its rows."""
    write_trace(_frame(), tmp_path / "t.parquet")
    data = _config(tmp_path / "t.parquet", tables_scale=2)
    data["maintenance"] = {"compaction": {"every_ms": 10_000, "median_ms": 2_000}}
    cfg = from_dict(data)
    res = run(cfg, 0)
    jobs = res.records[res.records["op"] == "compaction"]
    assert set(jobs["table"]) == set(range(cfg.workload.num_tables)) and (jobs["writer"] == -1).all()
    rows = res.records[res.records["op"] == "fa"]
    assert len(rows) == 2 * 40 and rows["due_ms"].notna().all() and jobs["due_ms"].isna().all()
    assert "compaction_success_rate" in res.summary


def test_the_config_follows_the_file(tmp_path):
    df = _frame()
    write_trace(df, tmp_path / "a.parquet")
    write_trace(df, tmp_path / "b.parquet")                    # the same content under another name
    a, b = from_dict(_config(tmp_path / "a.parquet")), from_dict(_config(tmp_path / "b.parquet"))
    assert config_hash(a) == config_hash(b) and a.workload.trace.sha256 == b.workload.trace.sha256
    write_trace(df.assign(operation="overwrite"), tmp_path / "a.parquet")
    c = from_dict(_config(tmp_path / "a.parquet"))
    assert config_hash(c) != config_hash(a)                  # the content changed: another config
    assert c.workload.operations.partitions == 1             # overwrites: the format's rules decide
    with pytest.raises(ConfigError, match="workload.trace.sha256: .* has changed"):
        from_dict(a.to_dict())                               # resolved from the file as it was
    assert from_dict(b.to_dict()) == b                       # a resolved config resolves to itself


@pytest.mark.parametrize("key, value, words", [
    ("workload.inter_arrival", {"mean_ms": 50}, "workload.inter_arrival: not used with workload.trace"),
    ("workload.writers", {"count": 3}, "workload.writers: not used"),
    ("workload.num_tables", 7, "workload.num_tables: 7, but the trace has 2 table"),
    ("workload.fast_append_ratio", 0.5, "workload.fast_append_ratio: not used"),
    ("workload.operations", {"partitions": 2, "overwrite_share": 0.2}, "workload.operations: not used"),
    ("workload.trace.period_ms", 10.0, "workload.trace.period_ms: 10 is shorter than the history's span"),
])
def test_keys_a_trace_leaves_unread_are_errors(tmp_path, key, value, words):
    from sim.config import set_path
    write_trace(_frame(), tmp_path / "t.parquet")
    data = _config(tmp_path / "t.parquet")
    set_path(data, key, value)
    with pytest.raises(ConfigError, match=words):
        from_dict(data)


def test_operations_a_design_lacks_are_refused(tmp_path):
    write_trace(_frame().assign(operation="row_delta"), tmp_path / "t.parquet")
    with pytest.raises(ConfigError, match="workload.trace.path: .* holds row_delta commits, which a Delta log"):
        from_dict({**_config(tmp_path / "t.parquet"), "design": "log"})


def test_replaced_what_ifs_follow_the_trace(tmp_path):
    """A resolved config's filled-in keys (the tables, the length) follow the trace's keys when they change."""
    write_trace(_frame(), tmp_path / "t.parquet")
    cfg = from_dict(_config(tmp_path / "t.parquet"))
    more = replaced(cfg, {"workload.trace.tables_scale": 4, "workload.trace.repeat": 3})
    assert more.workload.num_tables == 4 * cfg.workload.num_tables and more.duration_ms == 3 * cfg.duration_ms
    assert replaced(cfg, {"workload.trace.rate_scale": 2}).duration_ms == cfg.duration_ms   # the history's clock
    assert replaced(cfg, {"duration_ms": 30_000}).duration_ms == 30_000


# -- the round trip -------------------------------------------------------------------------------------------------

def _within_an_ulp(got: np.ndarray, want: np.ndarray, of: np.ndarray) -> None:
    assert (np.abs(got - want) <= np.spacing(of)).all(), np.max(np.abs(got - want) / np.spacing(of))


@pytest.mark.parametrize("workload", [{"inter_arrival": {"mean_ms": 150}},
                                      {"writers": {"count": 4, "think_ms": 300, "think": "exponential"}}])
def test_round_trip_replays_the_runs_arrivals(tmp_path, workload):
    """A run's commits exported as a trace and replayed at scale 1 (start 0: the run's own clock): each commit
    arrives where it did, to within one unit in the last place of its commit time (the rounding of time_ms -
    runtime_ms), the trace's own arrivals exactly."""
    cfg = from_dict({"duration_ms": 120_000, **WINDOW, "workload": {**workload, "runtime": FAST}})
    res = run(cfg, 0)
    tr = trace_of(cfg, res.columns)
    write_trace(tr, tmp_path / "out.csv")
    back = read_trace(tmp_path / "out.csv")
    pd.testing.assert_frame_equal(back[["time_ms", "runtime_ms"]], tr[["time_ms", "runtime_ms"]])
    committed = res.records[res.records["outcome"] == "committed"]
    assert len(tr) == len(committed)
    again = run(from_dict({"duration_ms": 120_000, **WINDOW,
                           "workload": {"trace": {"path": str(tmp_path / "out.csv"), "start_ms": 0.0},
                                        "runtime": FAST}}), 0)
    arrival = tr["time_ms"].to_numpy() - tr["runtime_ms"].to_numpy()
    order = np.argsort(arrival, kind="stable")
    assert (_arrivals(again) == arrival[order]).all()                       # the trace's arrivals, exactly
    _within_an_ulp(arrival[order], np.sort(committed["arrival_ms"].to_numpy()), tr["time_ms"].to_numpy()[order])
    assert (again.records["writer"] >= 0).sum() == (committed["writer"] >= 0).sum()


def test_trace_out_on_the_command_line(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("duration_ms: 60000\nwarmup_ms: 5000\ncooldown_ms: 5000\n"
                   "workload: {inter_arrival: {mean_ms: 300}, runtime: {median_ms: 500, sigma: 0.5, min_ms: 50}}\n")
    code, out, err = _main("run", cfg, "--trace-out", tmp_path / "t.parquet")
    assert code == 0, err
    assert f"wrote {tmp_path / 't.parquet'}" in out
    tr = read_trace(tmp_path / "t.parquet")
    assert set(tr["operation"]) == {"append"} and (tr["table"] == "t0").all() and tr["writer"].isna().all()
    code, _, err = _main("run", cfg, "--trace-out", tmp_path / "t.txt")
    assert code == 2 and "a trace is a .parquet or .csv file" in err


def test_the_example_experiment_resolves():
    from sim.sweep import load
    sweep = load(ROOT / "experiments" / "trace-headroom.yaml")
    assert sweep.knee is not None and sweep.knee.param == "workload.trace.rate_scale"
    assert all(p.config.workload.trace.sha256 for p in sweep.points)
