"""Commit requests whose answer is lost (docs/MODEL.md, "Unknown outcomes"; `faults`): each client's reaction from
its source, exactly, on both engines; the outcomes' classes against the history (the checker resolves them); the
config's rules; no fault, no change."""
from __future__ import annotations

import pytest

from helpers import run_both_checked
from sim.checker import check_history, outcomes_resolved
from sim.config import ConfigError, config_hash, from_dict
from sim.providers import load_provider
from sim.rules import checker_rules
from sim.run import run

TIMEOUT_MS = 30_000.0
SERVICE = {"catalog": {"latency_ms": 10}}


def _one_writer(design: str, lost: float = 0.0, error: float = 0.0, **faults) -> dict:
    """One closed-loop writer (no contention): every outcome is its client's reaction alone."""
    data = {"design": design, "duration_ms": 600_000, "warmup_ms": 60_000, "cooldown_ms": 60_000,
            "workload": {"writers": {"count": 1, "think_ms": 1000},
                         "runtime": {"median_ms": 500, "sigma": 0.0, "min_ms": 0}},
            "faults": {"commit": {"lost_answer": lost, "server_error": error}, **faults}}
    if design in ("rest", "rest-lakekeeper", "service-pointer"):
        data.update(SERVICE)
    return data


def _busy(design: str, lost: float, error: float, **extra) -> dict:
    """Open-loop arrivals on two tables, a third of them ValidatedOverwrites: faults among contention."""
    data = {"design": design, "duration_ms": 900_000, "warmup_ms": 60_000, "cooldown_ms": 60_000,
            "workload": {"inter_arrival": {"distribution": "exponential", "mean_ms": 400}, "num_tables": 2,
                         "fast_append_ratio": 0.7, "runtime": {"median_ms": 1000, "sigma": 0.5, "min_ms": 100}},
            "faults": {"commit": {"lost_answer": lost, "server_error": error}}}
    if design in ("rest", "rest-lakekeeper", "service-pointer"):
        data.update(SERVICE)
    for key, value in extra.items():
        data[key] = {**data.get(key, {}), **value}
    return data


def _rules(cfg) -> dict:
    return checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))


def _ended(records):
    return records[records["outcome"] != "unfinished"]


def _without_faults(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != "faults"}


def test_no_fault_keys_keep_the_config_hash():
    data = _busy("log", 0.0, 0.0)
    assert config_hash(from_dict(data)) == config_hash(from_dict(_without_faults(data)))
    assert run(from_dict(data), 0).records.equals(run(from_dict(_without_faults(data)), 0).records)


@pytest.mark.parametrize("design", ["service-pointer"])
def test_status_check_finds_a_lost_commit(design):
    """Iceberg's status check (Glue, HMS): after its timeout, one refresh (a catalog read and the metadata.json GET)
    finds the commit: committed, one request faulted, landed once, the answer 30 s late."""
    recs = _ended(run_both_checked(_one_writer(design, lost=1.0)))
    clean = _ended(run_both_checked(_without_faults(_one_writer(design))))
    assert len(recs) > 10 and (recs["outcome"] == "committed").all()
    assert (recs["faults"] == 1).all() and (recs["landed"] == 1).all()
    assert (recs["catalog_reads"] == clean["catalog_reads"].iloc[0] + 1).all()
    assert (recs["gets"] == clean["gets"].iloc[0] + 1).all()
    assert ((recs["end_ms"] - recs["runtime_end_ms"]) > TIMEOUT_MS).all()


def test_status_check_of_a_5xx_finds_nothing_and_orphans_the_attempt():
    """A 5xx before the commit took effect: the status check does not find it (non-strict: unknown); the client
    cleans nothing (not a CleanableFailure): the manifest list, metadata.json and the data stay."""
    recs = _ended(run_both_checked(_one_writer("service-pointer", error=1.0, data_files=3, data_bytes=3e8)))
    assert len(recs) > 10 and (recs["outcome"] == "unknown").all() and (recs["reason"] == "server_error").all()
    assert (recs["landed"] == 0).all() and (recs["attempts"] == 0).all()
    assert (recs["orphaned_files"] == 5).all()
    assert (recs["orphaned_bytes"] == 3e8 + 10 * 1024 + 100 * 1024).all()


