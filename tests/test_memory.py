"""Memory flat in run length (issue 11): transactions in slots that hand their records to a record sink when
they finish, records streamed to parquet, the summary accumulated as records come. Small configs and forced tiny
capacities (2 slots, row groups of a few hundred rows) so that every path runs many times in a second or two."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st
from pandas.testing import assert_frame_equal

from sim import metrics
from sim.config import from_dict
from sim.engines import make_engine
from sim.model import slots
from sim.model.state import PC, Op
from sim.run import run
from sim.sink import MemorySink
from test_fast_engine import BASE as CASE_BASE, CASES, CONTENDED, merge

# the identity cases' base with the two-minute window these tests were sized on (counts, row groups streamed)
BASE = merge(CASE_BASE, {"duration_ms": 120_000, "warmup_ms": 20_000, "cooldown_ms": 20_000})
ZIPF_VO = merge(BASE, {"workload": {"inter_arrival": {"mean_ms": 40}, "num_tables": 3, "fast_append_ratio": 0.6,
                                    "vo_conflict_probability": 0.3,
                                    "table_selection": {"distribution": "zipf", "alpha": 1.2}}})
# long-lived transactions (seconds, tens of arrivals; backoff up to 5 s): the slots must grow
LONG_LIVED = merge(BASE, {"workload": {"num_tables": 10, "fast_append_ratio": 0.8,
                                       "runtime": {"median_ms": 2000, "sigma": 0.5, "min_ms": 500}},
                          "retry": {"table": {"policy": "exponential", "base_ms": 500, "max_ms": 5000}}})


def _close(a: float, b: float, rel: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= rel * abs(a)


# operations with read and write sets and maintenance jobs: their blocks and work lost
OPERATIONS = merge(ZIPF_VO, {"workload": {"fast_append_ratio": 1.0, "vo_conflict_probability": 0.0,
                                          "operations": {"partitions": 2, "overwrite_share": 0.2,
                                                         "row_delta_share": 0.1}},
                             "maintenance": {"compaction": {"every_ms": 20_000, "median_ms": 5_000},
                                             "expire_snapshots": {"every_ms": 30_000}}})


# commit requests that lose their answer (`faults`): unknown and duplicated outcomes, orphaned files and bytes
FAULTS = merge(ZIPF_VO, {"faults": {"commit": {"lost_answer": 0.05, "server_error": 0.05}, "data_files": 2,
                                    "data_bytes": 2.5e8}})


@pytest.mark.parametrize("spec, aborted", [(ZIPF_VO, "vo_aborted"), (OPERATIONS, "compaction_aborted"),
                                           (FAULTS, "unknown")])
def test_streamed_summary_matches_in_memory(spec, aborted):
    """Counts and integer sums exact; means and work lost within 1e-12 relative (float summation order);
    percentiles within ALPHA_SUMMARY relative, per-table p99 within ALPHA_TABLE (plus float rounding)."""
    cfg = from_dict(spec)
    exact = run(cfg, 0, stream=False)
    streamed = run(cfg, 0, stream=True, slots=2)
    assert streamed.columns is None and exact.columns is not None
    a, b = exact.summary, streamed.summary
    assert list(a) == list(b)
    assert a["committed"] > 500 and a[aborted] > 0
    pct = [k for k in a if "latency_p" in k]
    means = [k for k in a if k.endswith("_mean_ms") or k.endswith("_per_commit") or k.endswith("mean_attempts")
             or k.endswith("_work_lost_s")]
    for k in a:
        if k == "wall_s":
            continue
        if k in pct:
            assert _close(a[k], b[k], metrics.ALPHA_SUMMARY * (1 + 1e-9)), (k, a[k], b[k])
        elif k in means:
            assert _close(a[k], b[k], 1e-12), (k, a[k], b[k])
        else:
            assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), (k, a[k], b[k])
    assert any(a[k] != b[k] for k in pct)   # the percentiles really are the histogram's
    assert [r["table_rank"] for r in exact.per_table] == [r["table_rank"] for r in streamed.per_table]
    for ra, rb in zip(exact.per_table, streamed.per_table):
        for k in ra:
            rel = {"commit_latency_p99_ms": metrics.ALPHA_TABLE * (1 + 1e-9), "commit_latency_mean_ms": 1e-12}
            assert _close(ra[k], rb[k], rel.get(k, 0.0)), (ra["table_rank"], k, ra[k], rb[k])


@pytest.mark.parametrize("alpha", [metrics.ALPHA_SUMMARY, metrics.ALPHA_TABLE])
def test_log_histogram_percentiles_within_alpha(alpha):
    """Against np.percentile over wide-ranging values with ties, zeros and one group empty."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.lognormal(5.0, 2.0, 20_000), np.zeros(300), np.full(500, 123.456)])
    rows = rng.integers(0, 2, len(x))
    h = metrics.LogHistogram(alpha, 3)
    for part in np.array_split(np.arange(len(x)), 7):   # chunks widen the bucket range both ways
        h.add(rows[part], x[part])
    qs = (0, 1, 50, 95, 99, 99.9, 100)
    for sel, mask in (([0], rows == 0), ([1], rows == 1), ([0, 1], rows >= 0)):
        exact = np.percentile(x[mask], qs)
        got = h.percentiles(sel, qs)
        assert np.all(np.abs(got - exact) <= alpha * (1 + 1e-9) * exact), (sel, got, exact)
    assert all(math.isnan(v) for v in h.percentiles([2], qs))


