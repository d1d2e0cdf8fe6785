"""Storage clients' resend policies (docs/MODEL.md, "Storage clients' resend policies"): on a hand-made throttled
object, each client's sleeps, its count of resends and its deadline, and the transaction that ends `throttled`.

The case: writers that each own a table with its own object (catalog.scope table), constant latencies (a CAS takes 20 ms and takes effect at 10),
no work, one attempt; an object allows one write and then none for the rest of the run. So each writer's first
commit takes the token and its second commit's conditional write is answered 429 until its client gives it up:
the k-th 429's effect point comes 20 ms + the k-th sleep after the one before.
"""
from __future__ import annotations

import numpy as np
import pytest

from sim.checker import check_history
from sim.config import ConfigError, from_dict
from sim.providers import load_provider
from sim.rules import checker_rules
from sim.run import run

CAS_MS = 20.0
EFFECT_MS = CAS_MS / 2           # linearization fraction 0.5
EPS = 1e-6


def _case(tmp_path, resend: dict, writers: int = 12) -> dict:
    prov = tmp_path / "one_write.yaml"
    prov.write_text("name: one_write\ndescription: one write per object, then none\nmin_latency_ms: 1\n"
                    "get: {median_ms: 5, sigma: 0}\nput: {base_ms: 5, ms_per_mib: 0, sigma: 0}\n"
                    f"cas: {{median_ms: {CAS_MS}, sigma: 0}}\nmutation_rate_per_s: 1.0e-9\nmutation_burst: 1\n")
    return {"duration_ms": 3_600_000, "warmup_ms": 0, "cooldown_ms": 1_000, "drain_limit_ms": 0,
            "catalog": {"scope": "table"}, "storage": {"provider": str(prov), "throttle_retry": resend},
            "commit": {"shape": "object", "max_retries": 0},
            "workload": {"num_tables": writers, "runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0},
                         "writers": {"count": writers, "commits": 2, "tables": "owned"}}}


def _throttled_requests(data: dict, engine: str = "fast"):
    """Per throttled transaction: its 429s' effect times, its record, and the run (history checked clean)."""
    cfg = from_dict(data)
    r = run(cfg, 0, history=True, engine=engine)
    h = r.history
    assert check_history(h, **checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set))) == []
    out = []
    for txn, rows in h[h["kind"] == "throttled"].groupby("txn"):
        rec = r.records[r.records["txn"] == txn].iloc[0]
        out.append((rows["time_ms"].to_numpy(), rec))
    assert len(out) == data["workload"]["writers"]["count"]
    return out, r


def _sleeps(effects: np.ndarray) -> np.ndarray:
    """The sleep before each resend: the gap between two 429s' effect points less a CAS's latency."""
    return np.diff(effects) - CAS_MS


def _gave_up(effects, rec):
    """The request was given up at its last 429's answer: the transaction aborted `throttled`, no attempt used."""
    assert rec["outcome"] == "aborted" and rec["reason"] == "throttled"
    assert rec["attempts"] == 0 and rec["throttled"] == len(effects)
    assert rec["end_ms"] == pytest.approx(effects[-1] + EFFECT_MS, abs=EPS)


def test_object_store_defaults_ten_resends_decorrelated_jitter(tmp_path):
    """object_store: 100 ms first, then U(100 ms, 2 x the previous), capped at 15 s; the 11th 429 (10 resends)
    fails the request, well inside 3 min."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "object_store"}))
    for effects, rec in reqs:
        assert len(effects) == 11
        _gave_up(effects, rec)
        d = _sleeps(effects)
        assert d[0] == pytest.approx(100.0, abs=EPS)
        assert np.all(d[1:] >= 100.0 - EPS)
        assert np.all(d[1:] <= np.minimum(2 * d[:-1], 15_000.0) + EPS)
    later = np.concatenate([_sleeps(e)[1:] for e, _ in reqs])
    assert later.max() > 400.0          # drawn, not a fixed ladder


def test_object_store_deadline_counts_from_the_first_send(tmp_path):
    """A 429 answered more than deadline_ms after the request's first send fails it (no more resends)."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "object_store", "max_resends": 100,
                                                   "deadline_ms": 1_000, "max_ms": 100}))
    for effects, rec in reqs:
        sent = effects[0] - EFFECT_MS
        answers = effects + EFFECT_MS
        # sleeps are all 100 ms (capped): answers at 20, 140, 260, ... after the first send
        assert np.allclose(_sleeps(effects), 100.0)
        assert answers[-1] - sent > 1_000 and answers[-2] - sent <= 1_000
        _gave_up(effects, rec)


