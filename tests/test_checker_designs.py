"""The history checker on catalog designs (MODEL.md "Catalog designs"): per-table CAS scope, the
log protocol (put-if-absent of numbered entries), `throttled` rows, and per-object token buckets.

Small hand-made histories, as in test_checker.py: each valid one must pass clean, each bad one
breaks one rule on purpose and the checker must name it (invariant number, row, message)."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from sim.checker import check_history, format_violation
from test_checker import H, find, row_of, where


def throttled(h: H, t, txn, table, expected, seq, version, lat=1.0):
    return h.add("throttled", t, txn=txn, table=table, expected=expected, ok=False, seq=seq,
                 version=version, answer_ms=t + lat)


def viols(h, **kw):
    df = h.df() if isinstance(h, H) else h
    return check_history(df, **kw)


def assert_clean(h, **kw):
    vs = viols(h, **kw)
    assert vs == [], "\n".join(format_violation(v) for v in vs)


THROTTLE_1 = dict(mutation_rate_per_s=1.0, mutation_burst=1.0)


# ---------------------------------------------------------------- scope: table


def table_history() -> H:
    """Scope table, two tables; rows record seq = version = v[t]. Every conditional write to one
    pointer is >= 1 s after the previous one, except T4's throttled request.
    T1 FA t0 commits v[0]=1; T2 FA t1 commits v[1]=1 right after (a global CAS would have failed);
    T3 VO t0 loses to T1 (table conflict), re-validates 1, commits v[0]=2; T4 FA t1 is throttled
    once, then commits v[1]=2 (one attempt); T5 FA t1 one attempt, fails, aborts."""
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    h.begin(3, 2, 1)
    h.read(4, 2, 1, 0, 0)
    h.prepare(5, 2, 1, 0)
    h.begin(6, 3, 0, op="vo")
    h.read(7, 3, 0, 0, 0)
    h.prepare(8, 3, 0, 0, vfrom=0, vto=0)
    h.cas(1000, 1, 0, 0, True, 1, 1)
    h.end(1001, 1, 0, "committed", 1)
    h.cas(1200, 2, 1, 0, True, 1, 1)             # T1 committed on t0: fine per table
    h.end(1201, 2, 1, "committed", 1)
    h.begin(1300, 4, 1)
    h.read(1301, 4, 1, 1, 1)
    h.prepare(1302, 4, 1, 1)
    throttled(h, 1500, 4, 1, 1, 1, 1)            # t1's pointer: 0.3 tokens since T2's write at 1200
    h.cas(2000, 3, 0, 0, False, 1, 1)            # T3 loses to T1 (table conflict)
    h.read(2002, 3, 0, 1, 1)
    h.prepare(2003, 3, 0, 1, vfrom=0, vto=1)
    h.cas(2500, 4, 1, 1, True, 2, 2)             # T4's resend: a token again
    h.end(2501, 4, 1, "committed", 1)
    h.cas(3000, 3, 0, 1, True, 2, 2)
    h.end(3001, 3, 0, "committed", 2)
    h.begin(3100, 5, 1, attempts=1)
    h.read(3101, 5, 1, 2, 2)
    h.prepare(3102, 5, 1, 2)
    h.begin(3200, 6, 1)
    h.read(3201, 6, 1, 2, 2)
    h.prepare(3202, 6, 1, 2)
    h.cas(3600, 6, 1, 2, True, 3, 3)
    h.end(3601, 6, 1, "committed", 1)
    h.cas(4600, 5, 1, 2, False, 3, 3)            # T6 got there first
    h.end(4601, 5, 1, "aborted", 1)
    h.final(5000, 0, 5, 2)                       # seq: successful CASes over all tables
    h.final(5000, 1, 5, 3)
    return h


def test_table_scope_valid_history():
    assert_clean(table_history(), scope="table")
    assert_clean(table_history(), scope="table", **THROTTLE_1)


def test_table_scope_history_is_not_a_global_history():
    h = table_history()
    vs = viols(h)                                # scope global: T2's CAS must have failed (seq was 1)
    assert any(v.invariant == 1 and "seq was 1" in v.message for v in vs)
    assert vs[0].i == row_of(h, find(h, "cas", 2)) and "seq was 1" in vs[0].message


def test_table_cas_succeeds_although_its_table_moved():
    h = table_history()
    c = find(h, "cas", 3, 0)                     # T3's first CAS (expects v[0]=0; T1 made it 1) succeeds
    c["ok"], c["seq"], c["version"] = True, 2, 2
    vs = viols(h, scope="table")
    assert any(v.invariant == 1 and v.i == row_of(h, c) and "v[0] was 1" in v.message and "yet it succeeded"
               in v.message for v in vs)


def cross_table_failure(scope: str) -> H:
    """T1 commits on t0, then T2's CAS on t1 (expecting what it read before T1) fails. Rows record
    seq in the convention of `scope`."""
    glob = scope == "global"
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    h.begin(3, 2, 1, attempts=1)
    h.read(4, 2, 1, 0, 0)
    h.prepare(5, 2, 1, 0)
    h.cas(10, 1, 0, 0, True, 1, 1)
    h.end(11, 1, 0, "committed", 1)
    h.cas(12, 2, 1, 0, False, 1 if glob else 0, 0)   # after: global seq 1, v[1] = 0
    h.end(13, 2, 1, "aborted", 1)
    h.final(20, 0, 1, 1)
    h.final(20, 1, 1, 0)
    return h


def test_cas_failing_on_another_tables_commit_is_global_only():
    assert_clean(cross_table_failure("global"))
    for h in (cross_table_failure("table"), cross_table_failure("global")):
        c = find(h, "cas", 2)
        vs = viols(h, scope="table")
        assert any(v.invariant == 1 and v.i == row_of(h, c) and "yet it failed" in v.message for v in vs), vs


def test_table_version_gap():
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    c = h.cas(3, 1, 0, 0, True, 2, 2)            # v[0] jumps 0 -> 2
    h.end(4, 1, 0, "committed", 1)
    f = h.final(5, 0, 1, 2)
    vs = viols(h, scope="table")
    assert {v.invariant for v in vs} >= {1, 2}
    assert any(v.invariant == 1 and "replayed state is v[0]=1" in v.message for v in vs)
    assert any(v.invariant == 2 and "final v[0] is 2" in v.message for v in vs)
    assert where(vs) == [(4, row_of(h, c)), (1, row_of(h, c)), (2, row_of(h, f))]


def test_table_read_records_global_seq():
    h = table_history()
    r = find(h, "read", 4)
    r["seq"] = 3                                 # the global count, not v[1]: from the future per table
    vs = viols(h, scope="table")
    assert vs[0].invariant == 5 and "future" in vs[0].message
    assert {v.invariant for v in vs} == {1, 5}   # and T4's CAS then expects what it read
    assert where(vs) == [(5, row_of(h, r)), (1, row_of(h, find(h, "throttled", 4))), (1, row_of(h, find(h, "cas", 4)))]


# ---------------------------------------------------------------- protocol: log


def log_history(t4_op="vo") -> H:
    """Protocol log, two tables. Rows: read = LIST (seq = version = entries), cas = create of entry
    expected+1, prepare = entries checked (checked, M] (FA too). Conditional writes to one entry name
    are >= 1 s apart except T2's throttled request.
    T1 FA t0: stale first attempt, creates entry 1 with no prepare row (base read = implicit prepare).
    T2 (`t4_op`) t0: lists 0, checks nothing, its create of entry 1 is throttled (T1 created it 0.5 s
    ago), the resend fails, lists 1, checks entry 1, creates entry 2.
    T3 FA t0: stale first attempt with a prepare row at its base read; creates entry 3.
    T4 FA t1 creates t1's entry 1."""
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)                        # T1's base read
    h.begin(2, 2, 0, op=t4_op)
    h.read(3, 2, 0, 0, 0)                        # T2's base read
    h.begin(4, 4, 1)
    h.read(5, 4, 1, 0, 0)
    h.read(500, 2, 0, 0, 0)                      # T2's LIST
    h.prepare(501, 2, 0, 0, vfrom=0, vto=0)      # nothing new to check
    h.read(600, 4, 1, 0, 0)
    h.prepare(601, 4, 1, 0, vfrom=0, vto=0)
    h.cas(700, 4, 1, 0, True, 1, 1)
    h.end(701, 4, 1, "committed", 1)
    h.cas(1000, 1, 0, 0, True, 1, 1)             # T1: stale create of entry 1
    h.end(1001, 1, 0, "committed", 1)
    throttled(h, 1500, 2, 0, 0, 1, 1)            # entry 1's bucket: 0.5 tokens; the log has 1 entry
    h.cas(2000, 2, 0, 0, False, 1, 1)            # resend: entry 1 exists
    h.read(2100, 2, 0, 1, 1)
    h.prepare(2101, 2, 0, 1, vfrom=0, vto=1)     # checks entry 1
    h.cas(2200, 2, 0, 1, True, 2, 2)
    h.end(2201, 2, 0, "committed", 2)            # two creates; the throttled request is no attempt
    h.begin(2300, 3, 0)
    h.read(2301, 3, 0, 2, 2)
    h.prepare(2301, 3, 0, 2, vfrom=2, vto=2)     # the engine may record the stale attempt's prepare
    h.cas(2400, 3, 0, 2, True, 3, 3)
    h.end(2401, 3, 0, "committed", 1)
    h.final(3000, 0, 4, 3)
    h.final(3000, 1, 4, 1)
    return h


