"""Commit locks (sim/model/lock.py) and Iceberg on the Hive Metastore (sim/model/designs/hive.py): the lock's grant
rate and hold against their closed forms for constant latencies, racing pollers' handoff gap against its closed
form, FIFO grants in request order, the lock design against the per-table CAS at the same writer count, and the
checker's lock rules on hand-made histories (two holders, out of order, a release by another, a commit outside the lock).

Both engines run the same handlers (tests/test_fast_engine.py holds them identical on every lock variant); these
tests run the fast one."""
from __future__ import annotations

import math

import numpy as np
import pytest

from sim.checker import check_history
from sim.config import ConfigError, config_hash, from_dict
from sim.providers import load_provider
from sim.rules import checker_rules
from sim.run import run
from test_checker import H

L_MS = 10.0   # every HMS / lock service round trip, constant
SHORT = {"duration_ms": 300_000, "warmup_ms": 60_000, "cooldown_ms": 60_000, "drain_limit_ms": 60_000}
NO_WORK = {"median_ms": 0, "sigma": 0, "min_ms": 0}


def hive(lock: dict | None = None, writers: int = 0, **over) -> dict:
    """Design hive on the instant provider (every storage request 1 ms) with constant HMS and lock latencies."""
    d = {**SHORT, "design": "hive", "storage": {"provider": "instant"}, "catalog": {"latency_ms": L_MS},
         "lock": {"variant": "hms", **(lock or {})},
         "workload": {"runtime": NO_WORK, "writers": {"count": writers}} if writers else {}}
    for key, value in over.items():
        d[key] = {**d[key], **value} if isinstance(value, dict) and isinstance(d.get(key), dict) else value
    return d


def checked(d: dict, replication: int = 0):
    """Run with the history and hold it to the checker's rules for the run, locks included."""
    cfg = from_dict(d)
    res = run(cfg, replication, history=True)
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    assert rules["lock_scope"] is not None
    assert check_history(res.history, **rules) == []
    return res


# ------------------------------------------------------------------------------------------ closed forms

# one lock for 4 tables, each owned by one writer: no commit ever fails its compare, so every hold is a
# successful critical section, and 4 writers keep a waiter queued at every release
SATURATED = {"lock": {"scope": "global"}, "writers": 4,
             "workload": {"num_tables": 4, "writers": {"count": 4, "tables": "owned"}}}


@pytest.mark.parametrize("variant", ["zookeeper", "hms", "dynamodb"])
def test_grant_rate_never_exceeds_one_over_hold_plus_handoff(variant):
    """Constant latencies, f = 1/2: a holder hears of its grant `a` after it, then getTable takes effect L/2
    later, alter_table L after that, the unlock L after that: hold = a + 2.5 L, with a = L/2 (granted at its
    request's or poll's effect point, answered L/2 later) or a = L under fifo_notify (granted at the release,
    it hears of it one round trip later). So every hold is exactly that, and grants per second never exceed
    1 / (hold + handoff), the handoff being 0 under fifo_notify (the release grants the next waiter) and > 0 for
    pollers."""
    lock = {"variant": variant, "latency_ms": L_MS, "scope": "global"}
    res = checked(hive(lock, **{k: v for k, v in SATURATED.items() if k != "lock"}))
    s = res.summary
    hold = (L_MS if variant == "zookeeper" else L_MS / 2) + 2.5 * L_MS
    rec = res.records
    released = rec[(rec["lock_grants"] == 1) & (rec["lock_hold_ms"] > 0)]   # (the last grant may not be)
    holds = released["lock_hold_ms"].to_numpy()
    if variant == "zookeeper":   # the few granted at their request, the lock free, hear of it L/2 after
        assert (np.isclose(holds, hold, rtol=0, atol=1e-9).mean() > 0.99
                and np.isclose(holds, hold - L_MS / 2, rtol=0, atol=1e-9).sum()
                == len(holds) - np.isclose(holds, hold, rtol=0, atol=1e-9).sum())
    else:
        assert np.allclose(holds, hold, rtol=0, atol=1e-9)
    bound = 1000.0 / hold
    h = res.history
    grants = np.sort(h.loc[h["kind"] == "lock_grant", "time_ms"].to_numpy())
    shortest = L_MS / 2 + 2.5 * L_MS                      # a hold granted at its own request or poll
    assert np.diff(grants).min() >= shortest - 1e-6      # never two grants closer than one hold
    lo, hi = SHORT["warmup_ms"], SHORT["duration_ms"] - SHORT["cooldown_ms"]
    assert ((grants >= lo) & (grants < hi)).sum() <= (hi - lo) / shortest + 1
    if variant == "zookeeper":   # saturated and no handoff gap: the bound is reached
        assert s["lock_grants_cps"] == pytest.approx(bound, rel=0.01)
    else:                        # pollers leave the lock idle between a release and the next poll
        assert s["lock_grants_cps"] < 0.9 * bound


