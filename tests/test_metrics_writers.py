"""The writer metrics (sim.metrics: attempts, aborted latency, writers, commit lag, per_writer) on hand-made
record columns, each against a hand computation; and the streaming summary against the in-memory one."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import metrics
from sim.metrics import ALPHA_SUMMARY, StreamSummary, nested, per_writer, summarize
from sim.model.state import Outcome
from sim.records import RECORD_COLUMNS, empty_columns

C, A, U = int(Outcome.COMMITTED), int(Outcome.ABORTED), int(Outcome.UNFINISHED)
WINDOW = (1000.0, 11000.0)        # 10 s
END_MS = 13000.0                  # when the run ended: an unfinished transaction whose runtime ends later never began
                                  # to commit
NEW_KEYS = ["attempts_cps", "attempt_failure_share", "aborted_latency_mean_ms", "aborted_latency_p50_ms",
            "aborted_latency_p95_ms", "aborted_latency_p99_ms", "writers_seen", "commits_per_writer_cps",
            "writer_utilisation", "commit_lag_mean_ms", "commit_lag_p99_ms", "missed_interval_share"]
# the lock's keys come after them (sim.metrics._lock_out)
LOCK_KEYS = ["lock_requests", "lock_grants", "lock_timeouts", "lock_grants_cps", "lock_wait_mean_ms",
             "lock_wait_p99_ms", "lock_hold_mean_ms", "lock_hold_p99_ms"]
# ... and the faults' after those (sim.metrics._fault_figures)
FAULT_KEYS = ["faults", "unknown", "unknown_landed", "duplicated", "partial", "orphaned_files", "orphaned_bytes"]


def cols_of(**given) -> dict:
    """Record columns (every RECORD_COLUMNS entry, its dtype) of len(given['writer']) transactions: `given`'s
    values, the others 0 (NaN due_ms, table rank 1)."""
    n = len(given["writer"])
    dt = empty_columns()
    cols = {k: np.zeros(n, dtype=dt[k].dtype) for k in RECORD_COLUMNS}
    cols["txn"] = np.arange(n)
    cols["table_rank"] = cols["table"] + 1
    cols["due_ms"] = np.full(n, np.nan)
    for k, v in given.items():
        cols[k] = np.asarray(v, dtype=dt[k].dtype)
    cols["attempts"] = cols["cases"].copy()
    cols["outcome"][cols["outcome"] == 0] = C
    return cols


def closed_loop() -> dict:
    """Two closed-loop writers; writer 0's first transaction starts before the window, its last is unfinished."""
    return cols_of(writer=[0, 0, 0, 0, 1, 1],
                   arrival_ms=[500, 2000, 4000, 10500, 1000, 3000],
                   runtime_end_ms=[800, 2500, 4600, 10800, 1200, 3300],
                   end_ms=[1500, 3000, 5000, np.nan, 2200, 4000],
                   outcome=[C, C, A, U, C, A],
                   cases=[1, 2, 3, 1, 1, 2],
                   in_window=[False, True, True, True, True, True])


def periodic() -> dict:
    """Two periodic writers, 1 s cadence: lags 0, 500, 50, 950 ms; 1 + 2 ticks missed."""
    return cols_of(writer=[0, 0, 1, 1], arrival_ms=[1000, 2500, 1100, 4000], due_ms=[1000, 2000, 1050, 3050],
                   missed=[0, 1, 0, 2], runtime_end_ms=[1500, 3000, 1300, 4300], end_ms=[1800, 3200, 1400, 4500],
                   outcome=[C, C, A, C], cases=[1, 1, 2, 1], in_window=[True] * 4)


def test_closed_loop_summary_by_hand():
    s = summarize(closed_loop(), WINDOW, END_MS)
    assert s["throughput_cps"] == 0.2                       # 2 commits in 10 s
    assert s["attempts_cps"] == 0.9                         # 2 + 3 + 1 + 1 + 2 conditional writes
    assert s["attempt_failure_share"] == 7 / 9              # all but the 2 commits' last ones failed
    # aborted: 5000 - 4600 = 400, 4000 - 3300 = 700
    assert s["aborted_latency_mean_ms"] == 550.0
    assert s["aborted_latency_p50_ms"] == 550.0
    assert s["aborted_latency_p95_ms"] == pytest.approx(400 + 0.95 * 300, abs=1e-9)
    assert s["aborted_latency_p99_ms"] == pytest.approx(400 + 0.99 * 300, abs=1e-9)
    assert s["writers_seen"] == 2
    assert s["commits_per_writer_cps"] == 0.1
    # writer 0 busy 500 (before the window, counted from its start) + 1000 + 1000 + 500 (unfinished: to the
    # window's end) of 10000 ms; writer 1 1200 + 1000
    assert s["writer_utilisation"] == pytest.approx((0.3 + 0.22) / 2, abs=1e-15)
    assert math.isnan(s["commit_lag_mean_ms"]) and math.isnan(s["commit_lag_p99_ms"])
    assert math.isnan(s["missed_interval_share"])


