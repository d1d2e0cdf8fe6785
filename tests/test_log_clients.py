"""Delta clients on the log protocol (docs/MODEL.md, "Delta clients"): delta-rs's snapshot update inside an
attempt, snapshot reads on their own lanes and in passes, the `_last_checkpoint` hint, a checkpoint's ranged GETs,
the post-commit update, the checkpoint rebuild, the expired-log cleanup LIST and the no-retry attempt that fails at
its LIST; Delta Spark (`design: log-spark`). Exact request counts per transaction and closed forms of their timing
with constant latencies (the `instant` provider: every request 1 ms, f = 0.5), and the numbers the presets resolve
to."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim.checker import check_history
from sim.config import ConfigError, config_hash, from_dict, replaced, set_path
from sim.model.params import params_of
from sim.run import run

from helpers import by_txn, groups

R_MS = 200.0           # a constant runtime
CONTENDED = {"storage.provider": "instant", "duration_ms": 30_000, "warmup_ms": 5_000, "cooldown_ms": 5_000,
             "workload.num_tables": 2, "workload.inter_arrival.mean_ms": 20, "workload.fast_append_ratio": 0.7,
             "workload.runtime.median_ms": R_MS, "workload.runtime.sigma": 0.0,
             "workload.runtime.min_ms": R_MS, "commit.checkpoint_interval": 10}


def cfg(**paths):
    return replaced(from_dict({}), paths)


def _snapshot(v: int, c) -> tuple[int, float]:
    """GETs and wall time (1 ms each) of a snapshot read of v entries: the newest checkpoint (its ranged GETs one
    after another), then its tail (each pass on the lanes)."""
    ci, lanes, passes, k = (c.commit.checkpoint_interval, c.commit.snapshot_max_parallel, c.commit.snapshot_passes,
                            c.commit.checkpoint_read_gets)
    newest = (v // ci) * ci
    return k * (newest > 0) + passes * (v - newest), k * (newest > 0) + passes * math.ceil((v - newest) / lanes)


def _post_commit(v: int, c, every_commit: bool) -> dict:
    """LISTs, GETs, PUTs and wall time of the post-commit work after entry v: the committer's update to its entry
    (LIST, its passes), the checkpoint rebuilt (the hint's GET, LIST, the previous checkpoint's GETs, the ci entries'
    passes, checkpoint PUT, its HEAD, _last_checkpoint PUT) and the cleanup's LIST pages."""
    ci, lanes, passes, k = (c.commit.checkpoint_interval, c.commit.snapshot_max_parallel, c.commit.snapshot_passes,
                            c.commit.checkpoint_read_gets)
    hint, up, cp = c.commit.last_checkpoint_hint, c.commit.post_commit_update, v % ci == 0
    pages = math.ceil((c.commit.log_entries_at_start + v) / 1000) if every_commit or cp else 0
    prev = k * (v > ci)
    gets = up * passes + cp * (2 * hint + prev + passes * ci)
    ms = up * (1 + passes) + cp * (2 * hint + 1 + prev + passes * math.ceil(ci / lanes) + 2) + pages
    return {"lists": up + cp + pages, "gets": gets, "puts": 2 * cp, "ms": ms}