@pytest.mark.slow   # (6 s; FIFO and timeouts stay in the default run)
def test_racing_pollers_handoff_gap():
    """n waiters polling every P' (a sleep P, then a GET: P' = P + L), phases uniform and independent: after a
    release, the first GET that sees the lock free wins with its conditional write, L later (answer L/2, the
    write's effect L/2). So the gap from the release to the next grant is min of n U(0, P') plus L, mean
    P'/(n+1) + L. Set up so that at the first release exactly n writers poll with uniform phases: 5 writers of
    one commit each start U(0, 20 P') apart (a multiple of P', so phases mod P' are uniform), the first takes
    the lock free, and its critical section (2 HMS calls of 25 s) outlasts every other start."""
    p_ms, n, reps = 1000.0, 4, 400
    period = p_ms + L_MS
    d = hive({"variant": "dynamodb", "latency_ms": L_MS, "timeout_ms": 1e9}, duration_ms=150_000,
             warmup_ms=0, cooldown_ms=1_000, drain_limit_ms=0,
             catalog={"latency_ms": 25_000.0},
             workload={"runtime": NO_WORK, "writers": {"count": n + 1, "commits": 1,
                                                      "start_spread_ms": 20 * period}})
    gaps = []
    for rep in range(reps):
        h = run(from_dict(d), rep, history=True).history
        rel = h.loc[h["kind"] == "lock_release", "time_ms"].to_numpy()
        grants = h.loc[h["kind"] == "lock_grant", "time_ms"].to_numpy()
        assert len(rel) >= 1 and len(grants) >= 2
        waiting = (h["kind"] == "lock_request") & (h["time_ms"] < rel[0])
        assert waiting.sum() == n + 1                  # every writer asked before the first release
        gaps.append(grants[1] - rel[0])
    gaps = np.array(gaps)
    expected = period / (n + 1) + L_MS
    sd = period * math.sqrt(n / ((n + 1) ** 2 * (n + 2)))     # sd of the min of n U(0, P')
    se = sd / math.sqrt(reps)
    assert abs(gaps.mean() - expected) < 4 * se, (gaps.mean(), expected, se)
    assert gaps.min() >= L_MS - 1e-9 and gaps.max() <= period + L_MS + 1e-9


@pytest.mark.parametrize("variant", ["hms", "zookeeper"])
def test_fifo_grants_in_request_order(variant):
    """Under the FIFO disciplines every grant goes to the earliest request still waiting (the checker's rule 7,
    replayed on the run's history) and timeouts leave the queue; racing pollers do not keep that order."""
    lock = {"variant": variant, "latency_ms": L_MS, "timeout_ms": 2_000, "retries": 1, "retry_wait_ms": 500}
    res = checked(hive(lock, workload={"inter_arrival": {"mean_ms": 60},
                                       "runtime": {"median_ms": 1000, "sigma": 1.0, "min_ms": 100}}))
    assert res.summary["lock_timeouts"] > 0 and res.summary["lock_grants"] > 100
    h = res.history
    lock_rows = h[h["kind"].isin(["lock_request", "lock_grant", "lock_timeout"])]
    queue, order_ok = [], 0
    for kind, txn in zip(lock_rows["kind"], lock_rows["txn"]):
        if kind == "lock_request":
            queue.append(txn)
        elif kind == "lock_grant":
            assert queue[0] == txn
            queue.pop(0)
            order_ok += 1
        elif txn in queue:
            queue.remove(txn)
    assert order_ok == (h["kind"] == "lock_grant").sum()


