"""Writers (sim/model/writers.py): the closed loop against its closed forms, the interactive response-time law,
conservation and commit budgets, periodic writers' ticks, and the microbenchmark operation's requests.

Both engines run the same handlers (tests/test_fast_engine.py holds them identical on writer workloads); these
tests run the fast one."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sim.config import config_hash, from_dict
from sim.latency import latency_model
from sim.run import run
from sim.workload import runtime_dist

SHORT = {"duration_ms": 600_000, "warmup_ms": 60_000, "cooldown_ms": 60_000, "drain_limit_ms": 60_000}


def writers_config(writers: dict, **over) -> dict:
    d = {**SHORT, "workload": {"writers": writers, "runtime": {"median_ms": 500, "sigma": 0.5, "min_ms": 0}}}
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(d.get(key), dict):
            d[key] = {**d[key], **value}
        else:
            d[key] = value
    return d


def records_of(d: dict, replication: int = 0):
    cfg = from_dict(d)
    res = run(cfg, replication)
    return cfg, res.records, res.summary


def mean_cycle_ms(cfg) -> float:
    """E[one transaction's start to the next one's] for a lone closed-loop writer (nothing to contend with):
    the base read, the runtime, the refresh, the prepare's two GETs and two PUTs, the CAS and the think time (a
    `commit.shape: object` transaction: HEAD, read, CAS)."""
    lat = latency_model(cfg)
    think = cfg.workload.writers.think_ms
    if cfg.commit.shape == "object":
        return lat.get.mean_ms() + lat.catalog_read.mean_ms() + lat.catalog_cas.mean_ms() + think
    io = 2 * lat.get.mean_ms() + lat.put_manifest_list.mean_ms() + lat.put_table_metadata.mean_ms()
    return (2 * lat.catalog_read.mean_ms() + runtime_dist(cfg.workload).mean_ms() + io
            + lat.catalog_cas.mean_ms() + think)


def cycles(rec) -> tuple[np.ndarray, np.ndarray]:
    """Per transaction with a successor by the same writer: its start and its cycle (next start - start)."""
    rec = rec.sort_values(["writer", "txn"])
    nxt = rec.groupby("writer")["arrival_ms"].shift(-1)
    has = nxt.notna().to_numpy()
    return rec["arrival_ms"].to_numpy()[has], (nxt - rec["arrival_ms"]).to_numpy()[has]


@pytest.mark.parametrize("shape,think", [("table", {"think_ms": 200.0, "think": "exponential"}),
                                         ("object", {"think_ms": 0.0})])
def test_one_writer_commits_at_one_over_the_mean_cycle(shape, think):
    """N = 1, no contention: commits/s = 1 / E[cycle], the cycle's mean in closed form from the latency profiles
    and the runtime. Tolerance: 4 standard errors of a renewal rate over the window, sqrt(var / mean^3 / T),
    with the cycle's variance measured."""
    d = writers_config({"count": 1, **think}, commit={"shape": shape})
    if shape == "object":
        d["commit"]["max_retries"] = 0
        d["workload"]["runtime"] = {"median_ms": 0, "sigma": 0, "min_ms": 0}
    cfg, rec, summary = records_of(d)
    assert summary["success_rate"] == 1.0 and summary["mean_attempts"] == 1.0
    mu = mean_cycle_ms(cfg)
    _, c = cycles(rec)
    window_s = (cfg.duration_ms - cfg.warmup_ms - cfg.cooldown_ms) / 1000.0
    se = math.sqrt(c.var() / mu ** 3 * 1000.0 / window_s)   # commits/s
    assert abs(summary["throughput_cps"] - 1000.0 / mu) <= 4 * se, (summary["throughput_cps"], 1000.0 / mu, se)
    assert abs(c.mean() - mu) <= 4 * c.std() / math.sqrt(len(c))