def _check_transactions(r, c, update: bool, every_commit: bool) -> int:
    """Each transaction's counts and times against the closed forms; the attempts that read new entries."""
    lanes, passes, hint = c.commit.snapshot_max_parallel, c.commit.snapshot_passes, c.commit.last_checkpoint_hint
    rec = by_txn(r.records)
    h = r.history
    seen = 0
    for txn, g in groups(h[h.txn >= 0]).items():
        x = rec[txn]
        reads, preps, writes = (g[g.kind == k] for k in ("read", "prepare", "cas"))
        if len(reads) == 0:                          # the run ended before its base read took effect
            assert x.catalog_reads == x.gets == x.lists == 0
            continue
        assert x.catalog_reads == len(reads) == 1 + len(preps)
        v0 = int(reads.version[0])
        snap_gets, snap_ms = _snapshot(v0, c)
        n = preps.validated_to - preps.validated_from
        seen += int((n > 0).sum())
        post = {"lists": 0, "gets": 0, "puts": 0, "ms": 0.0}
        if x.outcome == "committed":
            ok = writes[writes.ok]
            post = _post_commit(int(ok.version[0]), c, every_commit)
            assert x.end_ms - ok.time_ms[0] == pytest.approx(0.5 + post["ms"])
        assert x.lists == update * int((n > 0).sum()) + post["lists"]
        assert x.gets == hint + snap_gets + (1 + update * passes) * n.sum() + post["gets"]
        assert x.puts == post["puts"]
        # the hint's GET, then the base LIST's effect
        assert reads.time_ms[0] - x.arrival_ms == pytest.approx(hint + 0.5)
        # the base read: its LIST's effect, the snapshot and the runtime, then the first LIST's (or create's)
        ops = g[(g.kind == "read") | (g.kind == "cas")].time_ms
        if len(ops) > 1:
            assert ops[1] - ops[0] == pytest.approx(1.0 + snap_ms + R_MS)
        # each attempt: LIST effect -> create effect = 0.5 + n (serial checks)
        # + [n > 0](LIST + passes * ceil(n / lanes)) + 0.5
        for t, k in zip(preps.time_ms, n):
            nxt = writes[writes.time_ms > t].time_ms
            if len(nxt):
                want = 1.0 + k + (update and k > 0) * (1 + passes * math.ceil(k / lanes))
                assert nxt[0] - t == pytest.approx(want)
    return seen


@pytest.mark.parametrize("lanes, at_start", [(1000, 0), (2, 2_500)])
def test_delta_rs_counts_and_timing_with_k_intervening_commits(lanes, at_start):
    """design log: the hint's GET before the base LIST, every entry of a snapshot read twice, every attempt that
    read k > 0 new entries LISTs again and reads the k twice before its put; every commit updates its snapshot to
    its entry, rebuilds its checkpoint (every ci-th: the hint, 11 GETs of the previous one, its HEAD) and LISTs the
    whole log; all to the closed forms."""
    c = cfg(**{"design": "log", **CONTENDED, "commit.snapshot_max_parallel": lanes,
               "commit.log_entries_at_start": at_start})
    r = run(c, history=True)
    assert (r.records.outcome == "committed").sum() > 500 and r.records.table_conflicts.sum() > 100
    assert _check_transactions(r, c, update=True, every_commit=True) > 500
    assert check_history(r.history, protocol="log") == []


def test_delta_spark_counts_and_timing():
    """design log-spark: no LIST before the first put, no snapshot update, serial checks, a checkpoint every
    10 versions rebuilt and followed by the cleanup LIST."""
    c = cfg(**{"design": "log-spark", **CONTENDED})
    r = run(c, history=True)
    assert (r.records.outcome == "committed").sum() > 500 and r.records.table_conflicts.sum() > 100
    assert _check_transactions(r, c, update=False, every_commit=False) > 500
    assert check_history(r.history, protocol="log") == []


@pytest.mark.parametrize("design", ["log", "log-spark"])
def test_uncontended_writer_closed_form(design):
    """One closed-loop writer on one table: its k-th transaction reads a snapshot of k - 1 entries and commits
    entry k, and starts only after the previous one's post-commit work:
    end - start = [hint, delta-rs] + LIST + snapshot + runtime + [LIST, delta-rs] + put + post-commit."""
    one = {k: v for k, v in CONTENDED.items() if not k.startswith("workload.inter_arrival")}
    data = {"design": design}
    for path, value in {**one, "workload.num_tables": 1, "workload.writers.count": 1,
                        "workload.writers.think_ms": 0.0, "workload.writers.think": "constant"}.items():
        set_path(data, path, value)
    c = from_dict(data)
    rec = run(c).records.sort_values("txn")
    rec = rec[rec.outcome == "committed"]
    spark = design == "log-spark"
    assert len(rec) > 100 and (rec.attempts == 1).all()
    for k, x in enumerate(rec.itertuples(), start=1):
        post = _post_commit(k, c, not spark)
        want = (not spark) + 1 + _snapshot(k - 1, c)[1] + R_MS + (not spark) + 1 + post["ms"]
        assert x.end_ms - x.arrival_ms == pytest.approx(want)
        assert (x.catalog_reads, x.lists, x.puts) == (1 + (not spark), post["lists"], post["puts"])
    assert np.allclose(rec.arrival_ms.to_numpy()[1:], rec.end_ms.to_numpy()[:-1])