@pytest.mark.slow   # (5 s)
def test_racing_pollers_are_not_fifo():
    """A newcomer that finds the lock free takes it ahead of older waiters: the FIFO rule rejects such a run."""
    d = hive({"variant": "dynamodb", "latency_ms": L_MS}, workload={
        "inter_arrival": {"mean_ms": 40}, "runtime": {"median_ms": 1000, "sigma": 1.0, "min_ms": 100}})
    cfg = from_dict(d)
    res = run(cfg, 0, history=True)
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    assert rules["lock_fifo"] is False and check_history(res.history, **rules) == []
    bad = check_history(res.history, **{**rules, "lock_fifo": True})
    assert bad and {v.invariant for v in bad} == {7} and "out of request order" in bad[0].message


@pytest.mark.parametrize("writers", [2, 4, 8])
def test_hive_no_better_than_the_per_table_cas(writers):
    """Iceberg on HMS commits one table under its lock by the same rule as a per-table CAS (a writer whose base
    moved fails), plus the queue and the poll gaps: at the same closed-loop writer count on one table, with the
    same service latency and storage, it commits no more per second than service-pointer (the no-lock HMS mode,
    HIVE-26882, is that design). Means over 3 replications, each with its 95 % CI."""
    base = {**SHORT, "storage": {"provider": "s3"}, "catalog": {"latency_ms": L_MS},
            "workload": {"writers": {"count": writers}, "runtime": {"median_ms": 200, "sigma": 0.5, "min_ms": 0}}}
    rates = {}
    for design in ("hive", "service-pointer"):
        xs = [run(from_dict({**base, "design": design}), r).summary["throughput_cps"] for r in range(3)]
        rates[design] = (np.mean(xs), 4.303 * np.std(xs, ddof=1) / math.sqrt(3))
    hive_m, hive_ci = rates["hive"]
    cas_m, cas_ci = rates["service-pointer"]
    assert hive_m + hive_ci <= cas_m - cas_ci, rates


def test_hms_timeout_fails_the_attempt_and_the_client_retries():
    """A request not granted within the timeout is given up after a failed poll (180 s by default; 300 ms here):
    the waiter unlocks its waiting lock (leaving the queue), the attempt fails (CommitFailedException), its
    metadata.json is deleted and the client retries; out of attempts the commit aborts `lock_timeout`."""
    res = checked(hive({"timeout_ms": 300}, workload={
        "inter_arrival": {"mean_ms": 30}, "runtime": {"median_ms": 1000, "sigma": 1.0, "min_ms": 100}}))
    rec = res.records
    assert (rec["reason"] == "lock_timeout").sum() > 0
    timed_out = rec[rec["lock_timeouts"] > 0]
    assert (timed_out["deletes"] >= timed_out["lock_timeouts"]).all()
    assert (rec["attempts"] <= 5).all()
    aborted = rec[rec["reason"] == "lock_timeout"]
    assert (aborted["attempts"] == 5).all()


def test_zookeeper_retries_after_its_timeout_then_aborts():
    """Hudi's LockManager asks again after a timed-out tryLock (5 s later, 50 times by default): with 1 retry and a
    short wait, a parked waiter's timer gives it up, it asks once more, then the lock call fails."""
    lock = {"variant": "zookeeper", "latency_ms": L_MS, "timeout_ms": 200, "retries": 1, "retry_wait_ms": 100}
    res = checked(hive(lock, commit={"max_retries": 0}, workload={
        "inter_arrival": {"mean_ms": 20}, "runtime": {"median_ms": 1000, "sigma": 1.0, "min_ms": 100}}))
    rec = res.records
    aborted = rec[rec["reason"] == "lock_timeout"]
    assert len(aborted) > 0
    assert (aborted["lock_requests"] == 2).all() and (aborted["lock_timeouts"] == 2).all()
    h = res.history
    final = h[(h["kind"] == "lock_timeout") & (h["attempts"] == 1)]
    assert set(final["txn"]) == set(aborted["txn"])


# ------------------------------------------------------------------------------------------ config


@pytest.mark.parametrize("d,path", [
    ({"lock": {"scope": "table"}}, "lock.variant"),
    ({"design": "hive"}, "catalog.latency_ms"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"variant": "zookeeper"}}, "lock.latency_ms"),
    ({"lock": {"variant": "hms", "latency_ms": 5}}, "lock.variant"),          # a storage catalog has no HMS
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"variant": "zookeeper", "latency_ms": 2,
                                                               "poll": {"policy": "fixed", "delay_ms": 1}}},
     "lock.poll"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"variant": "hms", "lease_ms": 5}}, "lock.lease_ms"),
])
def test_lock_config_errors(d, path):
    with pytest.raises(ConfigError) as err:
        from_dict(d)
    assert str(err.value).startswith(path)