LAW_CASES = {
    "contended_retries": ({"count": 8, "think_ms": 200.0, "think": "exponential"},
                          {"retry": {"catalog": {"policy": "exponential"}}}),
    "bench_no_think": ({"count": 6}, {"commit": {"shape": "object", "max_retries": 0},
                                      "workload": {"runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}}),
    "log_tables_constant_think": ({"count": 12, "think_ms": 1000.0}, {"design": "log",
                                                                       "workload": {"num_tables": 3}}),
    # one object at 1 write/s: a transaction's 429s can take minutes (so a cooldown that outlasts them)
    "gcp_throttled": ({"count": 4, "think_ms": 100.0}, {"storage": {"provider": "gcp"}, "duration_ms": 1_200_000,
                                                        "cooldown_ms": 500_000}),
}


def response_time_law(cfg, rec):
    """(X (R + Z), N, N c_max / T) over the window's transactions of a closed loop (X: transactions started in
    the window per ms, R: their mean time from start to end, Z: their mean think time before the writer's next
    start, c_max the longest cycle that meets the window, a writer's wait for its first start counting as one),
    or None where a writer stopped before the window's end (a transaction starting before it has no next start:
    a budget, or the run's end). Each writer's cycles tile its time, so the only error is where the window cuts
    a cycle, at either end: |X (R + Z) - N| <= N c_max / T exactly. (The cycle cut at the window's start is the
    last one to start before it: a transaction 22 s long there broke a bound over the window's cycles alone.)"""
    lo, hi = cfg.warmup_ms, cfg.duration_ms - cfg.cooldown_ms
    rec = rec.sort_values(["writer", "txn"])
    start = rec["arrival_ms"]
    nxt = rec.groupby("writer")["arrival_ms"].shift(-1)
    win = ((start >= lo) & (start < hi)).to_numpy()
    if not win.any() or (start[nxt.isna()] < hi).any():
        return None
    T, n = hi - lo, cfg.workload.writers.count
    X = win.sum() / T
    law = X * (float((rec["end_ms"] - start)[win].mean()) + float((nxt - rec["end_ms"])[win].mean()))
    first = start.groupby(rec["writer"]).min()
    c_max = max(float((nxt - start)[(start < hi) & (nxt > lo)].max()), float(first[first > lo].to_numpy().max(initial=0.0)))
    return law, n, n * c_max / T


@pytest.mark.parametrize("name", sorted(LAW_CASES))
def test_response_time_law(name):
    """N = X (R + Z) within the window's cut cycles (`response_time_law`); and the think times measured are the
    configured ones (4 standard errors)."""
    writers, over = LAW_CASES[name]
    d = writers_config(writers)
    for key, value in over.items():
        d[key] = {**d[key], **value} if isinstance(d.get(key), dict) else value
    cfg, rec, _ = records_of(d)
    law = response_time_law(cfg, rec)
    assert law is not None   # every window transaction ended and its writer went on
    x, n, bound = law
    assert abs(x - n) <= bound, law
    rec = rec.sort_values(["writer", "txn"])
    think = (rec.groupby("writer")["arrival_ms"].shift(-1) - rec["end_ms"]).dropna().to_numpy()
    mean_think = cfg.workload.writers.think_ms
    if think.std() == 0:
        assert np.allclose(think, mean_think, rtol=0, atol=1e-6 * max(1.0, mean_think))
    else:
        assert abs(think.mean() - mean_think) <= 4 * think.std() / math.sqrt(len(think))


def test_budget_ends_each_writer_after_exactly_k():
    """Conservation: every writer's transactions are accounted for, each writer runs exactly K, one at a time,
    all of them end, and the run stops when the last one has (long before duration_ms)."""
    n, k = 7, 13
    d = writers_config({"count": n, "commits": k, "tables": "owned", "think_ms": 20.0},
                       workload={"num_tables": 3, "runtime": {"median_ms": 500, "sigma": 0.5, "min_ms": 0}},
                       commit={"max_retries": 2})
    cfg, rec, _ = records_of(d)
    assert len(rec) == n * k
    assert sorted(rec["txn"]) == list(range(n * k))
    assert (rec.groupby("writer").size() == k).all() and set(rec["writer"]) == set(range(n))
    assert rec["outcome"].isin(["committed", "aborted"]).all()
    assert (rec["table"] == rec["writer"] % 3).all()
    for _, g in rec.sort_values("txn").groupby("writer"):
        assert (g["arrival_ms"].to_numpy()[1:] >= g["end_ms"].to_numpy()[:-1]).all()   # one at a time
    assert rec["end_ms"].max() < cfg.duration_ms / 10


def test_no_transaction_starts_at_or_after_duration():
    d = writers_config({"count": 5, "think_ms": 300.0, "think": "exponential"},
                       duration_ms=30_000, warmup_ms=5_000, cooldown_ms=5_000)
    cfg, rec, _ = records_of(d)
    assert rec["arrival_ms"].max() < cfg.duration_ms
    assert (rec.groupby("writer")["arrival_ms"].max() > cfg.duration_ms - 3_000).all()   # each went on till then


def _ticks(cfg, rec):
    """Per transaction of a periodic writer: the index of the tick it serves (phase + k interval)."""
    interval = cfg.workload.writers.interval_ms
    first = rec.groupby("writer")["due_ms"].transform("min")
    return np.round((rec["due_ms"] - first) / interval).astype(int)


@pytest.mark.parametrize("overrun", ["wait", "skip"])
def test_periodic_ticks_are_served_or_missed(overrun):
    """Commits take longer than the interval (runtime ~2.5 s, interval 1 s): every tick up to the last covered
    is served by a commit or missed (merged into one under wait, dropped under skip), never both; wait starts
    late (lag grows), skip starts on its tick (lag within the jitter)."""
    d = writers_config({"count": 3, "mode": "periodic", "interval_ms": 1_000.0, "jitter_ms": 50.0,
                        "overrun": overrun}, duration_ms=120_000, warmup_ms=10_000, cooldown_ms=10_000)
    d["workload"]["runtime"] = {"median_ms": 2_500, "sigma": 0.2, "min_ms": 0}
    cfg, rec, _ = records_of(d)
    rec = rec.sort_values(["writer", "txn"]).assign(tick=lambda r: _ticks(cfg, r))
    lag = rec["arrival_ms"] - rec["due_ms"]
    assert (lag >= 0).all()
    for _, g in rec.groupby("writer"):
        k, missed = g["tick"].to_numpy(), g["missed"].to_numpy()
        assert (np.diff(k) > 0).all()
        covered = k[-1] + (missed[-1] if overrun == "wait" else 0)
        assert len(g) + missed.sum() == covered + 1
        if overrun == "skip":
            assert (np.diff(k) - 1 == missed[1:]).all()
        else:
            assert (np.diff(k) - 1 == missed[:-1]).all()
    assert rec["missed"].sum() > len(rec) / 2
    if overrun == "skip":
        assert lag.max() <= 50.0
    else:
        assert lag.iloc[-1] > 10 * 50.0


def test_periodic_on_time_misses_nothing():
    """Commits well inside the interval: no tick is missed and each starts within its jitter of its tick."""
    d = writers_config({"count": 4, "mode": "periodic", "interval_ms": 10_000.0, "jitter_ms": 500.0},
                       duration_ms=300_000, warmup_ms=20_000, cooldown_ms=20_000)
    cfg, rec, _ = records_of(d)
    lag = rec["arrival_ms"] - rec["due_ms"]
    assert rec["missed"].sum() == 0 and lag.between(0, 500.0).all()
    assert (rec.groupby("writer").size() >= 29).all()


@pytest.mark.parametrize("design,gets", [("file", 1), ("log", 0)])
def test_object_shape_requests(design, gets):
    """The microbenchmark's operation: a HEAD (a GET) on a storage object (none on a log: its read is the LIST),
    one catalog read and one conditional write, no PUT, no retry."""
    d = writers_config({"count": 4}, design=design, commit={"shape": "object", "max_retries": 0})
    d["workload"]["runtime"] = {"median_ms": 0, "sigma": 0, "min_ms": 0}
    _, rec, summary = records_of(d)
    done = rec[rec["outcome"] != "unfinished"]
    assert (done["gets"] == gets).all() and (done["puts"] == 0).all()
    assert (done["catalog_reads"] == 1).all() and (done["cases"] == 1).all()
    assert 0.0 < summary["success_rate"] < 1.0   # four threads on one object contend


def test_config_rules():
    from sim.config import ConfigError
    bad = [({"workload": {"writers": {"count": 2, "interval_ms": 5}}}, "workload.writers.interval_ms"),
           ({"workload": {"writers": {"count": 2, "mode": "periodic"}}}, "workload.writers.interval_ms"),
           ({"workload": {"writers": {"think_ms": 5}}}, "workload.writers.think_ms"),
           ({"workload": {"writers": {"count": 2}, "inter_arrival": {"mean_ms": 50}}}, "workload.inter_arrival"),
           ({"commit": {"shape": "object"}, "workload": {"fast_append_ratio": 0.5}}, "workload.fast_append_ratio"),
           ({"workload": {"runtime": {"median_ms": 0, "sigma": 1}}}, "workload.runtime.sigma")]
    for data, path in bad:
        with pytest.raises(ConfigError) as e:
            from_dict(data)
        assert e.value.path == path, (data, str(e.value))
    assert config_hash(from_dict({})) == config_hash(from_dict({"workload": {"writers": {"count": 0}}}))
    w = from_dict({"workload": {"writers": {"count": 3, "mode": "periodic", "interval_ms": 60_000}}}).workload.writers
    assert (w.overrun, w.jitter_ms, w.start_spread_ms) == ("wait", 0.0, 60_000)