def test_presets_resolve_to_the_documented_numbers():
    """docs/MODEL.md "Delta clients" and docs/reference.md cite these; Spark's 10,000,000 attempts run."""
    rs = from_dict({"design": "log"})
    assert (rs.commit.snapshot_passes, rs.commit.last_checkpoint_hint, rs.commit.checkpoint_read_gets,
            rs.commit.post_commit_update, rs.commit.fail_fast_without_retries) == (2, True, 11, True, True)
    assert (rs.commit.max_retries, rs.commit.checkpoint_interval, rs.commit.snapshot_update,
            rs.commit.snapshot_max_parallel, rs.commit.checkpoint_rebuild, rs.commit.log_cleanup,
            rs.commit.log_entries_at_start, rs.commit.first_attempt, rs.io.max_parallel,
            rs.storage.throttle_retry.policy) == (15, 100, True, 1000, True, "every_commit", 0, "refresh", 1,
                                                  "object_store")
    sp = from_dict({"design": "log-spark"})
    assert (sp.commit.max_retries, sp.max_attempts, sp.commit.checkpoint_interval, sp.commit.snapshot_update,
            sp.commit.snapshot_max_parallel, sp.commit.checkpoint_rebuild, sp.commit.log_cleanup,
            sp.commit.first_attempt, sp.retry.table.policy, sp.storage.throttle_retry.policy) == (
        10_000_000, 10_000_001, 10, False, 1000, True, "checkpoint", "stale", "immediate", "google_java")
    p, delays = params_of(sp, False)
    assert p.max_attempts == 10_000_001 and len(delays.table) <= 2 and len(delays.catalog) <= 2


@pytest.mark.parametrize("design", ["log", "log-spark"])
def test_reference_cites_the_presets_commit_keys(design):
    """docs/reference.md's row of each design names every commit key it sets, with its value."""
    from sim.designs import DESIGNS
    text = (Path(__file__).resolve().parents[1] / "docs" / "reference.md").read_text()
    row = next(line for line in text.splitlines()
               if line.startswith(f"| `{design}` |") and "`catalog.backend: " in line)   # the designs table's row
    for key, value in DESIGNS[design]["commit"].items():
        shown = str(value).lower() if isinstance(value, bool) else value
        assert f"`commit.{key}: {shown}`" in row


def test_plain_log_keeps_its_hash_and_reads():
    """The switches are late keys: a log config without them keeps its hash, and runs the protocol alone."""
    plain = {"catalog": {"scope": "table"}, "commit": {"protocol": "log"}}
    off = {"catalog": {"scope": "table"}, "commit": {"protocol": "log", "snapshot_update": False,
                                                     "checkpoint_rebuild": False, "log_cleanup": "none",
                                                     "log_entries_at_start": 0, "snapshot_passes": 1,
                                                     "last_checkpoint_hint": False, "checkpoint_read_gets": 1,
                                                     "post_commit_update": False,
                                                     "fail_fast_without_retries": False}}
    assert config_hash(from_dict(plain)) == config_hash(from_dict(off))
    p, _ = params_of(from_dict({**plain, "io": {"max_parallel": 3}}), False)
    assert (p.snapshot_update, p.snapshot_max_parallel, p.checkpoint_rebuild, p.log_cleanup) == (False, 3, False, 0)
    assert (p.snapshot_passes, p.last_checkpoint_hint, p.checkpoint_read_gets, p.post_commit_update,
            p.fail_fast) == (1, False, 1, False, False)


def test_microbenchmark_reads_no_snapshot_so_the_switches_do_not_apply():
    """commit.shape object under design log resolves to the protocol alone: the same hash as before them."""
    bench = {"design": "log", "commit": {"shape": "object", "max_retries": 0}}
    assert from_dict(bench).commit.snapshot_update is False
    assert config_hash(from_dict(bench)) == config_hash(from_dict({**bench, "commit": {**bench["commit"], "snapshot_update": False,
                                                                  "snapshot_max_parallel": 7}}))


