"""Tests of the independent history checker on small hand-made histories (FORMATS.md "History").

Each bad history breaks one invariant on purpose and asserts that the checker names it; the valid
history (and randomly generated valid ones) must pass clean, so the checker has no false alarms.
"""

from __future__ import annotations

import random

import pandas as pd
from hypothesis import given, settings, strategies as st

from sim.checker import Violation, check_history, format_violation, load_history

DEFAULTS = dict(
    kind="", time_ms=0.0, txn=-1, table=0, op="", seq=-1, version=-1, expected=-1, ok=False,
    base_version=-1, validated_from=-1, validated_to=-1, answer_ms=float("nan"), outcome="",
    reason="", attempts=-1,
)


class H:
    """Builds a history row by row with FORMATS.md columns and defaults; rows get `i` in order of
    time (stable: ties keep the order they were added in)."""

    def __init__(self):
        self.rows: list[dict] = []

    def add(self, kind, t, **kw):
        row = dict(DEFAULTS, kind=kind, time_ms=float(t), **kw)
        self.rows.append(row)
        return row

    def begin(self, t, txn, table, op="fa", attempts=3):
        return self.add("begin", t, txn=txn, table=table, op=op, attempts=attempts)

    def read(self, t, txn, table, seq, version, lat=1.0):
        return self.add("read", t, txn=txn, table=table, seq=seq, version=version, answer_ms=t + lat)

    def prepare(self, t, txn, table, base, vfrom=-1, vto=-1):
        return self.add("prepare", t, txn=txn, table=table, base_version=base,
                        validated_from=vfrom, validated_to=vto)

    def cas(self, t, txn, table, expected, ok, seq, version, lat=1.0):
        return self.add("cas", t, txn=txn, table=table, expected=expected, ok=ok, seq=seq,
                        version=version, answer_ms=t + lat)

    def end(self, t, txn, table, outcome, attempts, reason=None):
        if reason is None:
            reason = {"committed": "", "unfinished": "unfinished"}.get(outcome, "retries_exhausted")
        return self.add("end", t, txn=txn, table=table, outcome=outcome, reason=reason,
                        attempts=attempts)

    def final(self, t, table, seq, version):
        return self.add("final", t, table=table, seq=seq, version=version)

    def df(self) -> pd.DataFrame:
        rows = sorted(self.rows, key=lambda r: r["time_ms"])
        df = pd.DataFrame([dict(r, i=i) for i, r in enumerate(rows)])
        return df[["i"] + list(DEFAULTS)]


def find(h: H, kind: str, txn: int, n: int = 0) -> dict:
    """The n-th row (in order of addition) of `kind` for transaction `txn` (table for `final`)."""
    key = "table" if kind == "final" else "txn"
    return [r for r in h.rows if r["kind"] == kind and r[key] == txn][n]


def row_of(h: H, row: dict) -> int:
    """The `i` the row gets in h.df()."""
    rows = sorted(h.rows, key=lambda r: r["time_ms"])
    return next(i for i, r in enumerate(rows) if r is row)


def where(viols) -> list[tuple[int, int]]:
    """(invariant, row) of each violation, in the checker's order."""
    return [(v.invariant, v.i) for v in viols]


def invariants(h_or_df) -> set[int]:
    df = h_or_df.df() if isinstance(h_or_df, H) else h_or_df
    return {v.invariant for v in check_history(df)}