@pytest.mark.parametrize("op", ["fa", "vo"])
def test_log_valid_history(op):
    assert_clean(log_history(op), protocol="log")
    assert_clean(log_history(op), protocol="log", **THROTTLE_1)
    assert_clean(log_history(op), protocol="log", scope="table", **THROTTLE_1)


@pytest.mark.parametrize("op", ["fa", "vo"])
def test_log_commit_over_an_unchecked_entry(op):
    h = log_history(op)
    p = find(h, "prepare", 2, 1)
    p["validated_from"] = 1                      # T2 lists 1 entry but checks nothing: entry 1 unchecked
    vs = viols(h, protocol="log")
    c = find(h, "cas", 2, 1)
    assert [(v.invariant, v.i) for v in vs] == [(4, row_of(h, c))]
    assert "without checking entr(ies) [1]" in vs[0].message and op.upper() in vs[0].message


def test_log_fa_prepare_needs_a_checked_range():
    h = log_history("fa")
    p = find(h, "prepare", 2, 1)
    p["validated_from"] = p["validated_to"] = -1  # rewrite-style FA prepare: not enough for the log
    vs = viols(h, protocol="log")
    assert {v.invariant for v in vs} == {0, 4}
    # the range is malformed at the prepare; what it left unchecked counts where T2 creates its entry
    assert where(vs) == [(0, row_of(h, p)), (4, row_of(h, find(h, "cas", 2, 1)))]
    assert_clean(log_history("fa"), protocol="log")