@pytest.mark.parametrize("data, path", [
    ({"commit": {"snapshot_update": True}}, "commit.snapshot_update"),
    ({"commit": {"snapshot_max_parallel": 8}}, "commit.snapshot_max_parallel"),
    ({"commit": {"checkpoint_rebuild": True}}, "commit.checkpoint_rebuild"),
    ({"commit": {"log_cleanup": "every_commit"}}, "commit.log_cleanup"),
    ({"design": "log", "commit": {"log_cleanup": "none", "log_entries_at_start": 10}}, "commit.log_entries_at_start"),
    ({"design": "log", "commit": {"snapshot_max_parallel": 0}}, "commit.snapshot_max_parallel"),
    ({"commit": {"snapshot_passes": 2}}, "commit.snapshot_passes"),
    ({"commit": {"last_checkpoint_hint": True}}, "commit.last_checkpoint_hint"),
    ({"commit": {"checkpoint_read_gets": 11}}, "commit.checkpoint_read_gets"),
    ({"commit": {"post_commit_update": True}}, "commit.post_commit_update"),
    ({"commit": {"fail_fast_without_retries": True}}, "commit.fail_fast_without_retries"),
    ({"design": "log", "commit": {"snapshot_passes": 0}}, "commit.snapshot_passes"),
    ({"design": "log", "commit": {"checkpoint_read_gets": 0}}, "commit.checkpoint_read_gets"),
])
def test_log_switches_errors_name_the_key(data, path):
    with pytest.raises(ConfigError) as e:
        from_dict(data)
    assert e.value.path == path