def valid_history() -> H:
    """Two tables, seven transactions:
    T1 FA t0 commits first try; T2 FA t1 catalog conflict then commits without re-prepare;
    T3 FA t0 table conflict, re-prepares, commits; T5 FA t0 commits; T4 VO t0 validates v1..v2,
    loses to T5 (table conflict), re-validates v3, commits; T6 FA t1 (stale first attempt, one
    attempt allowed) aborts; T7 VO t1 is unfinished at the end of the run."""
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.begin(2, 2, 1)
    h.read(3, 2, 1, 0, 0)
    h.begin(4, 3, 0)
    h.read(5, 3, 0, 0, 0)
    h.begin(6, 4, 0, op="vo")
    h.read(7, 4, 0, 0, 0)                       # T4's base snapshot: v0 = 0
    h.begin(8, 5, 0)
    h.read(9, 5, 0, 0, 0)
    h.begin(16, 6, 1, attempts=1)
    h.read(17, 6, 1, 0, 0)
    h.prepare(18, 6, 1, 0)                      # stale first attempt: no refresh
    # T1: refresh, prepare, commit.
    h.read(10, 1, 0, 0, 0)
    h.prepare(11, 1, 0, 0)
    h.cas(20, 1, 0, 0, True, 1, 1)
    h.end(21, 1, 0, "committed", 1)
    # T2: refresh, prepare, CAS fails (T1 committed on table 0: catalog conflict), refresh, re-CAS.
    h.read(12, 2, 1, 0, 0)
    h.prepare(13, 2, 1, 0)
    h.cas(22, 2, 1, 0, False, 1, 0)
    h.read(24, 2, 1, 1, 0)
    h.cas(26, 2, 1, 1, True, 2, 1)
    h.end(27, 2, 1, "committed", 2)
    # T3: prepared on v0=0, CAS fails, refresh sees v[0]=1 (table conflict): re-prepare on 1.
    h.read(14, 3, 0, 0, 0)
    h.prepare(15, 3, 0, 0)
    h.cas(28, 3, 0, 0, False, 2, 1)
    h.read(30, 3, 0, 2, 1)
    h.prepare(31, 3, 0, 1)
    h.cas(32, 3, 0, 2, True, 3, 2)
    h.end(33, 3, 0, "committed", 2)
    # T4 (VO): refresh sees v[0]=2, validates snapshots 1..2 and prepares on 2.
    h.read(34, 4, 0, 3, 2)
    h.prepare(35, 4, 0, 2, vfrom=0, vto=2)
    # T5 slips in and commits v[0]=3.
    h.read(36, 5, 0, 3, 2)
    h.prepare(37, 5, 0, 2)
    h.cas(38, 5, 0, 3, True, 4, 3)
    h.end(39, 5, 0, "committed", 1)
    # T4's CAS fails; refresh: table conflict; validate snapshot 3; commit v[0]=4.
    h.cas(40, 4, 0, 3, False, 4, 3)
    h.read(42, 4, 0, 4, 3)
    h.prepare(43, 4, 0, 3, vfrom=2, vto=3)
    h.cas(44, 4, 0, 4, True, 5, 4)
    h.end(45, 4, 0, "committed", 2)
    # T6: its single (stale) CAS fails: aborted.
    h.cas(46, 6, 1, 0, False, 5, 1)
    h.end(47, 6, 1, "aborted", 1)
    # T7: VO that never gets to commit.
    h.begin(48, 7, 1, op="vo")
    h.read(49, 7, 1, 5, 1)
    h.end(100, 7, 1, "unfinished", 0)
    h.final(100, 0, 5, 4)
    h.final(100, 1, 5, 1)
    return h


def test_valid_history_has_no_violations():
    viols = check_history(valid_history().df())
    assert viols == [], "\n".join(format_violation(v) for v in viols)


def test_valid_history_row_order_in_frame_does_not_matter():
    df = valid_history().df().sample(frac=1.0, random_state=1)
    assert check_history(df) == []


# ---------------------------------------------------------------- invariant 1: CAS and seq


def test_inv1_cas_succeeds_against_stale_seq():
    h = H()
    for x in (1, 2):
        h.begin(x, x, 0)
        h.read(2 + x, x, 0, 0, 0)
        h.prepare(5 + x, x, 0, 0)
    h.cas(10, 1, 0, 0, True, 1, 1)
    h.end(11, 1, 0, "committed", 1)
    h.cas(12, 2, 0, 0, True, 1, 2)              # expected 0, but seq was 1: must have failed
    h.end(13, 2, 0, "committed", 1)
    h.final(20, 0, 2, 2)
    viols = check_history(h.df())
    assert any(v.invariant == 1 and "seq was 1" in v.message for v in viols)
    row = h.df().query("kind == 'cas' and txn == 2").i.iloc[0]
    assert any(v.invariant == 1 and v.i == row for v in viols)


