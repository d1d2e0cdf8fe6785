"""What only concurrency shows (docs/model/concurrent-writes.md; design cas_contended, `sim.model.contention`): S3
Express's late loser, Azure's busy answers resent on its client's schedule, an object that reads empty mid-write;
each mechanism's closed form with constant latencies, the one-writer figures as they were, the figures fitted on
several writers marked and switched off by `storage.concurrency_fit`."""
from __future__ import annotations

import os

import numpy as np
import pytest

from helpers import run_cli
from sim import api
from sim.checker import check_history
from sim.config import from_dict
from sim.engines import make_engine
from sim.model.designs import design_of_config
from sim.model.params import concurrency_fit_in, params_of, throttled_client
from sim.providers import load_provider
from sim.rules import checker_rules

H, G, W = 2.0, 3.0, 10.0          # constant HEAD, GET and conditional PUT (ms)


def _provider(tmp_path, measured_extra: str, name: str = "fixed") -> str:
    """A provider whose every request takes a constant time (sigma 0): HEAD H, GET G, conditional PUT W."""
    path = tmp_path / f"{name}.yaml"
    requests = (f"min_latency_ms: 0\nget: {{median_ms: {G}, sigma: 0}}\nput: {{base_ms: {W}, ms_per_mib: 0, sigma: 0}}"
                f"\ncas: {{median_ms: {W}, sigma: 0}}\n")
    indented = "".join(f"  {line}\n" for line in requests.splitlines())
    path.write_text(f"name: {name}\ndescription: constant latencies\n{requests}measured:\n  description: the same\n"
                    f"{indented}  head: {{median_ms: {H}, sigma: 0}}\n{measured_extra}")
    return str(path)


def _bench(provider: str, writers: int, duration_ms: float = 60_000.0, **storage) -> dict:
    """experiments/cas-bench-measured.yaml's configuration on `provider`."""
    return {"duration_ms": duration_ms, "warmup_ms": 0, "cooldown_ms": 0, "drain_limit_ms": duration_ms,
            "storage": {"provider": provider, "profile_set": "measured", **storage},
            "commit": {"shape": "object", "max_retries": 0},
            "workload": {"runtime": {"median_ms": 0, "sigma": 0, "min_ms": 0}, "writers": {"count": writers}}}


def _run(data: dict, engine: str = "fast"):
    cfg = from_dict(data)
    eng = make_engine(cfg, 0, True, engine).run()
    rec, hist = eng.records_frame(), eng.history_frame()
    rules = checker_rules(cfg, load_provider(cfg.storage.provider, cfg.storage.profile_set,
                                             cfg.storage.concurrency_fit))
    assert check_history(hist, **rules) == []
    return cfg, rec, hist


LATE = ("  cas_checked_at_completion: true\n  version_from_head: true\n"
        "  concurrency_fit: {source: a test, loser_answer_ms: 7}\n")


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_a_late_loser_is_answered_exactly_that_much_later(tmp_path, engine):
    """S3 Express's late 412 with constant latencies: every committed operation takes H + G + W, every failed one
    H + G + W + 7 ms, at every writer count; one writer never fails."""
    prov = _provider(tmp_path, LATE)
    for n in (1, 2, 4, 8):
        cfg, rec, _ = _run(_bench(prov, n, 10_000.0), engine)
        assert design_of_config(cfg) == "cas_contended"
        done = rec[rec["outcome"].isin(["committed", "aborted"])]
        took = (done["end_ms"] - done["arrival_ms"]).to_numpy()
        ok = (done["outcome"] == "committed").to_numpy()
        assert took[ok] == pytest.approx(H + G + W) and (n > 1) == (~ok).any()
        assert took[~ok] == pytest.approx(H + G + W + 7.0)


BUSY = "  concurrency_fit: {source: a test, busy_error_share: 1.0, busy_error_retry: azure_java}\n"