def test_google_java_deadline_caps_the_last_sleep(tmp_path):
    """Google's Java client: sleeps U[1, 2) s, then the previous x 2 x U[1, 2), capped at 32 s and at the time
    left; a sleep never passes the 50 s deadline, and the first 429 answered at or after it fails the request (the
    count of 5 resends comes later). That last resend goes out exactly at the deadline when the cap cut its sleep,
    or before it when its sleep ended less than a CAS's latency short of it (a seed found that case)."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "google_java"}))
    at_deadline = 0
    for effects, rec in reqs:
        _gave_up(effects, rec)
        sent = effects[0] - EFFECT_MS
        d = _sleeps(effects)
        assert 1_000.0 - EPS <= d[0] < 2_000.0
        grown = np.minimum(np.minimum(2 * d[:-1], 32_000.0), 50_000.0 - (effects[1:-1] + EFFECT_MS - sent))
        assert np.all(d[1:] >= grown - EPS)
        assert np.all(d[1:] < np.minimum(4 * d[:-1], 32_000.0) + EPS)
        sends, answers = effects - EFFECT_MS - sent, effects + EFFECT_MS - sent
        assert np.all(sends <= 50_000.0 + EPS)
        if len(effects) < 6:                      # the deadline, not the count, ended it
            assert answers[-1] >= 50_000.0 - EPS and answers[-2] < 50_000.0
            at_deadline += sends[-1] == pytest.approx(50_000.0, abs=EPS)
        else:
            assert answers[-2] < 50_000.0
    assert at_deadline > 0


def test_google_java_count_limit(tmp_path):
    """maxAttempts 6: the 6th 429 (5 resends) fails the request when the deadline is far."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "google_java", "deadline_ms": 1.0e9}))
    for effects, rec in reqs:
        assert len(effects) == 6
        _gave_up(effects, rec)


def test_gax_full_jitter_whole_ms_six_attempts(tmp_path):
    """gax (google-cloud-storage 2.4x, the benchmark's client): the k-th resend sleeps nextLong(delay_k), whole ms
    in [0, delay_k), delay_k = 1, 2, 4, 8, 16 s (the multiplier on the previous delay before jitter); their sum
    stays below 31 s, inside the 50 s total, so the 6th 429 (maxAttempts 6: 5 resends) fails every request."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "gax"}))
    for effects, rec in reqs:
        assert len(effects) == 6
        _gave_up(effects, rec)
        d = _sleeps(effects)
        assert np.allclose(d, np.round(d), atol=1e-6)
        assert np.all(d >= -EPS) and np.all(d < np.array([1_000.0, 2_000.0, 4_000.0, 8_000.0, 16_000.0]))
    late = np.concatenate([_sleeps(e)[2:] for e, _ in reqs])
    assert late.max() > 2_000.0 and min(_sleeps(e)[0] for e, _ in reqs) < 500.0   # drawn, from 0 up


def test_gax_total_timeout_counts_the_next_sleep(tmp_path):
    """gax's shouldRetry: no resend once the time since the first send plus the sleep drawn for it reaches the
    total timeout; every resend made had time left."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "gax", "deadline_ms": 2_500}))
    for effects, rec in reqs:
        _gave_up(effects, rec)
        sent = effects[0] - EFFECT_MS
        answers = effects + EFFECT_MS
        assert np.all(answers[:-1] - sent + _sleeps(effects) < 2_500.0)
    assert any(len(e) < 6 for e, _ in reqs)


def test_azure_java_three_resends_at_4_12_28_s(tmp_path):
    """Azure's Java v12 client (RequestRetryOptions' defaults): 4 tries, the k-th resend after (2^k - 1) x 4 s,
    no jitter: 4, 12 and 28 s; the 4th answer fails the request. Exactly."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "azure_java"}))
    for effects, rec in reqs:
        assert len(effects) == 4
        _gave_up(effects, rec)
        assert _sleeps(effects).tolist() == pytest.approx([4_000.0, 12_000.0, 28_000.0], abs=EPS)


def test_azure_java_cap(tmp_path):
    """maxRetryDelay caps the sleep (120 s by default): more tries reach it."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "azure_java", "max_resends": 6}, 2))
    for effects, rec in reqs:
        assert _sleeps(effects).tolist() == pytest.approx([4e3, 12e3, 28e3, 60e3, 120e3, 120e3], abs=EPS)