def test_log_lost_update():
    h = log_history("fa")
    h.rows.remove(find(h, "prepare", 2, 1))      # re-creates on base 0 after entry 1 landed
    vs = viols(h, protocol="log")
    assert {v.invariant for v in vs} == {4}
    assert any("lost update" in v.message for v in vs)
    # the removed prepare has no row: the update is lost (and entry 1 unchecked) at T2's create
    assert where(vs) == [(4, row_of(h, find(h, "cas", 2, 1)))] * 2


def test_log_stale_create_over_a_moved_log():
    h = log_history("fa")
    # T3 goes stale without any prepare: the implicit one at its base read covers it ...
    h.rows.remove(find(h, "prepare", 3))
    assert_clean(h, protocol="log")
    # ... but not if it LISTs a newer log and creates on that without checking
    h = log_history("fa")
    h.rows.remove(find(h, "prepare", 3))
    r = find(h, "read", 3)
    r["seq"] = r["version"] = 1                  # base read saw 1 entry (stale claim) ...
    r["time_ms"], r["answer_ms"] = 1900, 1901    # ... at a time when the log had 1
    find(h, "begin", 3)["time_ms"] = 1899
    h.read(2302, 3, 0, 2, 2)                     # then LISTs 2 and creates entry 3
    vs = viols(h, protocol="log")
    assert {v.invariant for v in vs} == {4}
    assert any("lost update" in v.message for v in vs)
    assert any("without checking entr(ies) [2]" in v.message for v in vs)
    # each changed row is legal on its own: the create on the unchecked newer log breaks the rule
    assert where(vs) == [(4, row_of(h, find(h, "cas", 3)))] * 2