@pytest.mark.parametrize("engine", ["fast", "simpy"])
def test_a_busy_answer_is_resent_on_azures_schedule_exactly(tmp_path, engine):
    """A store that answers every write overlapped by another 5xx (share 1), two writers in step, constant
    latencies: each write is sent, answered 5xx at its answer (W), resent after 4, 12 and 28 s (RequestRetryOptions:
    (2^k - 1) x 4 s, no jitter) and given up at its fourth answer: every operation ends `throttled` after exactly
    H + G + 4 W + 44 s, with 3 resends; a lone writer is never answered 5xx."""
    prov = _provider(tmp_path, BUSY)
    cfg, rec, hist = _run(_bench(prov, 2, 100_000.0), engine)
    assert throttled_client(cfg).policy == "azure_java"
    done = rec[rec["outcome"] != "unfinished"]
    cycle = H + G + 4 * W + 44_000.0
    assert len(done) == 2 * int(np.ceil(100_000.0 / cycle)) and (done["reason"] == "throttled").all()
    assert (done["end_ms"] - done["arrival_ms"]).to_numpy() == pytest.approx(H + G + 4 * W + 44_000.0)
    assert (done["throttled"] == 4).all() and (done["attempts"] == 0).all()
    thr = hist[(hist["kind"] == "throttled") & (hist["txn"] == done["txn"].iloc[0])]
    sends = thr["time_ms"].to_numpy() - W / 2                  # each try's send: its check is halfway
    assert np.diff(sends) == pytest.approx([W + 4_000.0, W + 12_000.0, W + 28_000.0])
    _, rec, _ = _run(_bench(prov, 1, 2_000.0), engine)
    assert (rec["throttled"] == 0).all() and (rec["outcome"] == "committed").all()


EMPTY = "  upload_requests: 3\n"


def test_a_read_that_finds_the_object_empty_fails_the_operation_at_its_answer(tmp_path):
    """ADLS Gen2's upload of 3 requests: checked at its first's midpoint (W / 6), the object reads empty from a
    winner's check to its answer. Four writers, constant request latencies and a random runtime between the GET and the PUT (so that
    the writers fall out of step): an operation fails `empty_read` at its HEAD's answer (H) or its GET's (H + G),
    exactly, and that read's effect point (its midpoint) lies inside a committed write's window; operations whose
    reads find it whole take H + G + W and their runtime, as before."""
    prov = _provider(tmp_path, EMPTY)
    data = _bench(prov, 4, 20_000.0)
    data["workload"]["runtime"] = {"median_ms": 5.0, "sigma": 1.0, "min_ms": 0}
    _, rec, hist = _run(data)
    cas = hist[(hist["kind"] == "cas") & hist["ok"].astype(bool)]
    assert (cas["answer_ms"] - cas["time_ms"]).to_numpy() == pytest.approx(5 * W / 6)   # checked at W / 6
    windows = list(zip(cas["time_ms"], cas["answer_ms"]))
    empty = rec[rec["reason"] == "empty_read"]
    assert len(empty) > 10
    for _, r in empty.iterrows():
        took = r["end_ms"] - r["arrival_ms"]
        assert took == pytest.approx(H) or took == pytest.approx(H + G)
        read_at = r["arrival_ms"] + (H / 2 if took == pytest.approx(H) else H + G / 2)
        assert any(lo - 1e-9 <= read_at < hi + 1e-9 for lo, hi in windows), r["txn"]
    ok = rec[rec["outcome"] == "committed"]
    assert (ok["end_ms"] - ok["runtime_end_ms"]).to_numpy() == pytest.approx(W)   # its runtime ends after its GET