def test_inv1_gap_in_seq():
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    c = h.cas(3, 1, 0, 0, True, 2, 1)           # seq jumps 0 -> 2
    h.end(4, 1, 0, "committed", 1)
    f = h.final(5, 0, 2, 1)
    viols = check_history(h.df())
    assert {v.invariant for v in viols} == {1}
    assert len(viols) == 2                      # at the CAS and at the final row
    assert where(viols) == [(1, row_of(h, c)), (1, row_of(h, f))]


def test_inv1_failed_cas_that_should_have_succeeded():
    h = valid_history()
    c = find(h, "cas", 6)
    # T6's base read saw seq 0; move its failing CAS right behind it, when seq was still 0.
    c["time_ms"], c["answer_ms"] = 18.5, 19.0
    c["seq"], c["version"] = 0, 0
    find(h, "end", 6)["time_ms"] = 19.0
    assert 1 in invariants(h)
    assert where(check_history(h.df())) == [(1, row_of(h, c))]


def test_inv1_cas_expects_seq_it_never_read():
    h = valid_history()
    c = find(h, "cas", 6)
    c["expected"] = 3                            # T6 only ever read seq 0
    assert 1 in invariants(h)
    assert where(check_history(h.df())) == [(1, row_of(h, c))]


# ---------------------------------------------------------------- invariant 2: final state


def test_inv2_final_version_wrong():
    h = valid_history()
    f = find(h, "final", 1)
    f["version"] = 2
    viols = check_history(h.df())
    assert [v.invariant for v in viols] == [2]
    assert where(viols) == [(2, row_of(h, f))]


def test_inv2_aborted_transaction_with_successful_cas():
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    h.cas(3, 1, 0, 0, True, 1, 1)
    e = h.end(4, 1, 0, "aborted", 1)
    h.final(5, 0, 1, 1)
    assert invariants(h) == {2}
    assert where(check_history(h.df())) == [(2, row_of(h, e))]


def test_inv2_unfinished_transaction_with_successful_cas():
    h = valid_history()
    e = find(h, "end", 1)
    e["outcome"], e["reason"] = "unfinished", "unfinished"
    assert 2 in invariants(h)
    assert where(check_history(h.df())) == [(2, row_of(h, e))]


def test_inv2_missing_final_rows():
    h = valid_history()
    h.rows = [r for r in h.rows if not (r["kind"] == "final" and r["table"] == 1)]
    viols = check_history(h.df())
    assert [(v.invariant, v.i) for v in viols] == [(2, -1)]   # a missing row has no row: global (-1)


# ---------------------------------------------------------------- invariant 3: transaction lifecycle


def test_inv3_transaction_ends_twice():
    h = valid_history()
    e = h.end(99, 6, 1, "aborted", 1)
    viols = check_history(h.df())
    assert [v.invariant for v in viols] == [3]
    assert "ends again" in viols[0].message
    assert viols[0].i == row_of(h, e)


def test_inv3_transaction_commits_twice():
    h = H()
    h.begin(0, 1, 0)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    h.cas(3, 1, 0, 0, True, 1, 1)
    h.read(5, 1, 0, 1, 1)                        # goes on after its success ...
    h.prepare(7, 1, 0, 1)
    c = h.cas(8, 1, 0, 1, True, 2, 2)            # ... and commits a second time
    h.end(9, 1, 0, "committed", 2)
    h.final(10, 0, 2, 2)
    viols = check_history(h.df())
    assert {v.invariant for v in viols} == {3}
    assert "second successful CAS" in viols[0].message
    assert viols[0].i == row_of(h, c)


def test_inv3_too_many_attempts():
    h = valid_history()
    find(h, "begin", 3)["attempts"] = 1          # T3 needed two CASes
    viols = check_history(h.df())
    assert {v.invariant for v in viols} == {3}
    assert any("exceeds" in v.message for v in viols)
    # the begin row only states the limit: the violation is the second CAS, which exceeds it
    assert where(viols) == [(3, row_of(h, find(h, "cas", 3, 1)))]