def test_log_create_of_an_existing_entry_succeeds():
    h = log_history("fa")
    c = find(h, "cas", 2, 0)                     # T2's resend: entry 1 exists, yet succeeds
    c["ok"], c["seq"], c["version"] = True, 2, 2
    vs = viols(h, protocol="log")
    assert any(v.invariant == 1 and v.i == row_of(h, c) and "already existed" in v.message for v in vs)


def test_log_failed_create_of_a_free_entry():
    h = log_history("fa")
    c = find(h, "cas", 2, 1)                     # entry 2 was free: the create must succeed
    c["ok"], c["seq"], c["version"] = False, 1, 1
    vs = viols(h, protocol="log")
    assert any(v.invariant == 1 and v.i == row_of(h, c) and "entry was free" in v.message for v in vs)


# ---------------------------------------------------------------- throttled rows


def test_throttled_row_that_changed_state():
    h = table_history()
    r = find(h, "throttled", 4)
    r["seq"] = r["version"] = 2                  # as if the throttled write had landed
    vs = viols(h, scope="table")
    assert [(v.invariant, v.i) for v in vs] == [(2, row_of(h, r))]
    assert "leaves unchanged" in vs[0].message


def test_throttled_row_that_reports_success():
    h = log_history()
    r = find(h, "throttled", 2)
    r["ok"] = True
    vs = viols(h, protocol="log")
    assert [(v.invariant, v.i) for v in vs] == [(2, row_of(h, r))]


def test_end_counts_throttled_requests_as_attempts():
    h = table_history()
    e = find(h, "end", 4)
    e["attempts"] = 2                            # one CAS + one throttled request
    vs = viols(h, scope="table")
    assert [v.invariant for v in vs] == [3] and "not attempts" in vs[0].message
    assert where(vs) == [(3, row_of(h, e))]


def test_throttled_requests_do_not_use_up_attempts():
    h = table_history()
    find(h, "begin", 4)["attempts"] = 1
    for t in (1600, 1700, 1800):
        throttled(h, t, 4, 1, 1, 1, 1, lat=0.5)
    assert_clean(h, scope="table")


def test_throttled_before_the_transactions_read():
    h = table_history()
    r = find(h, "throttled", 4)
    r["time_ms"], r["answer_ms"] = 1300.5, 1300.8  # between T4's begin and its read
    vs = viols(h, scope="table")
    assert any(v.invariant == 1 and v.i == row_of(h, r) and "without any prior" in v.message for v in vs)


def test_throttled_before_the_previous_answer():
    h = table_history()
    find(h, "read", 4)["answer_ms"] = 1600.0      # read answered after the throttled request went out
    vs = viols(h, scope="table")
    assert [v.invariant for v in vs] == [5]
    # a late answer is no error by itself: sending before it is, at the throttled row
    assert where(vs) == [(5, row_of(h, find(h, "throttled", 4)))]


def test_throttled_after_commit():
    h = table_history()
    r = throttled(h, 2500.5, 4, 1, 1, 2, 2)
    vs = viols(h, scope="table")
    assert 3 in {v.invariant for v in vs}
    assert {v.i for v in vs} == {row_of(h, r)}   # (also sent before the commit's answer: invariant 5)


# ---------------------------------------------------------------- per-object token buckets