def test_hive_resolves_hms_lock_at_the_catalog_latency():
    cfg = from_dict({"design": "hive", "catalog": {"latency_ms": 7}})
    lk = cfg.lock
    assert (lk.variant, lk.scope, lk.discipline, lk.latency_ms, lk.timeout_ms, lk.retries) == \
        ("hms", "table", "fifo_poll", 7, 180_000, 0)
    assert (lk.poll.policy, lk.poll.base_ms, lk.poll.factor, lk.poll.max_ms, lk.poll.jitter) == \
        ("exponential", 50, 1.5, 5000, 0.1)
    assert config_hash(from_dict({})) == config_hash(from_dict({"lock": {}}))   # no lock: results keyed as before


# ------------------------------------------------------------------------------------------ the checker


def locked_history() -> H:
    """Two transactions commit table 0 one after the other under its lock (HMS-like: request, grant, getTable,
    alter_table, release)."""
    h = H()
    for txn, t0 in ((1, 0.0), (2, 1.0)):
        h.begin(t0, txn, 0)
        h.read(t0 + 1, txn, 0, 0, 0)
        h.prepare(t0 + 2, txn, 0, 0)
    h.add("lock_request", 10, txn=1, table=0, seq=0, attempts=0)
    h.add("lock_grant", 10, txn=1, table=0, seq=0, attempts=0)
    h.add("lock_request", 11, txn=2, table=0, seq=0, attempts=0)
    h.read(12, 1, 0, 0, 0)
    h.cas(14, 1, 0, 0, True, 1, 1)
    h.end(14, 1, 0, "committed", 1)
    h.add("lock_release", 16, txn=1, table=0, seq=0, attempts=0)
    h.add("lock_grant", 20, txn=2, table=0, seq=0, attempts=0)
    h.cas(21, 2, 0, 0, False, 1, 1)
    h.add("lock_release", 23, txn=2, table=0, seq=0, attempts=0)
    h.end(24, 2, 0, "aborted", 1)
    h.final(30, 0, 1, 1)
    return h


RULES = {"scope": "table", "lock_scope": "table", "lock_fifo": True}


def test_locked_history_passes():
    assert check_history(locked_history().df(), **RULES) == []


def test_checker_rejects_two_holders():
    h = locked_history()
    next(r for r in h.rows if r["kind"] == "lock_release" and r["txn"] == 1)["time_ms"] = 22.0
    v = check_history(h.df(), **RULES)
    assert {x.invariant for x in v} == {7} and "two holders" in v[0].message


def test_checker_rejects_a_release_by_another():
    h = locked_history()
    next(r for r in h.rows if r["kind"] == "lock_release" and r["txn"] == 1)["txn"] = 2
    v = check_history(h.df(), **RULES)
    assert 7 in {x.invariant for x in v} and any("does not hold it" in x.message for x in v)


def test_checker_rejects_grants_out_of_order():
    h = locked_history()
    h.begin(3.0, 3, 0)
    h.add("lock_request", 10.5, txn=3, table=0, seq=0, attempts=0)   # asks before txn 2 ...
    h.add("lock_timeout", 25, txn=3, table=0, seq=0, attempts=1)
    h.end(26, 3, 0, "aborted", 1, reason="lock_timeout")
    v = check_history(h.df(), **RULES)                                 # ... but txn 2 is granted first
    assert [x.invariant for x in v] == [7] and "out of request order" in v[0].message
    assert check_history(h.df(), **{**RULES, "lock_fifo": False}) == []


def test_checker_rejects_a_commit_outside_the_lock():
    h = locked_history()
    grant = next(r for r in h.rows if r["kind"] == "lock_grant" and r["txn"] == 1)
    h.rows.remove(grant)
    v = check_history(h.df(), **RULES)
    assert any(x.invariant == 7 and "outside its lock" in x.message for x in v)


def test_checker_rejects_lock_rows_without_a_lock():
    v = check_history(locked_history().df(), scope="table")
    assert {x.invariant for x in v} == {0}


# ------------------------------------------------------------------------------------------ Hudi