def test_closed_loop_per_writer_by_hand():
    rows = per_writer(closed_loop(), WINDOW, END_MS)
    assert [r["writer"] for r in rows] == [0, 1]
    w0, w1 = rows
    assert list(w0) == ["writer", "arrived", "committed", "aborted", "began_commit", "success_rate",
                        "success_rate_finished",
                        "throughput_cps", "attempts_cps", "utilisation", "commit_lag_mean_ms", "missed_interval_share"]
    assert (w0["arrived"], w0["committed"], w0["aborted"]) == (3, 1, 1)
    assert (w1["arrived"], w1["committed"], w1["aborted"]) == (2, 1, 1)
    assert w0["success_rate"] == 1 / 3      # writer 0's unfinished one began to commit (10800 < END_MS): a failure
    assert w0["success_rate_finished"] == w1["success_rate"] == w1["success_rate_finished"] == 0.5
    assert w0["throughput_cps"] == w1["throughput_cps"] == 0.1
    assert (w0["attempts_cps"], w1["attempts_cps"]) == (0.6, 0.3)
    assert w0["utilisation"] == pytest.approx(0.3, abs=1e-15)
    assert w1["utilisation"] == pytest.approx(0.22, abs=1e-15)
    assert math.isnan(w0["commit_lag_mean_ms"]) and math.isnan(w1["missed_interval_share"])
    mean_utilisation = (w0["utilisation"] + w1["utilisation"]) / 2
    want = summarize(closed_loop(), WINDOW, END_MS)["writer_utilisation"]
    assert mean_utilisation == pytest.approx(want, abs=1e-15)


def test_periodic_lag_and_missed_by_hand():
    s = summarize(periodic(), WINDOW, END_MS)
    assert s["commit_lag_mean_ms"] == 375.0                   # (0 + 500 + 50 + 950) / 4
    assert s["commit_lag_p99_ms"] == pytest.approx(500 + 0.97 * 450, abs=1e-9)   # np.percentile's h = 2.97
    assert s["missed_interval_share"] == 3 / 7               # 3 ticks missed, 4 served
    assert s["attempts_cps"] == 0.5 and s["attempt_failure_share"] == 2 / 5
    assert s["aborted_latency_mean_ms"] == 100.0
    w0, w1 = per_writer(periodic(), WINDOW, END_MS)
    assert (w0["commit_lag_mean_ms"], w1["commit_lag_mean_ms"]) == (250.0, 500.0)
    assert (w0["missed_interval_share"], w1["missed_interval_share"]) == (1 / 3, 0.5)


def test_open_loop_has_the_same_keys_nan_and_no_writer_rows():
    cols = closed_loop()
    cols["writer"][:] = -1
    s, w = summarize(cols, WINDOW, END_MS), summarize(closed_loop(), WINDOW, END_MS)
    tail = NEW_KEYS + LOCK_KEYS + FAULT_KEYS
    assert list(s) == list(w) and list(s)[-len(tail):] == tail
    assert s["writers_seen"] == 0
    for k in ("commits_per_writer_cps", "writer_utilisation", "commit_lag_mean_ms", "commit_lag_p99_ms",
              "missed_interval_share"):
        assert math.isnan(s[k]), k
    assert s["attempts_cps"] == 0.9                          # not a writer key: every run has it
    assert per_writer(cols, WINDOW, END_MS) == []
    assert {k: v for k, v in s.items() if k not in NEW_KEYS} == \
        {k: v for k, v in w.items() if k not in NEW_KEYS}     # the writer column changes no other key