def sequential_commits(gaps_ms, scope="global", tables=None, txn_lat=0.1):
    """Transactions that commit one after the other, the k-th CAS gaps_ms[k-1] after the previous
    one (first at 1000 ms); tables[k] is the k-th one's table (all 0 by default)."""
    tables = tables or [0] * (len(gaps_ms) + 1)
    h = H()
    seq, v = 0, {}
    t_cas = 1000.0
    for k, tbl in enumerate(tables):
        if k:
            t_cas += gaps_ms[k - 1]
        x = k + 1
        s = v.get(tbl, 0) if scope == "table" else seq
        t0 = t_cas - txn_lat * 0.9 if k else 0.0
        h.begin(t0, x, tbl)
        h.read(t0 + txn_lat * 0.1, x, tbl, s, v.get(tbl, 0), lat=txn_lat * 0.1)
        h.prepare(t0 + txn_lat * 0.2, x, tbl, v.get(tbl, 0), vfrom=v.get(tbl, 0), vto=v.get(tbl, 0))
        seq += 1
        v[tbl] = v.get(tbl, 0) + 1
        after = v[tbl] if scope == "table" else seq
        h.cas(t_cas, x, tbl, s, True, after, v[tbl], lat=txn_lat * 0.01)
        h.end(t_cas, x, tbl, "committed", 1)
    for tbl in sorted(set(tables)):
        h.final(t_cas + 1, tbl, seq, v[tbl])
    return h


def test_bucket_two_writes_half_a_second_apart():
    h = sequential_commits([500])
    assert_clean(h)                               # no throttle given: not checked
    vs = viols(h, **THROTTLE_1)
    c = find(h, "cas", 2)
    assert [(v.invariant, v.i) for v in vs] == [(6, row_of(h, c))]
    assert "catalog object" in vs[0].message and "0.5 tokens" in vs[0].message


def test_bucket_two_writes_one_second_apart():
    assert_clean(sequential_commits([1000]), **THROTTLE_1)
    assert_clean(sequential_commits([1000, 1000, 1000]), **THROTTLE_1)


def test_bucket_burst_two_allows_two_back_to_back():
    h = sequential_commits([0.2])
    assert len(viols(h, **THROTTLE_1)) == 1
    assert where(viols(h, **THROTTLE_1)) == [(6, row_of(h, find(h, "cas", 2)))]
    assert_clean(h, mutation_rate_per_s=1.0, mutation_burst=2.0)
    h = sequential_commits([0.2, 0.2])            # a third one needs 1 s more
    assert [v.invariant for v in viols(h, mutation_rate_per_s=1.0, mutation_burst=2.0)] == [6]
    assert where(viols(h, mutation_rate_per_s=1.0, mutation_burst=2.0)) == [(6, row_of(h, find(h, "cas", 3)))]
    assert_clean(sequential_commits([0.2, 1000]), mutation_rate_per_s=1.0, mutation_burst=2.0)


def test_bucket_objects_per_scope():
    # two tables, commits 0.5 s apart: one catalog object globally, two pointers per table
    h = sequential_commits([500], tables=[0, 1])
    assert [v.invariant for v in viols(h, **THROTTLE_1)] == [6]
    assert where(viols(h, **THROTTLE_1)) == [(6, row_of(h, find(h, "cas", 2)))]
    assert_clean(sequential_commits([500], "table", tables=[0, 1]), scope="table", **THROTTLE_1)
    h = sequential_commits([500], "table")
    vs = viols(h, scope="table", **THROTTLE_1)
    assert [v.invariant for v in vs] == [6] and "table 0's pointer" in vs[0].message
    assert vs[0].i == row_of(h, find(h, "cas", 2))
    # the log: consecutive commits create different entry names
    assert_clean(sequential_commits([500], "table"), protocol="log", **THROTTLE_1)


def test_bucket_failed_writes_take_tokens_too():
    h = log_history()
    r = find(h, "throttled", 2)
    h.rows.remove(r)                              # the resend 1 s after T1's create is fine ...
    assert_clean(h, protocol="log", **THROTTLE_1)
    c = find(h, "cas", 2, 0)                      # ... but not 0.5 s after it, failed or not
    c["time_ms"], c["answer_ms"] = 1500, 1501
    vs = viols(h, protocol="log", **THROTTLE_1)
    assert [(v.invariant, v.i) for v in vs] == [(6, row_of(h, c))]
    assert "log entry 1 of table 0" in vs[0].message