@pytest.mark.parametrize("name", ["s3x", "azure", "azurex", "gcp", "s3"])
def test_one_writer_runs_as_it_did(tmp_path, name):
    """At one writer no write meets another: a run on the provider as it is gives the same records (within float
    rounding: the write's send is an event of its own) as one on its file without its contention keys (design cas,
    today's model), and as one with `storage.concurrency_fit: false` (gcp: within 5 %, its client's bucket alone)."""
    import yaml
    from sim.providers import providers_dir
    data = yaml.safe_load((providers_dir() / f"{name}.yaml").read_text())
    for key in ("upload_requests", "concurrency_fit"):
        fit = data["measured"].pop(key, None)
        if key == "concurrency_fit" and fit and "mutation_rate_per_s" in fit:     # gcp: its object's bucket stays
            data["measured"].update(mutation_rate_per_s=fit["mutation_rate_per_s"],
                                    mutation_burst=fit["mutation_burst"])
    path = tmp_path / f"{name}.yaml"      # one path, so one config and the same random streams
    cols = ["outcome", "arrival_ms", "end_ms", "gets", "throttled"]
    runs = []
    for text, extra in ((yaml.safe_dump(data), {}), ((providers_dir() / f"{name}.yaml").read_text(), {}),
                        (None, {"concurrency_fit": False})):
        if text is not None:
            os.utime(path, ns=(1, 1)) if path.exists() else None
            path.write_text(text)          # a new mtime: the profile cache reads it again
        if name == "gcp":                  # the benchmark's client's resends (experiments/cas-bench-measured.yaml)
            extra = {**extra, "throttle_retry": {"policy": "gax"}}
        runs.append(api.run(_bench(str(path), 1, 300_000.0 if name == "gcp" else 20_000.0, **extra), 0,
                            stream=False).records)
    want = runs[0][cols]
    for k in (1, 2):
        got = runs[k][cols]
        if name == "gcp" and k == 2:      # without its object's bucket, which one writer meets now and then: its
            # client's bucket alone, fitted to the one writer (gcs_refusal_fit.md: 1.474 ops/s against 1.450)
            assert (got["outcome"] == "committed").sum() == pytest.approx((want["outcome"] == "committed").sum(),
                                                                          rel=0.05)
            continue
        assert len(got) == len(want) and (got["outcome"] == want["outcome"]).all()
        assert got[cols[1:]].to_numpy() == pytest.approx(want[cols[1:]].to_numpy(), abs=1e-6)


def test_the_figures_fitted_on_several_writers_are_marked_and_can_be_left_out():
    """Each provider's measured set says which figures rest on several writers (`concurrency_fit`); with
    `storage.concurrency_fit: false` the profile has none of them (gcp keeps each client's bucket alone), the seed
    set never has them, and a run says when it uses them."""
    for name, figure in (("s3x", "loser_answer_ms"), ("azure", "busy_error_share"), ("azurex", "busy_error_share"),
                         ("gcp", "mutation_rate_per_s")):
        on, off = load_provider(name, "measured"), load_provider(name, "measured", concurrency_fit=False)
        assert on.concurrency_fit and getattr(on, figure) and not off.concurrency_fit and not getattr(off, figure)
        assert not load_provider(name, "seed").concurrency_fit
        assert on.digest() != off.digest()
        cfg = from_dict(_bench(name, 4))
        assert concurrency_fit_in(cfg) == on.concurrency_fit
        assert concurrency_fit_in(from_dict(_bench(name, 4, concurrency_fit=False))) is None
        assert concurrency_fit_in(from_dict({**_bench(name, 4), "storage": {"provider": name,
                                                                             "profile_set": "seed"}})) is None
    assert load_provider("gcp", "measured", concurrency_fit=False).client_rate_per_s == 3.15
    assert concurrency_fit_in(from_dict(_bench("s3", 4))) is None
    p = params_of(from_dict(_bench("gcp", 1, concurrency_fit=False)), False)[0]
    assert p.throttle and p.mutation_rate_per_ms == 0.0 and p.client_rate_per_ms == pytest.approx(3.15e-3)
    for name in ("azure", "azurex", "s3x"):      # the seed set: today's design, bit for bit (tests/golden)
        assert design_of_config(from_dict({**_bench(name, 4), "storage": {"provider": name,
                                                                          "profile_set": "seed"}})) == "cas"


def test_sim_run_says_when_it_uses_figures_fitted_on_several_writers(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("duration_ms: 2000\nwarmup_ms: 0\ncooldown_ms: 0\nstorage: {provider: s3x}\n"
                   "commit: {shape: object, max_retries: 0}\n"
                   "workload: {writers: {count: 2}, runtime: {median_ms: 0, sigma: 0, min_ms: 0}}\n")
    r = run_cli("run", str(cfg))
    assert r.returncode == 0, r.stderr
    assert "this run uses figures fitted on several writers (s3x: a late 412" in r.stderr
    r = run_cli("run", str(cfg), "--set", "storage.concurrency_fit=false")
    assert r.returncode == 0 and "fitted on several writers" not in r.stderr