def test_status_check_misses_a_commit_past_the_metadata_log():
    """The status check searches the current and the last previous-versions-max metadata files: with none kept
    (0), a commit that another landed on before the check is not found (unknown, yet landed); with 100, found."""
    base = _busy("service-pointer", 1.0, 0.0, workload={"fast_append_ratio": 1.0})
    kept = run(from_dict(base), 0).records
    none_kept = {**base, "metadata": {"growth": True, "metadata_log_max": 0}}
    short = run(from_dict(none_kept), 0).records
    landed_unknown = (short["outcome"] == "unknown") & (short["landed"] == 1)
    assert landed_unknown.sum() > 10
    assert not ((kept["outcome"] == "unknown") & (kept["landed"] == 1)).any()


def test_rest_timeout_is_unknown_and_a_5xx_is_reconciled():
    """Iceberg's REST client: a lost answer (a socket timeout: RESTException) ends unknown, unchecked, though the
    commit landed; a 5xx (CommitStateUnknown) is reconciled by one refresh (a load), which cannot find it."""
    lost = _ended(run_both_checked(_one_writer("rest", lost=1.0)))
    assert len(lost) > 10 and (lost["outcome"] == "unknown").all() and (lost["reason"] == "lost_answer").all()
    assert (lost["landed"] == 1).all()
    error = _ended(run_both_checked(_one_writer("rest", error=1.0)))
    clean = _ended(run_both_checked(_without_faults(_one_writer("rest"))))
    assert (error["outcome"] == "unknown").all() and (error["reason"] == "server_error").all()
    assert (error["landed"] == 0).all()
    # a clean commit's reads: the base, the refresh, the server's load and its re-read of the row; a 5xx's: the base,
    # the refresh, the server's load (which fails: 500) and the reconcile's refresh
    assert (clean["catalog_reads"] == 4).all() and (error["catalog_reads"] == 4).all()
    assert (error["puts"] == 1).all() and (clean["puts"] == 2).all()   # no metadata.json PUT by the server


def test_delta_rs_returns_the_error():
    """delta-rs: object_store does not resend a put-if-absent that timed out (not idempotent); the error goes to the
    caller: unknown, landed. A 5xx is resent (object_store retries every 5xx) until its limits: unknown, not landed."""
    lost = _ended(run_both_checked(_one_writer("log", lost=1.0)))
    assert len(lost) > 10 and (lost["outcome"] == "unknown").all() and (lost["landed"] == 1).all()
    assert (lost["attempts"] == 1).all()
    error = _ended(run_both_checked(_one_writer("log", error=1.0)))
    assert (error["outcome"] == "unknown").all() and (error["landed"] == 0).all()
    assert (error["faults"] == 11).all()       # the first send and object_store's 10 retries (max_retries)


@pytest.mark.parametrize("design", ["log-spark", "file"])
def test_every_answer_lost_the_resends_give_up(design):
    """Every answer lost: the storage client (Google's Java client, these designs' `storage.throttle_retry`) resends
    the write after its 30 s timeout, loses that answer too, and is past its 50 s deadline: the error goes to the
    caller. Unknown, landed once (the first send took effect), one attempt, two faulted requests; no duplicate can
    happen, since no resend is ever answered."""
    recs = _ended(run_both_checked(_one_writer(design, lost=1.0)))
    assert len(recs) > 5 and (recs["outcome"] == "unknown").all() and (recs["reason"] == "lost_answer").all()
    assert (recs["landed"] == 1).all() and (recs["attempts"] == 1).all() and (recs["faults"] == 2).all()


