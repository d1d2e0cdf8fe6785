"""Delta's DynamoDB log store (design delta-dynamodb; sim/model/log_store.py): the table's write capacity bounds the
commits of every Delta table sharing it, a throttled write is resent by the AWS SDK's equal-jitter backoff and given up
after 10 resends, each attempt's requests in closed form, and the checker's capacity rule on its histories.

Both engines run the same handlers (tests/test_fast_engine.py holds them identical on the log store's cases);
these tests run the fast one."""
from __future__ import annotations

import numpy as np
import pytest

from sim.checker import check_history
from sim.config import ConfigError, config_hash, from_dict
from sim.providers import load_provider
from sim.rules import checker_rules
from sim.run import run

DDB_MS = 8.0
SHORT = {"duration_ms": 600_000, "warmup_ms": 120_000, "cooldown_ms": 120_000, "drain_limit_ms": 600_000}


def ddb(**over) -> dict:
    d = {**SHORT, "design": "delta-dynamodb", "log_store": {"latency_ms": DDB_MS},
         "workload": {"runtime": {"median_ms": 10_000, "sigma": 1.0, "min_ms": 1000}}}
    for key, value in over.items():
        d[key] = {**d[key], **value} if isinstance(value, dict) and isinstance(d.get(key), dict) else value
    return d


def checked(d: dict):
    cfg = from_dict(d)
    res = run(cfg, 0, history=True)
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    ls = cfg.log_store
    assert rules["log_store"] and rules["mutation_rate_per_s"] == ls.write_capacity_per_s
    assert rules["read_rate_per_s"] == ls.read_capacity_per_s
    assert rules["mutation_burst"] == rules["read_burst"] * ls.write_capacity_per_s / ls.read_capacity_per_s \
        or ls.burst_s == 0
    assert check_history(res.history, **rules) == []
    return res


