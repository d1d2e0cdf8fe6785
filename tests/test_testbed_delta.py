"""The delta-s3 stack's model (sim/testbed/stacks/delta_s3.py): one writer's calls cut into delta-rs's steps, the
store's time per GET from its passes, the profile and the config it gives. Synthetic proxy logs: no server."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sim.testbed.samples import Calibration
from sim.testbed.stacks import delta_s3

SETUP_MS, REQ_MS, RUNTIME_MS, SLOPE_MS, SERVER_MS = 40.0, 20.0, 30.0, 3.0, 2.0


def _call(k: int, t0: float, rng) -> tuple[list[dict], float]:
    """Writer 0's k-th call on a log of k + 1 entries: its requests (each REQ_MS plus a little noise; a pass of n
    GETs ends SLOPE_MS (n - 1) later) and its end."""
    rows, t = [], t0 + SETUP_MS / 2
    log = "/delta/t/_delta_log/"

    def req(kind, detail, ms, start=None):
        nonlocal t
        s = t if start is None else start
        rows.append({"server": "s3", "writer": 0, "kind": kind, "detail": detail, "status": "200",
                     "start_ms": s, "end_ms": s + ms, "latency_ms": ms, "server_ms": SERVER_MS})
        return s + ms
    ms = lambda: REQ_MS + rng.uniform(0, 2)   # noqa: E731
    t = req("get", f"GET {log}_last_checkpoint", ms()) + 1
    t = req("list", "GET /delta?list-type=2&prefix=t%2F_delta_log%2F", ms()) + 1
    for _ in range(2):                         # two passes over entries 0..k, the i-th served i x SLOPE_MS later
        t = max(req("get", f"GET {log}{i:020d}.json", ms() + SLOPE_MS * i, start=t) for i in range(k + 1)) + 1
    t = req("put", "PUT /delta/t/part-0.parquet", RUNTIME_MS - 1) + 1
    for kind, detail in (("list", "GET /delta?list-type=2"), ("cas", f"PUT {log}{k + 1:020d}.json"),
                         ("list", "GET /delta?list-type=2"), ("get", f"GET {log}{k + 1:020d}.json"),
                         ("get", f"GET {log}{k + 1:020d}.json"), ("list", "GET /delta?list-type=2")):
        t = req(kind, detail, ms()) + 1
    return rows, t - 1 + SETUP_MS / 2


def _frames(raw, requests) -> Calibration:
    from sim.testbed.samples import per_transaction
    return Calibration(raw, requests, per_transaction(requests, raw))


def _calibration(calls: int = 40) -> Calibration:
    rng = np.random.default_rng(7)
    rows, raw, t = [], [], 0.0
    for k in range(calls):
        reqs, end = _call(k, t, rng)
        rows += reqs
        raw.append({"writer": 0, "k": k, "table": 0, "arrival_ms": t, "end_ms": end, "committed": True})
        t = end + 5.0
    return _frames(pd.DataFrame(raw), pd.DataFrame(rows))


def test_one_writers_calls_are_cut_into_delta_rs_steps():
    """Every call: hint, LIST, two passes of its log's entries, the data PUT, the attempt's LIST, the put-if-absent,
    the post-commit LIST and two GETs of its entry, the cleanup LIST; each step's sample from the step before it."""
    cal = _calibration()
    st = delta_s3.steps(cal.per_txn[9])
    assert tuple(s["kind"] for s in st) == delta_s3.ONE_WRITER
    assert [s["gets"] for s in st if s["kind"] == "pass"] == [10, 10, 1, 1]
    s = delta_s3.step_samples(cal)
    assert len(s["cas"]) == 40 and len(s["get"]) == 5 * 40 and len(s["list"]) == 2 * 40
    assert np.median(s["setup"]) == pytest.approx(SETUP_MS, abs=0.01)
    assert np.median(s["runtime"]) == pytest.approx(RUNTIME_MS, abs=0.01)
    assert REQ_MS + 1 <= np.median(s["get"]) <= REQ_MS + 3      # a request and the client's 1 ms before it
    assert list(s["pass_gets"][:4]) == [1, 1, 2, 2]
    # the effect at the server: 1 ms of the client's, half of the rest of its way there, then the server's time
    lat = REQ_MS + 1.0                               # the requests' latencies' middle
    assert np.median(s["effect"]) == pytest.approx((1 + (lat - SERVER_MS) / 2 + SERVER_MS) / (1 + lat), abs=0.02)


def test_the_stores_time_per_get_is_the_slope_of_one_writers_passes():
    """The passes' time less the fitted GET's largest of n, against n - 1: SLOPE_MS back, within 10 %."""
    cal = _calibration()
    s = delta_s3.step_samples(cal)
    get = {"fixed_ms": REQ_MS + 1, "median_ms": 1.0, "sigma": 0.3}
    assert delta_s3.service_ms(get, s["pass_gets"], s["pass"]) == pytest.approx(SLOPE_MS, rel=0.1)
    assert delta_s3.expected_max_ms(get, 1) == pytest.approx(REQ_MS + 1 + np.exp(0.3 ** 2 / 2), rel=1e-3)


def test_the_profile_and_the_config_it_gives(tmp_path):
    """A provider of SeaweedFS as delta-rs meets it, where its requests take effect, the setup and the runtime; one
    writer's time a GET in a pass kept in the profile, not a store-wide queue; the config runs design log with
    delta-rs's retries or none, at that fraction."""
    pytest.importorskip("sim.calibrate")
    from sim import api
    from sim.testbed.cell import CellSpec
    from sim.testbed.proxy import Delay
    from sim.providers import load_provider
    prof = delta_s3.profile(_calibration(), tmp_path)
    p = load_provider(prof["provider"], "measured")
    assert p.cas_checked_at_completion is None and p.get_service_ms is None
    assert prof["pass_get_ms"] == pytest.approx(SLOPE_MS, rel=0.15)
    assert prof["client_setup_ms"] == pytest.approx(SETUP_MS, abs=0.01)
    assert 0.5 < prof["linearization_fraction"] < 0.6
    for retries, attempts in ((False, 1), (True, 16)):
        cfg = api.config(delta_s3.model_config(prof, CellSpec("delta-s3", 2, 5, Delay(5.0), retries)))
        assert (cfg.design, cfg.max_attempts, cfg.commit.client_setup_ms) == ("log", attempts, prof["client_setup_ms"])
        assert cfg.commit.snapshot_entry_ms == prof["pass_get_ms"]      # the client's own time per entry and pass
        assert cfg.catalog.linearization_fraction == prof["linearization_fraction"]