def test_bucket_throttled_row_that_had_a_token():
    h = table_history()
    r = find(h, "throttled", 4)
    r["time_ms"], r["answer_ms"] = 2300, 2301     # 1.1 s after T2's write to t1's pointer
    vs = viols(h, scope="table", **THROTTLE_1)
    assert [(v.invariant, v.i) for v in vs] == [(6, row_of(h, r))]
    assert "although its bucket held 1 tokens" in vs[0].message
    assert_clean(h, scope="table")                # without the limit, a 429 is not checked


def test_bucket_message_names_the_engine_ring():
    """A create of a log entry name 16+ behind the newest: the engine takes such a name as fresh."""
    h = H()
    h.begin(0, 0, 0, attempts=1)
    h.read(0.1, 0, 0, 0, 0, lat=0.01)             # T0 lists an empty log, goes stale
    t = 1.0
    for k in range(1, 18):                        # 17 others create entries 1..17
        h.begin(t, k, 0)
        h.read(t + 0.1, k, 0, k - 1, k - 1, lat=0.01)
        h.prepare(t + 0.2, k, 0, k - 1, vfrom=k - 1, vto=k - 1)
        h.cas(t + 0.3, k, 0, k - 1, True, k, k, lat=0.01)
        h.end(t + 0.4, k, 0, "committed", 1)
        t += 1.0
    c = h.cas(t, 0, 0, 0, False, 17, 17, lat=0.01)   # T0 creates entry 1 again, 0.02 s after the first
    h.end(t + 0.1, 0, 0, "aborted", 1)
    h.final(t + 1, 0, 17, 17)
    assert_clean(h, protocol="log")
    vs = viols(h, protocol="log", **THROTTLE_1)
    assert [v.invariant for v in vs] == [6]
    assert vs[0].i == row_of(h, c)
    assert "16 entries behind the newest name 17" in vs[0].message and "16 newest" in vs[0].message


def test_bad_arguments():
    h = table_history().df()
    for kw in (dict(scope="row"), dict(protocol="paxos"), dict(mutation_rate_per_s=0.0),
               dict(mutation_rate_per_s=1.0, mutation_burst=0.0)):
        with pytest.raises(ValueError):
            check_history(h, **kw)


# ---------------------------------------------------------------- generated per-table histories


def generate(seed, n_txns, n_tables, stop_after, stale, log, throttle):
    """A tiny reference model of per-table commits (scope table, or the log protocol), optionally
    with a per-object token bucket (rate/s, burst): transactions advance one step at a time in random
    interleaving; the clock advances 0..30 ms per step; answers arrive 0.5 ms after effect points."""
    rng = random.Random(seed)
    h = H()
    v = [0] * n_tables
    total = 0
    clock = 0.0
    buckets = {}      # object name -> (tokens, time)
    state = {}
    pending = list(range(n_txns))
    active: list[int] = []
    steps = 0
    while (pending or active) and steps < stop_after:
        steps += 1
        clock += rng.choice([0.0, 1.0, 5.0, 30.0]) + 1.0
        if pending and (not active or rng.random() < 0.3):
            x = pending.pop(0)
            tbl = rng.randrange(n_tables)
            op = rng.choice(["fa", "vo"])
            max_att = rng.randint(1, 4)
            h.begin(clock, x, tbl, op=op, attempts=max_att)
            state[x] = dict(t=tbl, op=op, max=max_att, att=0, step="base", read_v=None, base=None,
                            checked=None)
            active.append(x)
            continue
        x = rng.choice(active)
        s = state[x]
        tbl = s["t"]
        if s["step"] == "base":
            h.read(clock, x, tbl, v[tbl], v[tbl], lat=0.5)
            s.update(read_v=v[tbl], checked=v[tbl])
            if stale and log:
                s.update(base=v[tbl], step="cas")          # implicit prepare at the base read
            else:
                s["step"] = "prepare" if stale else "refresh"
        elif s["step"] == "refresh":
            h.read(clock, x, tbl, v[tbl], v[tbl], lat=0.5)
            s["read_v"] = v[tbl]
            if log:
                skip = v[tbl] == s["checked"] == s["base"] and rng.random() < 0.5
                s["step"] = "cas" if skip else "prepare"
            else:
                s["step"] = "prepare" if s["base"] != v[tbl] else "cas"
        elif s["step"] == "prepare":
            if log or s["op"] == "vo":
                h.prepare(clock, x, tbl, s["read_v"], vfrom=s["checked"], vto=s["read_v"])
                s["checked"] = s["read_v"]
            else:
                h.prepare(clock, x, tbl, s["read_v"])
            s.update(base=s["read_v"], step="cas")
        elif s["step"] == "cas":
            if throttle:
                rate, burst = throttle
                name = (tbl, s["read_v"] + 1) if log else tbl
                tokens, last = buckets.get(name, (burst, clock))
                tokens = min(burst, tokens + rate * (clock - last) / 1000)
                if tokens < 1:
                    throttled(h, clock, x, tbl, s["read_v"], v[tbl], v[tbl], lat=0.5)
                    continue
                buckets[name] = (tokens - 1, clock)
            s["att"] += 1
            ok = v[tbl] == s["read_v"]
            if ok:
                v[tbl] += 1
                total += 1
            h.cas(clock, x, tbl, s["read_v"], ok, v[tbl], v[tbl], lat=0.5)
            if ok:
                s["step"] = ("end", "committed")
            elif s["att"] >= s["max"]:
                s["step"] = ("end", "aborted")
            else:
                s["step"] = "refresh"
        else:
            h.end(clock, x, tbl, s["step"][1], s["att"])
            active.remove(x)
    clock += 1.0
    for x in active:
        s = state[x]
        outcome = s["step"][1] if isinstance(s["step"], tuple) else "unfinished"
        h.end(clock, x, s["t"], outcome, s["att"])
    for tbl in range(n_tables):
        h.final(clock, tbl, total, v[tbl])
    return h