def test_streamed_parquet_equals_records(tmp_path):
    """Records written row group by row group (batches as transactions finish) read back, in id order, as the
    in-memory records frame; a small run given a records path keeps its exact summary."""
    cfg = from_dict(ZIPF_VO)
    ref = run(cfg, 0, history=True)
    ref.records.to_parquet(tmp_path / "ref.parquet", index=False)
    for stream in (True, False):
        path = tmp_path / f"t{stream}.parquet"
        got = run(cfg, 0, history=True, stream=stream, records_path=path, row_group_rows=300, slots=2)
        assert pq.ParquetFile(path).num_row_groups >= len(ref.records) // 300
        assert pq.read_schema(path) == pq.read_schema(tmp_path / "ref.parquet")
        back = pd.read_parquet(path)
        assert not back["txn"].is_monotonic_increasing    # the order transactions finished in
        assert_frame_equal(back.sort_values("txn", ignore_index=True), ref.records, check_exact=True)
        assert_frame_equal(got.history, ref.history, check_exact=True)
        if not stream:
            assert {k: v for k, v in got.summary.items() if k != "wall_s"} == \
                {k: v for k, v in ref.summary.items() if k != "wall_s"}


class CountingSink(MemorySink):
    def __init__(self):
        super().__init__()
        self.chunks = 0

    def add(self, out, cols):
        self.chunks += 1
        super().add(out, cols)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_slots_grow_and_hand_out_records_identically(engine):
    """2 slots at first, long-lived transactions: records are handed out many times and the slots double, and
    the records and history are those of a run whose slots never ran out; a second fresh engine gives them
    again."""
    cfg = from_dict(LONG_LIVED)
    ref = make_engine(cfg, 0, True, engine).run()
    sink = CountingSink()
    tiny = make_engine(cfg, 0, True, engine, sink=sink, slots=2).run()
    again = make_engine(cfg, 0, True, engine, sink=CountingSink(), slots=2).run()
    assert sink.chunks > 5                                   # records handed out mid-run, many times
    assert 2 < len(tiny.r.m.tx) < len(ref.records_frame())   # grew, yet stayed below the run's size
    assert tiny.records_frame()["outcome"].eq("unfinished").sum() < len(ref.records_frame())
    for other in (tiny, again):
        assert other.end_ms == ref.end_ms
        assert_frame_equal(other.records_frame(), ref.records_frame(), check_exact=True)
        assert_frame_equal(other.history_frame(), ref.history_frame(), check_exact=True)


def test_engines_agree_with_tiny_capacities():
    """Both engines, the arrays that grow with the run forced to start tiny (slots, a throttled log's buckets,
    the conflict table): the same records and histories."""
    cfg = from_dict(merge(BASE, CASES["throttle_log"]))
    fast = make_engine(cfg, 0, True, "fast", slots=2).run()
    ref = make_engine(cfg, 0, True, "simpy", slots=4).run()
    assert len(fast.r.m.bk_prev) > 2
    assert_frame_equal(fast.records_frame(), ref.records_frame(), check_exact=True)
    assert_frame_equal(fast.history_frame(), ref.history_frame(), check_exact=True)
    cfg = from_dict(merge(BASE, CASES["log_vo_conflicts_backoff"]))
    assert_frame_equal(make_engine(cfg, 0, True, "fast", slots=2).run().history_frame(),
                       make_engine(cfg, 0, True, "fast").run().history_frame(), check_exact=True)
    contended = from_dict(merge(BASE, CONTENDED))
    assert_frame_equal(make_engine(contended, 0, False, "fast", slots=2).run().records_frame(),
                       make_engine(contended, 0, False, "fast").run().records_frame(), check_exact=True)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(0, 40), tables=st.integers(1, 4), appends_validate=st.booleans(), seed=st.integers(0, 2**32))