def test_limits_on_a_retry_policy_and_the_old_meaning(tmp_path):
    """A retry policy given as the resend policy keeps resending (the old meaning) unless a limit is given."""
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "fixed", "delay_ms": 500, "max_resends": 3}, 3))
    for effects, rec in reqs:
        assert len(effects) == 4
        assert np.allclose(_sleeps(effects), 500.0)
        _gave_up(effects, rec)
    reqs, _ = _throttled_requests(_case(tmp_path, {"policy": "exponential"}, 3))
    for effects, rec in reqs:
        assert len(effects) > 64 and rec["reason"] == "unfinished"


@pytest.mark.parametrize("resend", [{"policy": "object_store"}, {"policy": "google_java"}, {"policy": "gax"},
                                    {"policy": "azure_java"}])
def test_engines_identical(tmp_path, resend):
    a, ra = _throttled_requests(_case(tmp_path, resend, 4), "fast")
    b, rb = _throttled_requests(_case(tmp_path, resend, 4), "simpy")
    assert ra.records.equals(rb.records) and ra.history.equals(rb.history)


def test_designs_use_their_clients():
    log = from_dict({"design": "log"}).storage.throttle_retry
    assert (log.policy, log.base_ms, log.factor, log.max_ms, log.max_resends, log.deadline_ms) == \
        ("object_store", 100.0, 2.0, 15_000.0, 10, 180_000.0)
    fs = from_dict({"design": "fs-table"}).storage.throttle_retry
    assert fs == log    # iceberg-rust's FileCatalog runs object_store
    for design in (None, "file"):
        r = from_dict({"design": design} if design else {}).storage.throttle_retry
        assert (r.policy, r.base_ms, r.factor, r.max_ms, r.max_resends, r.deadline_ms) == \
            ("google_java", 1000.0, 2.0, 32_000.0, 5, 50_000.0)


def test_config_rules():
    with pytest.raises(ConfigError, match="storage.throttle_retry.jitter"):
        from_dict({"storage": {"throttle_retry": {"policy": "object_store", "jitter": 0.5}}})
    with pytest.raises(ConfigError, match="retry.table.policy"):
        from_dict({"retry": {"table": {"policy": "google_java"}}})
    with pytest.raises(ConfigError, match="retry.catalog.max_resends"):
        from_dict({"retry": {"catalog": {"policy": "immediate", "max_resends": 3}}})
    # an old config's own resend policy keeps its meaning: no limit
    old = from_dict({"storage": {"throttle_retry": {"policy": "exponential"}}}).storage.throttle_retry
    assert (old.base_ms, old.max_ms, old.jitter, old.max_resends, old.deadline_ms) == (1000.0, 32_000.0, 1.0,
                                                                                       None, None)


def _history(last_429: bool, reason: str = "throttled"):
    from test_checker import H
    h = H()
    h.begin(0, 1, 0, attempts=1)
    h.read(1, 1, 0, 0, 0)
    h.prepare(2, 1, 0, 0)
    if last_429:
        for t in (10, 20):
            h.add("throttled", t, txn=1, table=0, expected=0, ok=False, seq=0, version=0, answer_ms=t + 1)
    h.end(21, 1, 0, "aborted", 0, reason=reason)
    h.final(30, 0, 0, 0)
    return h.df()


def test_checker_accepts_a_throttled_abort_and_only_after_a_429():
    assert check_history(_history(True)) == []
    bad = check_history(_history(False))
    assert [v.invariant for v in bad] == [3] and "429" in bad[0].message
    odd = check_history(_history(True, reason="gave_up"))
    assert [v.invariant for v in odd] == [3] and "gave_up" in odd[0].message


def _debt_case(tmp_path, refusal_tokens: float, client: bool = False) -> dict:
    """Two writers on their own objects, a bucket of 1 write/s (burst 1) whose refusals take `refusal_tokens`,
    resends 500 ms apart: each writer's second commit finds the token its first took, and is refused until the
    bucket, refilled and drawn down by every refusal, holds one again. `client`: that bucket is each writer's own
    (`client_rate_per_s`), the objects' a bucket that never runs out."""
    limit = (f"mutation_rate_per_s: 1\nmutation_burst: 1\nmutation_refusal_tokens: {refusal_tokens}\n"
             if not client else "mutation_rate_per_s: 1000\nmutation_burst: 1000\nclient_rate_per_s: 1\n"
             f"client_burst: 1\nclient_refusal_tokens: {refusal_tokens}\n")
    prov = tmp_path / f"debt_{refusal_tokens:g}_{client}.yaml"
    prov.write_text("name: debt\ndescription: 1 write/s, refusals cost tokens\nmin_latency_ms: 1\n"
                    "get: {median_ms: 5, sigma: 0}\nput: {base_ms: 5, ms_per_mib: 0, sigma: 0}\n"
                    f"cas: {{median_ms: {CAS_MS}, sigma: 0}}\n" + limit)
    data = _case(tmp_path, {"policy": "fixed", "delay_ms": 500, "max_resends": 1000}, 2)
    data["storage"]["provider"] = str(prov)
    return data