def test_uncontended_attempt_in_closed_form():
    """One writer (a second's think between commits: 2 of the 5 write units a second) on the instant provider
    (every S3 request 1 ms), DynamoDB round trips D, runtime 0: from the end
    of its base read (a LIST and a Query), its first attempt (no LIST: Delta Spark's) HEADs N, GetItems N-1, HEADs
    N-1 and PUTs the temp file (3 + D), then its conditional PutItem (D), the copy into the log (a GET and a PUT,
    2) and the completion PutItem (D): commit latency 5 + 3 D, more for a commit that checkpoints (every 10th).
    Per commit 2 PutItems: 2 units of write capacity."""
    res = checked(ddb(storage={"provider": "instant"}, workload={"writers": {"count": 1, "think_ms": 1000},
                                                                 "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}))
    rec = res.records
    done = rec[rec["outcome"] == "committed"]
    assert len(done) > 400 and (rec["outcome"] != "aborted").all() and rec["throttled"].sum() == 0
    latency = (done["end_ms"] - done["runtime_end_ms"]).to_numpy()
    assert np.isclose(latency, 5 + 3 * DDB_MS, rtol=0, atol=1e-9).mean() > 0.85
    assert (latency >= 5 + 3 * DDB_MS - 1e-9).all()
    h = res.history
    writes = h[h["kind"] == "store_write"]
    assert len(writes) >= len(done) - 1 and writes["ok"].all()   # (the last one may come after the run's stop)


def test_write_capacity_is_shared_by_every_table():
    """The DynamoDB table's 5 write units a second serve every Delta table: a commit takes 2 (its conditional
    PutItem and its completion), a lost race 1 more, so all tables together commit at most 5/2 a second plus what
    the 300 s burst lends (1500 units over the run). Ten tables at 0.67 arrivals/s each overload it, where the
    same tables on S3's put-if-absent (design log-spark, the same client) keep up: spreading tables does not
    spread this design's capacity."""
    window_s = (SHORT["duration_ms"] - SHORT["warmup_ms"] - SHORT["cooldown_ms"]) / 1000
    bound = 5.0 / 2 + 1500 / 2 / window_s
    load = {"num_tables": 10, "inter_arrival": {"mean_ms": 150}}
    s = run(from_dict(ddb(workload=load)), 0).summary
    assert s["throughput_cps"] <= bound and s["success_rate"] < 0.5 and s["throttled"] > 0
    spark = {**SHORT, "design": "log-spark", "workload": {**load, "runtime": ddb()["workload"]["runtime"]}}
    s3 = run(from_dict(spark), 0).summary
    assert s3["success_rate"] > 0.99 and s3["throughput_cps"] > 1.4 * bound
    one = run(from_dict(ddb(workload={"inter_arrival": {"mean_ms": 150}})), 0).summary
    assert one["throughput_cps"] <= bound
    light = run(from_dict(ddb(workload={"num_tables": 10, "inter_arrival": {"mean_ms": 1000}})), 0).summary
    assert light["success_rate"] > 0.99


def test_sdk_resends_with_equal_jitter_then_gives_up():
    """A throttled PutItem is resent by the AWS SDK v1's DynamoDB policy: the k-th sleep is c/2 + U(0, c/2),
    c = min(500 x 2^(k-1), 20000) ms; after 10 resends the 11th 429 fails the commit (`throttled`). (Read capacity
    to spare: only writes are throttled here.)"""
    res = checked(ddb(workload={"num_tables": 4, "inter_arrival": {"mean_ms": 100}},
                      log_store={"read_capacity_per_s": 1000}))
    rec = res.records
    gave_up = rec[rec["reason"] == "throttled"]
    assert len(gave_up) > 50
    h = res.history
    sleeps = []
    for txn in gave_up["txn"].to_numpy()[:40]:
        rows = h[(h["txn"] == txn) & h["kind"].isin(["throttled", "cas"])]
        kinds = rows["kind"].to_list()
        tail = kinds[-11:]
        assert tail == ["throttled"] * 11                      # the request given up: 1 send and 10 resends
        t = rows["time_ms"].to_numpy()[-11:]
        answer = rows["answer_ms"].to_numpy()[-11:]
        sleeps.append(t[1:] - answer[:-1] - DDB_MS / 2)          # next effect point = answer + sleep + D/2
    sleeps = np.array(sleeps)
    ceil = np.minimum(500.0 * 2.0 ** np.arange(10), 20_000.0)
    assert (sleeps >= ceil / 2 - 1e-6).all() and (sleeps <= ceil + 1e-6).all()
    assert np.allclose(sleeps.mean(axis=0), 0.75 * ceil, rtol=0.15)


@pytest.mark.parametrize("kind, read_capacity, what", [
    ("store_write", 1000, "write to the log store's table at"),    # reads to spare: the writes run out
    ("store_read", 5, "read of the log store's table (its read capacity)"),
])
def test_checker_rejects_capacity_taken_from_an_empty_table(kind, read_capacity, what):
    """Invariant 6 on the log store's buckets: a completion write, or a read, that found no capacity cannot be ok."""
    cfg = from_dict(ddb(workload={"num_tables": 4, "inter_arrival": {"mean_ms": 150}},
                        log_store={"read_capacity_per_s": read_capacity}))
    res = run(cfg, 0, history=True)
    h = res.history.copy()
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))
    assert check_history(h, **rules) == []
    throttled = h.index[(h["kind"] == kind) & ~h["ok"]]
    assert len(throttled) > 0
    h.loc[throttled[0], "ok"] = True
    v = check_history(h, **rules)
    assert v and v[0].invariant == 6 and what in v[0].message


@pytest.mark.parametrize("d,path", [
    ({"design": "delta-dynamodb"}, "log_store.latency_ms"),
    ({"log_store": {"kind": "dynamodb", "latency_ms": 5}}, "log_store.kind"),        # not the log protocol
    ({"log_store": {"latency_ms": 5}}, "log_store.kind"),
    ({"design": "delta-dynamodb", "log_store": {"latency_ms": 5, "retry": {"policy": "aws_dynamodb",
                                                                          "jitter": 0.5}}}, "log_store.retry"),
])
def test_log_store_config_errors(d, path):
    with pytest.raises(ConfigError) as err:
        from_dict(d)
    assert str(err.value).startswith(path)


def test_log_store_defaults():
    ls = from_dict(ddb()).log_store
    assert (ls.kind, ls.write_capacity_per_s, ls.burst_s) == ("dynamodb", 5.0, 300.0)
    assert (ls.retry.policy, ls.retry.base_ms, ls.retry.factor, ls.retry.max_ms, ls.retry.max_resends) == \
        ("aws_dynamodb", 500.0, 2.0, 20_000.0, 10)
    assert config_hash(from_dict({})) == config_hash(from_dict({"log_store": {}}))


def test_writers_outlast_their_throttled_completions():
    """A throttled completion PutItem is resent after its commit's recorded end; its writer starts its next
    transaction when the last resend is answered, and never stops for it (before, a writer whose next tick had
    passed by then was dropped, and 400 periodic writers overloading the table ran as a handful)."""
    d = ddb(workload={"writers": {"count": 60, "mode": "periodic", "interval_ms": 2000},
                      "runtime": {"median_ms": 500, "sigma": 0.5, "min_ms": 0}})
    rec = run(from_dict(d), 0).records
    assert rec["throttled"].sum() > 100
    last = rec.sort_values("arrival_ms").groupby("writer").tail(1)   # each writer's last transaction
    assert len(last) == 60
    ended = last[last["outcome"] != "unfinished"]
    # it ended so late that its completion's resends (at most ~110 s) or its next tick reach the end of the run
    assert (ended["end_ms"] > SHORT["duration_ms"] - 120_000).all()


def test_reads_per_commit_are_two_per_attempt():
    """A commit of a attempts reads 2a items: its snapshot read's Query, each attempt's consistent GetItem of the
    previous entry, and the Query of each LIST after a lost race (1 + a + (a - 1)); with read capacity to spare
    none is throttled."""
    res = checked(ddb(workload={"num_tables": 1, "inter_arrival": {"mean_ms": 400}},
                      log_store={"read_capacity_per_s": 1000}))
    h, rec = res.history, res.records
    done = rec[rec["outcome"] == "committed"]
    reads = h[h["kind"] == "store_read"]
    assert reads["ok"].all()
    per_txn = reads.groupby("txn").size()
    assert (done["attempts"] > 1).sum() > 20                     # lost races: LISTs and their Queries
    assert (per_txn.reindex(done["txn"]).to_numpy() == 2 * done["attempts"].to_numpy()).all()


def test_reads_throttled_at_the_read_rate():
    """The table's read capacity (`provisionedThroughput.rcu`, 5 by default) bounds every table's reads together:
    at 2 read units a second and a burst of one, the reads that found capacity never exceed 2 a second (plus the
    one unit it starts with), and an overloaded store serves nearly that many; a read given up ends its commit
    `throttled`, where writes to spare throttle none."""
    assert from_dict(ddb()).log_store.read_capacity_per_s == 5.0
    res = checked(ddb(workload={"num_tables": 10, "inter_arrival": {"mean_ms": 500}},
                      log_store={"read_capacity_per_s": 2, "write_capacity_per_s": 1000, "burst_s": 0}))
    h, rec = res.history, res.records
    reads = h[h["kind"] == "store_read"]
    ok = reads[reads["ok"]]["time_ms"].to_numpy()
    for lo in np.arange(0, ok.max() - 10_000, 5_000):
        n = ((ok >= lo) & (ok < lo + 10_000)).sum()
        assert n <= 2 * 10 + 1
    lo, hi = SHORT["warmup_ms"], SHORT["duration_ms"] - SHORT["cooldown_ms"]
    assert ((ok >= lo) & (ok < hi)).sum() / ((hi - lo) / 1000) > 1.8        # while arrivals come: saturated
    assert (~reads["ok"]).sum() > 0 and (h[h["kind"] == "store_write"]["ok"]).all()
    gave_up = rec[rec["reason"] == "throttled"]
    assert len(gave_up) > 0
    last = h[h["txn"].isin(gave_up["txn"]) & h["kind"].isin(["store_read", "cas", "throttled"])].groupby("txn").last()
    assert (last["kind"] == "store_read").all() and (~last["ok"].astype(bool)).all()