def test_inv3_end_attempts_disagree_with_cas_count():
    h = valid_history()
    e = find(h, "end", 2)
    e["attempts"] = 1
    assert invariants(h) == {3}
    assert where(check_history(h.df())) == [(3, row_of(h, e))]


def test_inv3_transaction_never_ends():
    h = valid_history()
    h.rows.remove(find(h, "end", 7))
    viols = check_history(h.df())
    assert [v.invariant for v in viols] == [3]
    # the missing row has no row: the violation names the transaction's begin
    assert viols[0].i == h.df().query("kind == 'begin' and txn == 7").i.iloc[0]


def test_inv3_committed_without_successful_cas():
    h = valid_history()
    e = find(h, "end", 6)
    e["outcome"], e["reason"] = "committed", ""
    assert invariants(h) == {3}
    assert where(check_history(h.df())) == [(3, row_of(h, e))]


def test_inv3_aborted_without_reason():
    h = valid_history()
    e = find(h, "end", 6)
    e["reason"] = ""
    assert invariants(h) == {3}
    assert where(check_history(h.df())) == [(3, row_of(h, e))]


def test_inv3_event_after_end_and_before_begin():
    h = valid_history()
    r = h.read(60, 6, 1, 5, 1)                    # T6 reads after its abort
    assert 3 in invariants(h)
    assert where(check_history(h.df())) == [(3, row_of(h, r))]
    h = valid_history()
    find(h, "begin", 7)["time_ms"] = 49.5        # T7 begins after its read
    assert 3 in invariants(h)
    # the moved begin is legal where it lands; what breaks is the read, now before any begin
    assert where(check_history(h.df())) == [(3, row_of(h, find(h, "read", 7)))]


# ---------------------------------------------------------------- invariant 4: serializability


def test_inv4_lost_update_fast_append():
    h = valid_history()
    # T3 retries after the table conflict without re-preparing: its metadata is based on v0 = 0
    # but replaces v[0] = 1 (T1's commit is lost).
    h.rows.remove(find(h, "prepare", 3, 1))
    viols = check_history(h.df())
    assert {v.invariant for v in viols} == {4}
    assert "lost update" in viols[0].message
    # the removed prepare has no row: the update is lost where T3's second CAS commits
    assert where(viols) == [(4, row_of(h, find(h, "cas", 3, 1)))]


def test_inv4_vo_skipped_a_snapshot():
    h = valid_history()
    find(h, "prepare", 4, 0)["validated_to"] = 1  # T4 validated snapshot 1 but not 2
    viols = check_history(h.df())
    assert {v.invariant for v in viols} == {4}
    assert "[2]" in viols[0].message
    # a narrow validation is no error until the VO commits over the snapshot it skipped
    assert where(viols) == [(4, row_of(h, find(h, "cas", 4, 1)))]


def test_inv4_vo_never_revalidated_after_table_conflict():
    h = valid_history()
    p = find(h, "prepare", 4, 1)
    p["validated_from"] = p["validated_to"] = 2  # re-prepared on v3 but validated nothing new
    assert invariants(h) == {4}
    # as above: the gap counts only at the commit
    assert where(check_history(h.df())) == [(4, row_of(h, find(h, "cas", 4, 1)))]


def test_inv4_committed_versions_not_serial():
    h = valid_history()
    # T5 records that it installed v[0]=4 (skipping 3); the replayed catalog says 3.
    c = find(h, "cas", 5)
    c["version"] = 4
    assert 4 in invariants(h)
    # first at T5's CAS (T4's commit then follows a recorded v[0]=4 and is flagged too)
    assert where(check_history(h.df()))[0] == (4, row_of(h, c))


# ---------------------------------------------------------------- invariant 5: reads and time


def test_inv5_read_from_the_future():
    h = valid_history()
    r = find(h, "read", 7)
    r["seq"], r["version"] = 6, 2
    viols = check_history(h.df())
    assert {v.invariant for v in viols} == {5}
    assert "future" in viols[0].message
    assert where(viols) == [(5, row_of(h, r))]