gen_args = dict(
    seed=st.integers(0, 10**6), n_txns=st.integers(1, 10), n_tables=st.integers(1, 3),
    stop_after=st.integers(5, 300), stale=st.booleans(), log=st.booleans(),
    throttle=st.sampled_from([None, (20.0, 1.0), (50.0, 2.0), (200.0, 1.0)]),
)


def kwargs(log, throttle):
    kw = dict(protocol="log") if log else dict(scope="table")
    if throttle:
        kw.update(mutation_rate_per_s=throttle[0], mutation_burst=throttle[1])
    return kw


@settings(max_examples=40, deadline=None)
@given(**gen_args)
def test_generated_per_table_histories_pass(seed, n_txns, n_tables, stop_after, stale, log, throttle):
    h = generate(seed, n_txns, n_tables, stop_after, stale, log, throttle)
    assert_clean(h, **kwargs(log, throttle))


@settings(max_examples=40, deadline=None)
@given(**gen_args, pick=st.integers(0, 10**6), delta=st.sampled_from([-1, 1]),
       field=st.sampled_from(["seq", "version"]))
def test_generated_per_table_history_with_one_corrupted_observation_fails(
        seed, n_txns, n_tables, stop_after, stale, log, throttle, pick, delta, field):
    h = generate(seed, n_txns, n_tables, stop_after, stale, log, throttle)
    observed = [r for r in h.rows if r["kind"] in ("read", "cas", "throttled", "final")]
    row = observed[pick % len(observed)]
    row[field] += delta
    vs = viols(h, **kwargs(log, throttle))
    assert vs != []
    assert vs[0].i == row_of(h, row)             # the rows before it still replay clean


def test_generated_per_table_histories_do_throttle():
    """The generator exercises throttled rows (else the property above would prove little)."""
    kinds = pd.concat([generate(s, 10, 2, 300, False, s % 2 == 0, (20.0, 1.0)).df() for s in range(4)]).kind
    assert (kinds == "throttled").sum() > 5