@pytest.mark.parametrize("client", [False, True])
@pytest.mark.parametrize("refusal_tokens", [0, 0.25, 0.5])
def test_a_refusal_takes_its_tokens_exactly(tmp_path, refusal_tokens, client):
    """With constant latencies the 429s come 520 ms apart (the 500 ms sleep and the CAS's 20 ms); the bucket
    after k of them holds (time since the first commit's effect) x 1/s - k x refusal_tokens, so the write is
    accepted at the first effect where that reaches 1 token: the 3rd with no refusal cost, the 5th with 0.25, the
    50th with 0.5 (each refusal then takes back all but 0.02 of the 0.52 token a gap refills). The same whether
    the bucket is the object's or, the object's never running out, the writer's own. Both engines."""
    reqs, fast = _throttled_requests(_debt_case(tmp_path, refusal_tokens, client))
    _, ref = _throttled_requests(_debt_case(tmp_path, refusal_tokens, client), "simpy")
    assert fast.records.equals(ref.records) and fast.history.equals(ref.history)
    h = fast.history
    for effects, rec in reqs:
        assert rec["outcome"] == "committed"
        assert np.allclose(_sleeps(effects), 500.0)
        ok = h[(h["kind"] == "cas") & (h["txn"] != rec["txn"]) & (h["table"] == rec["table"])]["time_ms"]
        first, accepted = float(ok.iloc[0]), effects[-1] + 500.0 + CAS_MS
        assert h[(h["kind"] == "cas") & (h["txn"] == rec["txn"])]["time_ms"].tolist() == pytest.approx([accepted])
        level = [(e - first) / 1000.0 - k * refusal_tokens for k, e in enumerate(effects)]
        assert max(level) < 1.0 and (accepted - first) / 1000.0 - len(effects) * refusal_tokens >= 1.0
        assert len(effects) == {0: 2, 0.25: 4, 0.5: 49}[refusal_tokens]


def test_a_clients_refusals_are_its_own(tmp_path):
    """Writers on one object whose own buckets (1e-5 writes/s, burst 1) have a token for their first write
    only, the object's bucket never running out: each writer's first conditional write is accepted (or loses its
    CAS), and every later one is refused by its own bucket and given up; a transaction of open-loop arrivals is
    its own client, so every one's first write is accepted. Both engines; the checker clean."""
    prov = tmp_path / "clients.yaml"
    prov.write_text("name: clients\ndescription: one write per client\nmin_latency_ms: 1\n"
                    "get: {median_ms: 5, sigma: 0}\nput: {base_ms: 5, ms_per_mib: 0, sigma: 0}\n"
                    f"cas: {{median_ms: {CAS_MS}, sigma: 0}}\nmutation_rate_per_s: 1000\nmutation_burst: 1000\n"
                    "client_rate_per_s: 1.0e-5\nclient_burst: 1\n")
    base = {"duration_ms": 60_000, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": 0,
            "storage": {"provider": str(prov), "throttle_retry": {"policy": "fixed", "delay_ms": 100,
                                                                  "max_resends": 2}},
            "workload": {"runtime": {"median_ms": 50, "sigma": 0, "min_ms": 0}}}
    for workload in ({"writers": {"count": 5}}, {"inter_arrival": {"distribution": "constant", "mean_ms": 200}}):
        data = {**base, "workload": {**base["workload"], **workload}}
        cfg = from_dict(data)
        r, ref = run(cfg, 0, history=True), run(cfg, 0, history=True, engine="simpy")
        assert r.records.equals(ref.records) and r.history.equals(ref.history)
        assert check_history(r.history, **checker_rules(cfg, load_provider(str(prov), "measured"))) == []
        h, rec = r.history, r.records
        first = h[h["kind"].isin(["cas", "throttled"])].groupby("txn")["kind"].first()
        if "writers" in workload:   # txns 0-4: the writers' first transactions
            assert (first[first.index < 5] == "cas").all() and (first[first.index >= 5] == "throttled").all()
            later = rec[(rec["txn"] >= 5) & (rec["outcome"] != "unfinished")]   # (the run's end cuts 5 short)
            assert len(later) > 100 and (later["reason"] == "throttled").all() and (later["attempts"] == 0).all()
        else:
            assert len(first) > 100 and (first == "cas").all() and (rec["reason"] != "throttled").all()