def test_inv5_stale_read():
    h = valid_history()
    r = find(h, "read", 3, 2)                    # T3's refresh after its failed CAS
    r["seq"], r["version"] = 1, 1
    viols = check_history(h.df())
    assert 5 in {v.invariant for v in viols}
    assert any(v.invariant == 5 and "stale" in v.message for v in viols)
    assert where(viols)[0] == (5, row_of(h, r))   # then T3's CAS expects the stale seq it read


def test_inv5_answer_before_effect_point():
    h = valid_history()
    c = find(h, "cas", 1)
    c["answer_ms"] = 19.0
    assert invariants(h) == {5}
    assert where(check_history(h.df())) == [(5, row_of(h, c))]


def test_inv5_time_goes_backwards():
    h = valid_history()
    df = h.df()
    row = df.query("kind == 'begin' and txn == 5").i.iloc[0]
    df.loc[df.i == row, "time_ms"] = 3.0         # T5 arrives at t=3 but is recorded after t=7
    viols = check_history(df)
    assert [(v.invariant, v.i) for v in viols] == [(5, row)]
    assert "backwards" in viols[0].message


def test_inv5_acting_before_the_answer():
    h = valid_history()
    find(h, "read", 1, 1)["answer_ms"] = 20.5    # T1 CASes at 20 before its refresh answered
    assert invariants(h) == {5}
    # a late answer is no error by itself: acting on it early is, at T1's CAS
    assert where(check_history(h.df())) == [(5, row_of(h, find(h, "cas", 1)))]


# ---------------------------------------------------------------- API details


def test_format_violation_line():
    v = Violation(1, 17, "(txn 4): CAS expected seq 3 but seq was 4 at t=1234.5 ms")
    assert format_violation(v) == ("invariant 1 violated at row 17 (txn 4): "
                                   "CAS expected seq 3 but seq was 4 at t=1234.5 ms")
    h = valid_history()
    f = find(h, "final", 0)
    f["version"] = 9
    line = format_violation(check_history(h.df())[0])
    assert line.startswith("invariant 2 violated at row ") and "final v[0] is 9" in line
    assert line.startswith(f"invariant 2 violated at row {row_of(h, f)}: ")


def test_violations_sorted_by_row():
    h = valid_history()
    r, e = find(h, "read", 7), find(h, "end", 2)
    r["seq"] = 9
    e["attempts"] = 1
    rows = [v.i for v in check_history(h.df())]
    assert rows == sorted(rows) and len(rows) >= 2
    assert rows == sorted([row_of(h, r), row_of(h, e)])


def test_missing_column_is_reported():
    df = valid_history().df().drop(columns=["expected"])
    assert [v.invariant for v in check_history(df)] == [0]
    assert [v.i for v in check_history(df)] == [-1]      # a column is no row: global


def test_load_history_from_dir_and_file(tmp_path):
    df = valid_history().df()
    df.to_parquet(tmp_path / "history.parquet", index=False)
    for p in (tmp_path, tmp_path / "history.parquet", str(tmp_path)):
        loaded = load_history(p)
        assert len(loaded) == len(df)
        assert check_history(loaded) == []


# ---------------------------------------------------------------- generated histories