def test_success_is_over_transactions_that_began_to_commit():
    """MODEL.md 'Metrics': an unfinished transaction still in its runtime at the run's end (its runtime end after
    END_MS, or not drawn yet) is left out of the success rate and counted in its own share; one whose runtime had
    ended (it began to commit) is a failure; per kind too; the finished-only rate leaves both out."""
    cols = cols_of(writer=[-1] * 6, op=[0, 0, 0, 1, 1, 0],
                   arrival_ms=[2000, 3000, 4000, 5000, 6000, 10900],
                   runtime_end_ms=[2500, 3500, 12000, 14000, 6500, np.nan],
                   end_ms=[2600, np.nan, np.nan, np.nan, 6600, np.nan],
                   outcome=[C, U, U, U, A, U], cases=[1, 2, 1, 0, 1, 0], in_window=[True] * 6)
    s = summarize(cols, WINDOW, END_MS)
    assert (s["arrived"], s["began_commit"], s["committed"], s["aborted"]) == (6, 4, 1, 1)
    assert s["success_rate"] == 1 / 4                  # txns 1 and 2 began to commit and had not ended: failures
    assert s["success_rate_finished"] == 1 / 2
    assert (s["unfinished"], s["unfinished_in_runtime"]) == (4, 2)
    assert s["unfinished_in_runtime_share"] == 2 / 6
    assert (s["fa_began_commit"], s["fa_success_rate"]) == (3, 1 / 3)
    assert (s["vo_began_commit"], s["vo_success_rate"]) == (1, 0.0)
    assert nested(s)["transactions"]["unfinished_in_runtime"] == 2
    later = summarize(cols, WINDOW, 15000.0)          # had the run ended later, txn 3's runtime would have ended
    assert (later["began_commit"], later["vo_success_rate"]) == (5, 0.0)


def test_no_aborted_nor_attempts_is_nan():
    cols = cols_of(writer=[-1], arrival_ms=[2000], runtime_end_ms=[2500], end_ms=[np.nan], outcome=[U],
                   cases=[0], in_window=[True])
    s = summarize(cols, WINDOW, END_MS)
    assert s["attempts_cps"] == 0.0
    assert math.isnan(s["attempt_failure_share"]) and math.isnan(s["aborted_latency_p99_ms"])


def test_nested_writers_group():
    n = nested(summarize(periodic(), WINDOW, END_MS))["writers"]
    assert n["count"] == 2 and n["commits_per_writer_cps"] == 0.15
    assert n["commit_lag_ms"] == {"mean": 375.0, "p99": pytest.approx(936.5)}
    assert n["attempt_failure_share"] == 2 / 5 and n["aborted_latency_ms"]["mean"] == 100.0


# ------------------------------------------------------------------------------------- streaming


def streamed(cols: dict, cuts: list[int], order: list[int]) -> StreamSummary:
    bounds = [0, *sorted(cuts), len(cols["txn"])]
    chunks = [{k: v[a:b] for k, v in cols.items()} for a, b in zip(bounds, bounds[1:])]
    ss = StreamSummary(WINDOW, 3)
    for i in order:
        if i < len(chunks):
            ss.add(chunks[i])
    for i in range(len(chunks)):
        if i not in order:
            ss.add(chunks[i])
    return ss


def assert_same(got, want, key):
    if isinstance(want, float) and math.isnan(want):
        assert math.isnan(got), key
    elif key.endswith(("_p50_ms", "_p95_ms", "_p99_ms")):
        assert got == pytest.approx(want, rel=2 * ALPHA_SUMMARY, abs=1e-9), key
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), key
    else:
        assert got == want, key


@st.composite
def records(draw):
    """Random records of up to 4 writers (or open loop), periodic or not, in and out of the window."""
    n = draw(st.integers(1, 40))
    ints = lambda lo, hi: draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))  # noqa: E731
    writer = np.array(ints(-1, 3) if draw(st.booleans()) else [-1] * n)
    arrival = np.array(ints(0, 12000), dtype=float)
    runtime_end = arrival + np.array(ints(0, 3000))
    outcome = np.array(draw(st.lists(st.sampled_from([C, A, U]), min_size=n, max_size=n)))
    runtime_end[(outcome == U) & np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))] = np.nan
    end = np.where(outcome == U, np.nan, runtime_end + np.array(ints(0, 2000)))
    due = arrival - np.array(ints(0, 1500)) if draw(st.booleans()) else np.full(n, np.nan)
    return cols_of(writer=writer, arrival_ms=arrival, runtime_end_ms=runtime_end, end_ms=end, outcome=outcome,
                   cases=np.where(outcome == C, 1, 0) + np.array(ints(0, 3)), due_ms=due,
                   missed=np.array(ints(0, 2)) * ~np.isnan(due), table=ints(0, 2), op=ints(0, 1),
                   in_window=(arrival >= WINDOW[0]) & (arrival < WINDOW[1]))