def test_most_to_validate_is_the_column_formula(rows, tables, appends_validate, seed):
    """The refill's one-pass bound over the slots (`slots.most_to_validate`) equals the column-by-column formula it
    replaced: the most snapshots a live transaction past its base read has yet to validate (appends only if they
    validate), at least 0."""
    rng = np.random.default_rng(seed)
    tx = slots.blank(rows)
    tx["txn"] = rng.integers(-1, 5, rows)
    tx["pc"] = rng.choice([PC.DONE, PC.INIT, PC.BASE, PC.LOG_BASE, PC.CAS, PC.REFRESH, PC.CONFLICT_READ], rows)
    tx["op"] = rng.choice([Op.FA, Op.VO, Op.OVERWRITE], rows)
    tx["table"] = rng.integers(0, tables, rows)
    tx["validated"] = rng.integers(0, 30, rows)
    versions = rng.integers(0, 30, tables)
    pc = tx["pc"]
    live = (tx["txn"] >= 0) & (pc != PC.DONE) & (pc != PC.INIT) & (pc != PC.BASE) & (pc != PC.LOG_BASE)
    if not appends_validate:
        live &= tx["op"] != Op.FA
    val = versions[tx["table"][live]] - tx["validated"][live]
    expected = max(0, int(val.max())) if len(val) else 0
    assert slots.most_to_validate(tx, versions, appends_validate) == expected


def test_memory_sink_places_records_by_id():
    """Batches come in id order each, not overall (a long-lived transaction finishes after later ones); the sink
    puts each record at its id, grows past what it expected, and says so if an id never came."""
    sink = MemorySink(expected=2)
    for ids in ([0, 2, 3], [1, 5], [4]):
        ids = np.array(ids, dtype=np.int64)
        out, cols = sink.room(ids)
        for f, name in enumerate(sink.fields):
            out[f][cols] = ids * 10 + f if name != "end_ms" else np.float64(0.5).view(np.int64)
        sink.add(out, cols)
        if len(ids) == 1:
            continue
        with pytest.raises(RuntimeError, match="records handed in"):
            sink.columns()   # an id below the highest handed in is missing
    cols = sink.columns()
    assert cols["txn"].tolist() == [0, 10, 20, 30, 40, 50]
    assert cols["table_rank"].tolist() == [t + 1 for t in cols["table"].tolist()]
    assert (cols["end_ms"] == 0.5).all()


def test_projected_refills_draw_less_and_change_nothing(monkeypatch):
    """A refill sized by the run's rate so far (`Source.refill`'s `share_left`) against one that draws 8 times what
    the source held: the same run, bit for bit, from fewer draws."""
    from sim.model import build, sources

    spec = merge(BASE, {"workload": {"inter_arrival": {"mean_ms": 20}, "fast_append_ratio": 0.9}})
    monkeypatch.setattr(sources, "CHUNK", 1 << 17)      # refills in a two-minute run, the last one not capped
    refills = []
    refill = sources.Source.refill
    monkeypatch.setattr(sources.Source, "refill", lambda *a: (refills.append(1), refill(*a))[1])
    results = {}
    for projected in (True, False):
        if not projected:
            monkeypatch.setattr(build.Run, "_share_left", lambda run, now_ms: None)
        refills.clear()
        eng = make_engine(from_dict(spec), 0, False, "fast").run()
        results[projected] = (eng.records_frame(), sum(s.drawn for s in eng.r.sources if not s.const), len(refills))
    assert results[True][2] >= 3                                  # refilled (measured: 5 and 5)
    assert results[True][1] < 0.8 * results[False][1]             # fewer values drawn (measured: 494 k, 691 k)
    assert_frame_equal(results[True][0], results[False][0], check_exact=True)