def hudi(lock: dict | None = None, **over) -> dict:
    lock = lock or {}
    service = {} if lock.get("variant") == "storage" else {"latency_ms": L_MS}   # (a storage lock: the provider's)
    d = {**SHORT, "design": "hudi", "storage": {"provider": "instant"}, "lock": {**service, **lock}}
    for key, value in over.items():
        d[key] = {**d[key], **value} if isinstance(value, dict) and isinstance(d.get(key), dict) else value
    return d


def test_hudi_uncontended_write_in_closed_form():
    """One writer, nothing to contend with (every storage request 1 ms, lock round trips L): its start lock is
    held L/2 (the grant's answer) + 200 ms (TrueTime) + 2 PUTs (heartbeat, .requested) + L/2 (the unlock's effect);
    its commit lock L/2 + the timeline's LIST (1) + 2 LISTs + 4 metadata-table PUTs + 200 ms + a HEAD + the
    completed instant's PUT (1) + L/2. Per write: 2 lock calls, 7 PUTs, 3 LISTs besides the timeline's, 2 GETs."""
    res = checked(hudi(workload={"writers": {"count": 1}, "runtime": NO_WORK}))
    rec = res.records
    done = rec[rec["outcome"] == "committed"]
    assert len(done) > 100 and (rec["outcome"] != "aborted").all()
    start_hold, commit_hold = L_MS + 200 + 2, L_MS + 1 + 2 + 4 + 200 + 1 + 1
    assert np.allclose(done["lock_hold_ms"], start_hold + commit_hold, rtol=0, atol=1e-9)
    assert (done["lock_requests"] == 2).all() and (done["lock_grants"] == 2).all()
    assert (done["lock_wait_ms"] == 0).all()
    assert (done["puts"] == 7).all() and (done["lists"] == 3).all() and (done["gets"] == 2).all()
    # arrival to end: the timeline LIST (1), request L/2, hold the start lock, the unlock's answer L/2, the heartbeat
    # GET (1), request L/2, hold the commit lock, its unlock's answer L/2
    assert np.allclose(done["end_ms"] - done["arrival_ms"], 1 + 2 * L_MS + 1 + start_hold + commit_hold, atol=1e-9)


def test_hudi_conflicts_fail_the_write_and_fastappends_never_conflict():
    """A ValidatedOverwrite fails (validation_failed, after its unlock) when an instant completed since it started
    overlaps its file groups; a FastAppend never does; nothing is retried (Hudi's default)."""
    res = checked(hudi(workload={"inter_arrival": {"mean_ms": 400}, "fast_append_ratio": 0.5,
                                 "vo_conflict_probability": 0.3,
                                 "runtime": {"median_ms": 5000, "sigma": 0.5, "min_ms": 100}}))
    rec = res.records
    failed = rec[rec["reason"] == "validation_failed"]
    assert len(failed) > 20 and (failed["op"] == "vo").all()
    assert (failed["attempts"] == 0).all() and (failed["lock_grants"] == 2).all()
    assert (rec["attempts"] <= 1).all()
    assert (rec.loc[rec["op"] == "fa", "outcome"].isin(["committed", "unfinished"])).all()


def test_hudi_lock_timeout_fails_the_write():
    """A lock call that gives up fails the write (HoodieLockException): here the commit lock, overloaded, with a
    100 ms tryLock and one retry."""
    res = checked(hudi({"timeout_ms": 100, "retries": 1, "retry_wait_ms": 50},
                       workload={"inter_arrival": {"mean_ms": 100}, "runtime": {"median_ms": 1000, "sigma": 0.5,
                                                                                "min_ms": 100}}))
    rec = res.records
    timed_out = rec[rec["reason"] == "lock_timeout"]
    assert len(timed_out) > 20 and (timed_out["attempts"] == 1).all()
    assert (timed_out["lock_timeouts"] >= 2).all()


def test_hudi_per_table_locks_scale_with_tables():
    """Hudi's lock is per table: 4 tables at 4 times the load keep each lock as busy as one table at the base load
    (the metamorphic check: N independent tables act as N single tables): 4 times the grants per second, and the
    same mean lock wait within 2.5 standard errors of the difference (8 replications each)."""
    def runs(n, gap_ms):
        d = hudi(workload={"inter_arrival": {"mean_ms": gap_ms}, "num_tables": n,
                           "runtime": {"median_ms": 2000, "sigma": 0.5, "min_ms": 100}})
        return [run(from_dict(d), r).summary for r in range(8)]
    one, four = runs(1, 800), runs(4, 200)
    grants = [np.mean([s["lock_grants_cps"] for s in x]) for x in (one, four)]
    assert grants[1] == pytest.approx(4 * grants[0], rel=0.05)
    waits = [np.array([s["lock_wait_mean_ms"] for s in x]) for x in (one, four)]
    se = math.sqrt(sum(w.var(ddof=1) / len(w) for w in waits))
    assert abs(waits[0].mean() - waits[1].mean()) < 2.5 * se