@settings(max_examples=80, deadline=None)
@given(cols=records(), cuts=st.lists(st.integers(0, 40), max_size=4), order=st.permutations(range(5)))
def test_streaming_equals_in_memory(cols, cuts, order):
    n = len(cols["txn"])
    ss = streamed(cols, [min(c, n) for c in cuts], list(order))
    want, got = summarize(cols, WINDOW, END_MS), ss.summary(END_MS)
    assert list(got) == list(want)
    for k in want:
        assert_same(got[k], want[k], k)
    rows_want, rows_got = per_writer(cols, WINDOW, END_MS), ss.per_writer(END_MS)
    assert [r["writer"] for r in rows_got] == [r["writer"] for r in rows_want]
    for rg, rw in zip(rows_got, rows_want):
        assert list(rg) == list(rw)
        for k in rw:
            assert_same(rg[k], rw[k], k)


def test_streaming_by_hand_chunks():
    """The hand-computed closed-loop and periodic records, one transaction per chunk, last first."""
    for cols in (closed_loop(), periodic()):
        n = len(cols["txn"])
        ss = streamed(cols, list(range(1, n)), list(range(n))[::-1])
        want, got = summarize(cols, WINDOW, END_MS), ss.summary(END_MS)
        for k in NEW_KEYS:
            assert_same(got[k], want[k], k)
        rows_got, rows_want = ss.per_writer(END_MS), per_writer(cols, WINDOW, END_MS)
        assert len(rows_got) == len(rows_want) == 2
        for rg, rw in zip(rows_got, rows_want):
            for k in rw:
                assert_same(rg[k], rw[k], k)


def test_run_result_carries_per_writer():
    """An open-loop run: the new keys in its summary, streamed or not, and no per-writer rows."""
    from sim import api
    cfg = api.config(None, **{"duration_ms": 120_000, "warmup_ms": 20_000, "cooldown_ms": 20_000,
                              "drain_limit_ms": 60_000, "workload.inter_arrival.mean_ms": 500,
                              "workload.runtime.median_ms": 2000, "workload.runtime.min_ms": 500})
    a, b = api.run(cfg, stream=False), api.run(cfg, stream=True)
    assert a.per_writer == b.per_writer == []
    assert list(a.summary) == list(b.summary)
    assert a.summary["writers_seen"] == 0 and a.summary["attempts_cps"] == b.summary["attempts_cps"] > 0
    assert metrics.nested(a.summary)["writers"]["count"] == 0


WRITERS_RUN = {"duration_ms": 60_000, "warmup_ms": 10_000, "cooldown_ms": 10_000, "drain_limit_ms": 30_000,
               "storage": {"provider": "s3x"}, "commit": {"shape": "object", "max_retries": 0},
               "workload": {"writers": {"count": 3, "mode": "closed"},
                            "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}}


@pytest.mark.parametrize("mode", ["closed", "periodic"])
def test_writers_run(mode):
    """Real runs: closed-loop writers without think time are always inside a transaction (utilisation 1);
    per-writer rows add up to the summary; streamed and in-memory summaries agree."""
    from sim import api
    from sim.run import run
    extra = {} if mode == "closed" else {"workload.writers.mode": "periodic", "workload.writers.interval_ms": 40.0,
                                         "workload.writers.jitter_ms": 5.0}
    cfg = api.config(WRITERS_RUN, **extra)
    a, b = run(cfg, stream=False), run(cfg, stream=True)
    s, rows = a.summary, a.per_writer
    assert s["writers_seen"] == len(rows) == 3 and [r["writer"] for r in rows] == [0, 1, 2]
    for k in ("arrived", "committed", "aborted", "began_commit"):
        assert sum(r[k] for r in rows) == s[k]
    assert sum(r["attempts_cps"] for r in rows) == pytest.approx(s["attempts_cps"], rel=1e-12)
    assert s["attempts_cps"] == s["arrived"] / 40.0       # no retries: one conditional write per transaction
    assert s["attempt_failure_share"] == pytest.approx(s["aborted"] / s["arrived"], rel=1e-12)
    if mode == "closed":
        assert s["writer_utilisation"] == pytest.approx(1.0, abs=1e-12)
        assert math.isnan(s["commit_lag_mean_ms"]) and math.isnan(s["missed_interval_share"])
    else:
        assert 0.0 < s["writer_utilisation"] < 1.0
        assert 0.0 <= s["commit_lag_mean_ms"] <= s["commit_lag_p99_ms"]
        assert 0.0 <= s["missed_interval_share"] < 1.0
    assert list(b.summary) == list(s) and len(b.per_writer) == len(rows)
    for k in NEW_KEYS:
        assert_same(b.summary[k], s[k], k)
    for rb, ra in zip(b.per_writer, rows):
        for k in ra:
            assert_same(rb[k], ra[k], k)