@pytest.mark.parametrize("engine, interval", [("fast", 0), ("simpy", 0), ("fast", 100)])
def test_a_log_list_pages_over_the_entries_since_its_checkpoint(engine, interval):
    """A LIST at an effect point lists from the newest checkpoint: 1000 keys a page, the pages before the last
    read first. One closed-loop writer on a log with no checkpoint: past 1000 entries each of its two LISTs (the
    snapshot's and the attempt's) reads (v - 1) // 1000 pages more; with a checkpoint every 100 versions, none. The
    post-commit update's LIST (no effect point) lists from the newest checkpoint too: v // 1000 + 1 pages after
    entry v + 1, or one."""
    from sim.api import config, run
    cfg = config({"duration_ms": 1_300_000, "warmup_ms": 0, "cooldown_ms": 0, "design": "log",
                  "storage": {"provider": "instant"},
                  "commit": {"checkpoint_interval": interval, "log_cleanup": "none", "checkpoint_rebuild": False},
                  "workload": {"writers": {"count": 1, "think_ms": 1000},
                               "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}})
    rec = run(cfg, stream=False, engine=engine).records
    v = rec["txn"].to_numpy()                        # one writer: transaction k starts on a log of k entries
    assert len(rec) > 1100 and (rec["attempts"] == 1).all()
    extra = 2 * (np.maximum(v - 1, 0) // 1000) + v // 1000 + 1 if interval == 0 else 0 * v + 1
    assert np.array_equal(rec["lists"].to_numpy(), extra)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_without_retries_an_attempt_that_finds_the_log_moved_fails_at_its_list(engine):
    """design log, max_retries 0 (delta-rs's MaxCommitAttempts(0), mod.rs:873-885): a transaction whose attempt's
    LIST finds entries newer than its base fails there, at the LIST's answer, one attempt, no check, no put; one
    whose LIST finds none puts, and loses only to an entry created between its LIST and its put. Without the switch
    the same attempt checks, updates and puts."""
    from sim.api import config, run as api_run
    from sim.rules import checker_rules
    base = {"design": "log", "storage": {"provider": "instant"}, "duration_ms": 60_000, "warmup_ms": 0,
            "cooldown_ms": 0, "commit": {"max_retries": 0},
            "workload": {"writers": {"count": 4, "commits": 40, "think_ms": 0},
                         "runtime": {"median_ms": R_MS, "sigma": 0, "min_ms": R_MS}}}
    c = config(base)
    r = api_run(c, stream=False, engine=engine, history=True)
    rec, h = by_txn(r.records), r.history
    assert check_history(h, **checker_rules(c, None)) == []
    moved = lost = 0
    for txn, g in groups(h[h.txn >= 0]).items():
        x = rec[txn]
        reads, writes = g[g.kind == "read"], g[g.kind == "cas"]
        assert x.attempts == 1 and len(reads) == 2
        if reads.version[1] > reads.version[0]:     # the log moved between its base LIST and its attempt's
            moved += 1
            assert (x.outcome, x.reason, len(writes), len(g[g.kind == "prepare"])) == (
                "aborted", "retries_exhausted", 0, 0)
            assert x.end_ms == pytest.approx(reads.time_ms[1] + 0.5)
            assert x.gets == 1 + _snapshot(int(reads.version[0]), c)[0] and x.lists == 0
        else:
            assert len(writes) == 1
            lost += x.outcome != "committed"
    assert moved > 20 and lost > 0
    off = config({**base, "commit": {"max_retries": 0, "fail_fast_without_retries": False}})
    assert checker_rules(off, None)["moved_fails"] is False
    r = api_run(off, stream=False, engine=engine, history=True)
    assert (r.records.attempts == 1).all() and (r.history.kind == "cas").sum() == len(r.records)
    assert check_history(r.history, **checker_rules(off, None)) == []


def test_the_checker_flags_a_moved_attempt_that_ends_otherwise():
    """Invariant 3 under `moved_fails`: an attempt that failed at its LIST counts, and ends retries_exhausted."""
    from sim.api import config, run as api_run
    from sim.rules import checker_rules
    c = config({"design": "log", "storage": {"provider": "instant"}, "duration_ms": 20_000, "warmup_ms": 0,
                "cooldown_ms": 0, "commit": {"max_retries": 0},
                "workload": {"writers": {"count": 3, "commits": 20, "think_ms": 0},
                             "runtime": {"median_ms": R_MS, "sigma": 0, "min_ms": R_MS}}})
    h = api_run(c, stream=False, history=True).history
    rules = checker_rules(c, None)
    putters = set(h.txn[h.kind == "cas"])
    ends = h.index[(h.kind == "end") & (h.reason == "retries_exhausted") & ~h.txn.isin(putters)]
    assert len(ends) > 0 and check_history(h, **rules) == []
    bad = h.copy()
    bad.loc[ends[0], "reason"] = "validation_failed"
    assert any(v.invariant == 3 for v in check_history(bad, **rules))
    assert any(v.invariant == 3 for v in check_history(h, **{**rules, "moved_fails": False}))


def test_a_store_that_serves_gets_one_at_a_time_queues_a_pass(tmp_path):
    """`get_service_ms` s (a provider's; SeaweedFS behind its proxy): a batch of n GETs sent at t waits for the
    store's backlog then, and its last answer comes (n - 1) s later than alone; the backlog grows by n s."""
    from types import SimpleNamespace
    import numpy as np
    from sim.model.io import store_wait_ms
    from sim.model.state import RUN
    m = SimpleNamespace(p=SimpleNamespace(get_service_ms=0.5), run=np.zeros(1, dtype=RUN).view(np.recarray))
    assert store_wait_ms(m, 10.0, 4) == pytest.approx(1.5)          # alone: 3 x 0.5 after the first
    assert m.run[0].store_free_ms == pytest.approx(12.0)
    assert store_wait_ms(m, 11.0, 2) == pytest.approx(1.0 + 0.5)     # 1 ms of backlog, then one more GET
    assert m.run[0].store_free_ms == pytest.approx(13.0)
    assert store_wait_ms(m, 20.0, 1) == 0.0 and m.run[0].store_free_ms == pytest.approx(20.5)
    m.p.get_service_ms = 0.0                                         # no queue: nothing waits, nothing booked
    assert store_wait_ms(m, 0.0, 100) == 0.0 and m.run[0].store_free_ms == pytest.approx(20.5)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_one_writer_with_its_setup_and_a_queueing_store_closed_form(tmp_path, engine):
    """One closed-loop writer, every request 1 ms, the store serving GETs one at a time (0.25 ms each) and the
    client's setup (30 ms): transaction k (a log of k - 1 entries) takes setup + hint + LIST + two passes of
    1 + (k - 2) 0.25 ms + runtime + LIST + put + post-commit (LIST, two GETs: its passes of one, which wait for
    nothing) + cleanup LIST."""
    from sim.api import config, run as api_run
    prov = tmp_path / "queued.yaml"
    prov.write_text("name: queued\ndescription: 1 ms requests, GETs served one at a time\nmin_latency_ms: 1\n"
                    "get: {median_ms: 1, sigma: 0}\nput: {base_ms: 1, ms_per_mib: 0, sigma: 0}\n"
                    "cas: {median_ms: 1, sigma: 0}\nget_service_ms: 0.25\n")
    c = config({"design": "log", "storage": {"provider": str(prov)}, "duration_ms": 60_000, "warmup_ms": 0,
                "cooldown_ms": 0, "commit": {"client_setup_ms": 30.0},
                "workload": {"writers": {"count": 1, "commits": 60, "think_ms": 0},
                             "runtime": {"median_ms": R_MS, "sigma": 0, "min_ms": R_MS}}})
    rec = api_run(c, stream=False, engine=engine).records.sort_values("txn")
    assert len(rec) == 60 and (rec.outcome == "committed").all()
    for k, x in enumerate(rec.itertuples(), start=1):
        passes = 2 * (1 + (k - 2) * 0.25) if k > 1 else 0.0
        want = 30.0 + 1 + 1 + passes + R_MS + 1 + 1 + 3 + 1
        assert x.end_ms - x.arrival_ms == pytest.approx(want)
    assert np.allclose(rec.arrival_ms.to_numpy()[1:], rec.end_ms.to_numpy()[:-1])


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_writers_share_the_stores_queue(tmp_path, engine):
    """Two writers on one store: a pass sent while the other's is being served waits for it, so the store's
    GETs never overlap: with a long service time the writers' calls are slower than one writer's alone, and the
    two engines agree."""
    from sim.api import config, run as api_run
    prov = tmp_path / "slow.yaml"
    prov.write_text("name: slow\ndescription: 1 ms requests, 5 ms of the store per GET\nmin_latency_ms: 1\n"
                    "get: {median_ms: 1, sigma: 0}\nput: {base_ms: 1, ms_per_mib: 0, sigma: 0}\n"
                    "cas: {median_ms: 1, sigma: 0}\nget_service_ms: 5\n")
    data = {"design": "log", "storage": {"provider": str(prov)}, "duration_ms": 600_000, "warmup_ms": 0,
            "cooldown_ms": 0, "workload": {"writers": {"count": 1, "commits": 30, "think_ms": 0},
                                           "runtime": {"median_ms": 1, "sigma": 0, "min_ms": 1}}}
    one = api_run(config(data), stream=False, engine=engine).records
    data["workload"]["writers"]["count"] = 2
    two = api_run(config(data), stream=False, engine=engine).records
    lat = lambda r: (r.end_ms - r.arrival_ms)[r.outcome == "committed"].mean()   # noqa: E731
    assert lat(two) > 1.3 * lat(one)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_the_clients_time_per_entry_lengthens_each_pass(engine):
    """`commit.snapshot_entry_ms` e (delta-rs decoding each entry; `sim testbed`'s `pass_get_ms`): one closed-loop
    writer, every request 1 ms, no store queue: transaction k (a log of k - 1 entries) takes hint + LIST + two passes
    of 1 + (k - 1) e + runtime + LIST + put + post-commit (LIST, two passes of its one entry: 1 + e each) + cleanup
    LIST."""
    from sim.api import config, run as api_run
    e = 0.5
    data = {"design": "log", "storage": {"provider": "instant"}, "duration_ms": 60_000, "warmup_ms": 0,
            "cooldown_ms": 0, "commit": {"snapshot_entry_ms": e},
            "workload": {"writers": {"count": 1, "commits": 60, "think_ms": 0},
                         "runtime": {"median_ms": R_MS, "sigma": 0, "min_ms": R_MS}}}
    rec = api_run(config(data), stream=False, engine=engine).records.sort_values("txn")
    assert len(rec) == 60 and (rec.outcome == "committed").all()
    for k, x in enumerate(rec.itertuples(), start=1):
        passes = 2 * (1 + (k - 1) * e) if k > 1 else 0.0
        want = 1 + 1 + passes + R_MS + 1 + 1 + (1 + 2 * (1 + e)) + 1
        assert x.end_ms - x.arrival_ms == pytest.approx(want)