# ------------------------------------------------------------------------------------------ a lock object in storage


def test_storage_lock_release_throttled_holds_the_lock_until_it_expires():
    """Hudi's storage lock on GCS (the seed set's 1 write/s per object, burst 1): a write's start lock is acquired
    and released within a second, so the release's conditional PUT finds no token and fails; the lock then stays
    held by no one until its validity (300 s from the grant, plus 500 ms of clock drift) has passed, and the next
    grant releases it then. Invariant 6 replays every lock-object write on the object's bucket."""
    res = checked(hudi({"variant": "storage"}, storage={"provider": "gcp", "profile_set": "seed"},
                       duration_ms=1_800_000,
                       workload={"inter_arrival": {"mean_ms": 4000}, "num_tables": 2,
                                 "runtime": {"median_ms": 10_000, "sigma": 1.0, "min_ms": 1000}}))
    h = res.history
    writes = h[h["kind"] == "lock_write"]
    assert (~writes["ok"]).sum() >= 10 and writes["ok"].sum() >= 10
    grants = h[h["kind"] == "lock_grant"]
    # an expired lock's release is written by the grant that takes it over: the row right before that grant
    nxt = h.shift(-1)
    expired = h[(h["kind"] == "lock_release") & (nxt["kind"] == "lock_grant") & (nxt["txn"] != h["txn"])
                & (nxt["time_ms"] == h["time_ms"])]
    assert len(expired) >= 2
    for r in expired.itertuples():
        granted = grants[(grants["txn"] == r.txn) & (grants["i"] < r.i)]["time_ms"].max()
        assert r.time_ms >= granted + 300_000 + 500
    assert res.summary["success_rate"] < 0.5        # every write's start stalls the table's lock for 5 minutes


def test_storage_lock_without_a_limit_races_like_the_dynamodb_client():
    """On S3 (no per-object limit) the storage lock is a racing poller at the provider's latencies: no write is
    throttled, every release frees the lock at once."""
    res = checked(hudi({"variant": "storage"}, storage={"provider": "s3"},
                       workload={"inter_arrival": {"mean_ms": 4000},
                                 "runtime": {"median_ms": 10_000, "sigma": 1.0, "min_ms": 1000}}))
    h = res.history
    assert (h["kind"] == "lock_write").sum() == 0 and res.summary["success_rate"] > 0.99
    assert res.records["throttled"].sum() == 0


def test_checker_replays_lock_object_writes():
    """The lock object's writes on the seed set's GCS bucket (1 write/s, burst 1): some are refused; one marked
    accepted is caught."""
    cfg = from_dict(hudi({"variant": "storage"}, storage={"provider": "gcp", "profile_set": "seed"},
                         workload={"inter_arrival": {"mean_ms": 4000},
                                   "runtime": {"median_ms": 10_000, "sigma": 1.0, "min_ms": 1000}}))
    h = run(cfg, 0, history=True).history.copy()
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    assert rules["lock_object"] and check_history(h, **rules) == []
    bad = h.index[(h["kind"] == "lock_write") & ~h["ok"]][0]
    h.loc[bad, "ok"] = True
    v = check_history(h, **rules)
    assert v and v[0].invariant == 6 and "lock object" in v[0].message


@pytest.mark.parametrize("d,path", [
    ({"design": "hudi", "lock": {"variant": "storage", "latency_ms": 5}}, "lock.latency_ms"),
    ({"design": "hive", "catalog": {"latency_ms": 5}, "lock": {"variant": "hms", "validity_ms": 5}},
     "lock.validity_ms"),
    ({"design": "hudi", "lock": {"variant": "storage", "discipline": "fifo_notify"}}, "lock.discipline"),
])
def test_storage_lock_config_errors(d, path):
    with pytest.raises(ConfigError) as err:
        from_dict(d)
    assert str(err.value).startswith(path)