def test_bucket_throttled_on_a_full_bucket():
    """With burst 1 a full bucket holds exactly 1 token: a 429 there is a violation, the float slack
    only excuses one at the refill boundary."""
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    h.cas(1000, 1, 0, 0, True, 1, 1)
    h.end(1001, 1, 0, "committed", 1)
    h.begin(1100, 2, 0)
    h.read(1101, 2, 0, 1, 1)
    h.prepare(1102, 2, 0, 1)
    throttled(h, 1503, 2, 0, 1, 1, 1)            # 0.503 tokens: rightly throttled
    throttled(h, 2000, 2, 0, 1, 1, 1, lat=0.5)   # exactly 1 token at the boundary: excused
    h.end(2100, 2, 0, "unfinished", 0)
    h.begin(1200, 3, 1)
    h.read(1201, 3, 1, 0, 0)
    h.prepare(1202, 3, 1, 0)
    r = throttled(h, 1300, 3, 1, 0, 0, 0)        # table 1's pointer was never written: fresh, full
    h.end(2100, 3, 1, "unfinished", 0)
    h.final(2100, 0, 1, 1)
    h.final(2100, 1, 1, 0)
    vs = viols(h, scope="table", **THROTTLE_1)
    assert [(v.invariant, v.i) for v in vs] == [(6, row_of(h, r))] and "first write" in vs[0].message


# ---------------------------------------------------------------- `python -m sim check DIR`


def write_run(tmp_path, h: H, config: dict | None, profile: dict | None = None):
    """A run directory; its stored provider profile is the instant provider's with `profile`'s keys over it."""
    h.df().to_parquet(tmp_path / "history.parquet", index=False)
    if config is not None:
        import yaml

        from sim.providers import load_provider
        stored = {**load_provider("instant", "seed").to_dict(), **(profile or {})}
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(
            {"config": config, "provider_profile": stored, "config_hash": "0"}))
    return str(tmp_path)


def run_check(capsys, d) -> tuple[int, str]:
    from sim.cli import main
    rc = main(["check", d])
    return rc, capsys.readouterr().out


def test_cli_check_without_config_uses_todays_rules(tmp_path, capsys):
    rc, out = run_check(capsys, write_run(tmp_path, cross_table_failure("global"), None))
    assert rc == 0 and "scope global, protocol rewrite, no throttle" in out


def test_cli_check_reads_scope_protocol_and_throttle(tmp_path, capsys):
    d = write_run(tmp_path, log_history(), {"catalog": {"backend": "storage"}, "commit": {"protocol": "log"},
                                            "storage": {"provider": "gcp"}},
                  {"name": "gcp", "mutation_rate_per_s": 1.0, "mutation_burst": 1.0})
    rc, out = run_check(capsys, d)
    assert rc == 0 and "scope table, protocol log, throttle 1/s burst 1" in out
    rc, out = run_check(capsys, str(tmp_path / "history.parquet"))   # the file itself: its directory's config
    assert rc == 0 and "protocol log" in out


def test_cli_check_applies_the_throttle_only_to_storage(tmp_path, capsys):
    h = sequential_commits([500], "table")
    prof = {"name": "gcp", "mutation_rate_per_s": 1.0}
    d = write_run(tmp_path, h, {"catalog": {"backend": "storage", "scope": "table"}}, prof)
    rc, out = run_check(capsys, d)
    assert rc == 1 and out.startswith("invariant 6 violated")
    for cfg in ({"catalog": {"backend": "service", "scope": "table"}},
                {"catalog": {"backend": "storage", "scope": "table"}, "storage": {"throttle": False}}):
        rc, out = run_check(capsys, write_run(tmp_path, h, cfg, prof))
        assert rc == 0 and "scope table, protocol rewrite, no throttle" in out
    # scope absent: global; a per-table history of two tables then has a stale read
    h = sequential_commits([1500], "table", tables=[0, 1])
    rc, out = run_check(capsys, write_run(tmp_path, h, {"catalog": {"backend": "service"}}, prof))
    assert rc == 1 and out.startswith("invariant 5 violated") and "stale" in out


def test_cli_check_bad_config(tmp_path, capsys):
    d = write_run(tmp_path, table_history(), {"catalog": {"scope": "row"}})
    from sim.cli import main
    assert main(["check", d]) == 2
    (tmp_path / "config.yaml").write_text("config: [unclosed")
    assert main(["check", d]) == 2