@pytest.mark.parametrize("design", ["log-spark", "file"])
def test_a_resend_that_finds_its_own_commit(design):
    """Delta Spark (and boring-catalog's storage client) resend a conditional write whose answer was lost; the resend
    finds the commit there and fails as a conflict: a blind append commits again (duplicated), a
    ValidatedOverwrite conflicts with its own (unknown, self_conflict). Both engines alike, the checker clean, and
    it resolves each such outcome as the records say."""
    data = _busy(design, 0.3, 0.0)
    cfg = from_dict(data)
    fast, ref = run(cfg, 0, history=True), run(cfg, 0, history=True, engine="simpy")
    assert fast.records.equals(ref.records)
    assert check_history(fast.history, **_rules(cfg)) == []
    recs = fast.records.set_index("txn")
    dup = recs[recs["outcome"] == "duplicated"]
    assert len(dup) > 10 and (dup["op"] == "fa").all() and (dup["landed"] >= 2).all() and (dup["faults"] >= 1).all()
    selfc = recs[recs["reason"] == "self_conflict"]
    assert len(selfc) > 0 and (selfc["op"] == "vo").all() and (selfc["landed"] == 1).all()
    resolved = outcomes_resolved(fast.history).set_index("txn")
    assert (resolved["landed"] == recs.loc[resolved.index, "landed"]).all()
    assert set(resolved.index) == set(recs.index[recs["outcome"].isin(["unknown", "duplicated"])])
    assert (resolved.loc[dup.index, "resolved"] != "committed").all()


def test_delta_spark_idempotency_check_takes_its_own_entry():
    """`commit.idempotencyCheck.enabled` (the same arrivals and draws: the key is not seeded): no duplicate; the
    appends that met their own entry commit once instead (committed, faulted, landed once: many more than without)."""
    data = _busy("log-spark", 0.3, 0.0)
    off = run(from_dict(data), 0).records
    on = run_both_checked({**data, "faults": {**data["faults"], "idempotency_check": True}})
    assert (off["outcome"] == "duplicated").sum() > 10 and (on["outcome"] != "duplicated").all()
    once = lambda r: ((r["outcome"] == "committed") & (r["faults"] > 0) & (r["landed"] == 1)).sum()   # noqa: E731
    assert once(on) > once(off) + 0.8 * (off["outcome"] == "duplicated").sum()


@pytest.mark.parametrize("design", ["file", "service-pointer", "rest", "log", "log-spark"])
def test_faults_among_contention_both_engines_checked(design):
    """Lost answers and 5xx among contention: both engines equal, the checker clean, every fault counted once (a
    record's `faults` sums its history rows), and outcomes that hide their truth resolved from the history."""
    data = _busy(design, 0.05, 0.05)
    cfg = from_dict(data)
    res = run(cfg, 0, history=True)
    assert res.records.equals(run(cfg, 0, history=True, engine="simpy").records)
    assert check_history(res.history, **_rules(cfg)) == []
    rows = res.history[res.history["kind"] == "fault"].groupby("txn").size()
    recs = res.records.set_index("txn")
    assert (recs.loc[rows.index, "faults"] == rows).all() and recs["faults"].sum() == rows.sum() > 0
    s = res.summary
    window = recs[recs["in_window"]]
    assert s["unknown"] == (window["outcome"] == "unknown").sum()
    assert s["duplicated"] == (window["outcome"] == "duplicated").sum()
    assert s["success_rate_finished"] <= 1.0


@pytest.mark.parametrize("data, key, text", [
    ({"design": "hive", "catalog": {"latency_ms": 10}, "faults": {"commit": {"lost_answer": 0.1}}},
     "faults.commit", "not modelled for a locked commit"),
    ({"design": "log", "faults": {"commit": {"lost_answer": 0.6, "server_error": 0.5}}},
     "faults.commit.server_error", "above 1"),
    ({"design": "log", "faults": {"timeout_ms": 5000}}, "faults.timeout_ms", "not used unless"),
    ({"design": "log", "faults": {"commit": {"lost_answer": 0.1}, "idempotency_check": True}},
     "faults.idempotency_check", "Delta Spark's"),
    ({"design": "rest", "catalog": {"latency_ms": 10}, "faults": {"commit": {"lost_answer": 0.1},
                                                                  "client": "resend"}},
     "faults.client", "reconcile, error"),
])
def test_config_rules(data, key, text):
    with pytest.raises(ConfigError) as err:
        from_dict(data)
    assert err.value.path == key and text in str(err.value)


def test_each_design_names_its_client():
    for design, client in (("file", "resend"), ("service-pointer", "status_check"), ("rest", "reconcile"),
                           ("log", "error"), ("log-spark", "resend")):
        data = _one_writer(design, lost=0.01)
        assert from_dict(data).faults.client == client
