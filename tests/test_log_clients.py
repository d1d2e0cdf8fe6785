"""Delta clients on the log protocol (docs/MODEL.md, "Delta clients"): delta-rs's snapshot update inside an
attempt, snapshot reads on their own lanes, the checkpoint rebuild and the expired-log cleanup LIST; Delta Spark
(`design: log-spark`). Exact request counts per transaction and closed forms of their timing with constant
latencies (the `instant` provider: every request 1 ms, f = 0.5), and the numbers the presets resolve to."""
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


def _snapshot(v: int, ci: int, lanes: int) -> tuple[int, float]:
    """GETs and wall time (1 ms each) of a snapshot read of v entries: the newest checkpoint, then its tail."""
    newest = (v // ci) * ci
    return (newest > 0) + (v - newest), (newest > 0) + math.ceil((v - newest) / lanes)


def _post_commit(v: int, ci: int, lanes: int, at_start: int, every_commit: bool) -> dict:
    """LISTs, GETs, PUTs and wall time of the post-commit work after entry v: the checkpoint rebuilt (LIST,
    previous checkpoint, ci entries, checkpoint and _last_checkpoint PUTs) and the cleanup's LIST pages."""
    cp = v % ci == 0
    pages = math.ceil((at_start + v) / 1000) if every_commit or cp else 0
    gets = (v > ci) + ci if cp else 0
    ms = (1 + (v > ci) + math.ceil(ci / lanes) + 2 if cp else 0) + pages
    return {"lists": cp + pages, "gets": gets, "puts": 2 * cp, "ms": ms}


def _check_transactions(r, c, update: bool, every_commit: bool) -> int:
    """Each transaction's counts and times against the closed forms; the attempts that read new entries."""
    ci, lanes = c.commit.checkpoint_interval, c.commit.snapshot_max_parallel
    at_start = c.commit.log_entries_at_start
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
        snap_gets, snap_ms = _snapshot(v0, ci, lanes)
        n = preps.validated_to - preps.validated_from
        seen += int((n > 0).sum())
        post = {"lists": 0, "gets": 0, "puts": 0, "ms": 0.0}
        if x.outcome == "committed":
            ok = writes[writes.ok]
            post = _post_commit(int(ok.version[0]), ci, lanes, at_start, every_commit)
            assert x.end_ms - ok.time_ms[0] == pytest.approx(0.5 + post["ms"])
        assert x.lists == update * int((n > 0).sum()) + post["lists"]
        assert x.gets == snap_gets + (1 + update) * n.sum() + post["gets"]
        assert x.puts == post["puts"]
        # the base read: its LIST's effect, the snapshot and the runtime, then the first LIST's (or create's)
        ops = g[(g.kind == "read") | (g.kind == "cas")].time_ms
        if len(ops) > 1:
            assert ops[1] - ops[0] == pytest.approx(1.0 + snap_ms + R_MS)
        # each attempt: LIST effect -> create effect = 0.5 + n (serial checks) + [n > 0](LIST + ceil(n / lanes)) + 0.5
        for t, k in zip(preps.time_ms, n):
            nxt = writes[writes.time_ms > t].time_ms
            if len(nxt):
                want = 1.0 + k + (update and k > 0) * (1 + math.ceil(k / lanes))
                assert nxt[0] - t == pytest.approx(want)
    return seen


@pytest.mark.parametrize("lanes, at_start", [(1000, 0), (2, 2_500)])
def test_delta_rs_counts_and_timing_with_k_intervening_commits(lanes, at_start):
    """design log: every attempt that read k > 0 new entries LISTs again and reads the k again before its put;
    every commit rebuilds its checkpoint (every ci-th) and LISTs the whole log; all to the closed forms."""
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
    end - start = LIST + snapshot + runtime + [LIST, delta-rs] + put + post-commit."""
    one = {k: v for k, v in CONTENDED.items() if not k.startswith("workload.inter_arrival")}
    data = {"design": design}
    for path, value in {**one, "workload.num_tables": 1, "workload.writers.count": 1,
                        "workload.writers.think_ms": 0.0, "workload.writers.think": "constant"}.items():
        set_path(data, path, value)
    c = from_dict(data)
    rec = run(c).records.sort_values("txn")
    rec = rec[rec.outcome == "committed"]
    ci, spark = c.commit.checkpoint_interval, design == "log-spark"
    assert len(rec) > 100 and (rec.attempts == 1).all()
    for k, x in enumerate(rec.itertuples(), start=1):
        post = _post_commit(k, ci, 1000, 0, not spark)
        want = 1 + _snapshot(k - 1, ci, 1000)[1] + R_MS + (not spark) + 1 + post["ms"]
        assert x.end_ms - x.arrival_ms == pytest.approx(want)
        assert (x.catalog_reads, x.lists, x.puts) == (1 + (not spark), post["lists"], post["puts"])
    assert np.allclose(rec.arrival_ms.to_numpy()[1:], rec.end_ms.to_numpy()[:-1])


def test_presets_resolve_to_the_documented_numbers():
    """docs/MODEL.md "Delta clients" and docs/reference.md cite these; Spark's 10,000,000 attempts run."""
    rs = from_dict({"design": "log"})
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
                                                     "log_entries_at_start": 0}}
    assert config_hash(from_dict(plain)) == config_hash(from_dict(off))
    p, _ = params_of(from_dict({**plain, "io": {"max_parallel": 3}}), False)
    assert (p.snapshot_update, p.snapshot_max_parallel, p.checkpoint_rebuild, p.log_cleanup) == (False, 3, False, 0)


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
])
def test_log_switches_errors_name_the_key(data, path):
    with pytest.raises(ConfigError) as e:
        from_dict(data)
    assert e.value.path == path


@pytest.mark.parametrize("engine, interval", [("fast", 0), ("simpy", 0), ("fast", 100)])
def test_a_log_list_pages_over_the_entries_since_its_checkpoint(engine, interval):
    """A LIST at an effect point lists from the newest checkpoint: 1000 keys a page, the pages before the last
    read first. One closed-loop writer on a log with no checkpoint: past 1000 entries each of its two LISTs (the
    snapshot's and the attempt's) reads (v - 1) // 1000 pages more; with a checkpoint every 100 versions, none."""
    from sim.api import config, run
    cfg = config({"duration_ms": 1_300_000, "warmup_ms": 0, "cooldown_ms": 0, "design": "log",
                  "storage": {"provider": "instant"},
                  "commit": {"checkpoint_interval": interval, "log_cleanup": "none", "checkpoint_rebuild": False},
                  "workload": {"writers": {"count": 1, "think_ms": 1000},
                               "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}}})
    rec = run(cfg, stream=False, engine=engine).records
    v = rec["txn"].to_numpy()                        # one writer: transaction k starts on a log of k entries
    assert len(rec) > 1100 and (rec["attempts"] == 1).all()
    extra = 2 * (np.maximum(v - 1, 0) // 1000) if interval == 0 else 0 * v
    assert np.array_equal(rec["lists"].to_numpy(), extra)