def generate(seed: int, n_txns: int, n_tables: int, stop_after: int, stale: bool) -> H:
    """A tiny, independent model of the protocol that emits valid histories: transactions advance
    one step at a time in random interleaving; every event advances the clock by 1 ms and each
    catalog answer arrives 0.5 ms after its effect point."""
    rng = random.Random(seed)
    h = H()
    seq, v = 0, [0] * n_tables
    clock = 0.0
    state = {}   # txn -> dict
    pending = list(range(n_txns))
    active: list[int] = []
    steps = 0
    while (pending or active) and steps < stop_after:
        steps += 1
        clock += 1.0
        if pending and (not active or rng.random() < 0.3):
            x = pending.pop(0)
            tbl = rng.randrange(n_tables)
            op = rng.choice(["fa", "vo"])
            max_att = rng.randint(1, 4)
            h.begin(clock, x, tbl, op=op, attempts=max_att)
            state[x] = dict(t=tbl, op=op, max=max_att, att=0, step="base", need_prep=True,
                            last_val=None, read_seq=None, read_v=None, base=None)
            active.append(x)
            continue
        x = rng.choice(active)
        s = state[x]
        tbl = s["t"]
        if s["step"] == "base":
            h.read(clock, x, tbl, seq, v[tbl], lat=0.5)
            s.update(read_seq=seq, read_v=v[tbl], last_val=v[tbl])
            s["step"] = "prepare" if stale else "refresh"
        elif s["step"] == "refresh":
            h.read(clock, x, tbl, seq, v[tbl], lat=0.5)
            if s["base"] is not None and v[tbl] != s["base"]:
                s["need_prep"] = True
            s.update(read_seq=seq, read_v=v[tbl])
            s["step"] = "prepare" if s["need_prep"] else "cas"
        elif s["step"] == "prepare":
            if s["op"] == "vo":
                h.prepare(clock, x, tbl, s["read_v"], vfrom=s["last_val"], vto=s["read_v"])
                s["last_val"] = s["read_v"]
            else:
                h.prepare(clock, x, tbl, s["read_v"])
            s.update(base=s["read_v"], need_prep=False, step="cas")
        elif s["step"] == "cas":
            s["att"] += 1
            ok = seq == s["read_seq"]
            if ok:
                seq += 1
                v[tbl] += 1
            h.cas(clock, x, tbl, s["read_seq"], ok, seq, v[tbl], lat=0.5)
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
    for x in active:    # still running when the run stops (a decided one still reports its end)
        s = state[x]
        outcome = s["step"][1] if isinstance(s["step"], tuple) else "unfinished"
        h.end(clock, x, s["t"], outcome, s["att"])
    for tbl in range(n_tables):
        h.final(clock, tbl, seq, v[tbl])
    return h


gen_args = dict(
    seed=st.integers(0, 10**6), n_txns=st.integers(1, 12), n_tables=st.integers(1, 3),
    stop_after=st.integers(5, 400), stale=st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(**gen_args)
def test_generated_valid_histories_pass(seed, n_txns, n_tables, stop_after, stale):
    h = generate(seed, n_txns, n_tables, stop_after, stale)
    viols = check_history(h.df())
    assert viols == [], "\n".join(format_violation(v) for v in viols)


@settings(max_examples=60, deadline=None)
@given(**gen_args, pick=st.integers(0, 10**6), delta=st.sampled_from([-1, 1]),
       field=st.sampled_from(["seq", "version"]))
def test_generated_history_with_one_corrupted_observation_fails(
        seed, n_txns, n_tables, stop_after, stale, pick, delta, field):
    h = generate(seed, n_txns, n_tables, stop_after, stale)
    observed = [r for r in h.rows if r["kind"] in ("read", "cas", "final")]
    row = observed[pick % len(observed)]
    row[field] += delta
    viols = check_history(h.df())
    assert viols != []
    assert viols[0].i == row_of(h, row)         # the rows before it still replay clean


def test_checker_accepts_a_large_generated_history():
    h = generate(7, 6000, 5, 10**9, False)
    df = h.df()
    assert len(df) > 30000
    assert check_history(df) == []


def test_every_kind_has_a_route():
    """The replay's driver hands every known row kind to a family (an unrouted kind would fail mid-history)."""
    from sim.checker import Replay
    from sim.checker.rows import KINDS
    assert set(Replay().routes) == KINDS


def test_checker_does_not_import_the_engine():
    """No module of the checker package imports the simulator: `.` (a module of the package itself) is allowed,
    `..` (sim) is not."""
    import ast
    import pathlib
    import sim.checker as mod
    modules = sorted(pathlib.Path(mod.__file__).parent.glob("*.py"))
    assert len(modules) > 1
    names = set()
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names.add("." * node.level if node.level else node.module.split(".")[0])
    allowed = {"__future__", "bisect", "math", "sys", "pathlib", "typing", "pandas", "numpy", "."}
    assert names <= allowed, names - allowed
