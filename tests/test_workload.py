"""Workload sources against their closed forms (tolerances stated per test)."""
import numpy as np
import pytest

from sim import config as C
from sim.workload import Bursty, TableChoice, inter_arrival_dist, runtime_dist


def _gaps(data, n=400_000, horizon=float("inf")):
    w = C.from_dict({"workload": data}).workload
    return inter_arrival_dist(w, horizon).draw(np.random.default_rng(11), n)


def test_exponential_mean():
    g = _gaps({"inter_arrival": {"distribution": "exponential", "mean_ms": 50}})
    assert g.mean() == pytest.approx(50, rel=0.01)     # standard error 0.16 %
    assert np.median(g) == pytest.approx(50 * np.log(2), rel=0.01)


def test_lognormal_median_is_the_scale():
    g = _gaps({"inter_arrival": {"distribution": "lognormal", "median_ms": 200, "sigma": 0.5}})
    assert np.median(g) == pytest.approx(200, rel=0.01)
    assert g.mean() == pytest.approx(200 * np.exp(0.125), rel=0.01)


def test_runtime_median_and_floor():
    w = C.from_dict({}).workload
    r = runtime_dist(w).draw(np.random.default_rng(2), 400_000)
    assert np.median(r) == pytest.approx(180_000, rel=0.01) and r.min() == 30_000
    # MODEL.md: "the seed's runs used median 180 s, whose mean is about 554 s" (the floor adds a little)
    assert r.mean() / 1000 == pytest.approx(554, rel=0.03)


def test_bursty_long_run_rate_and_aiming():
    """MMPP: quiet rate q = ((B+Q)/mean - B/burst_mean)/Q, so the long-run mean gap is `mean_ms`; the share of
    arrivals aimed at the burst table is B (1/burst_mean - q) / ((B+Q)/mean)."""
    mean, bm, B, Q = 200.0, 20.0, 5_000.0, 60_000.0
    b = Bursty(mean, bm, B, Q, horizon_ms=3.6e8, burst_table=1)   # 100 h: ~5,500 burst cycles
    g = b.draw(np.random.default_rng(1), 3_000_000)
    g = g[np.isfinite(g)]
    assert g.mean() == pytest.approx(mean, rel=0.02)
    q = ((B + Q) / mean - B / bm) / Q
    assert b.aimed.mean() == pytest.approx(B * (1 / bm - q) / ((B + Q) / mean), abs=0.01)
    # bursty gaps are far more variable than exponential ones (coefficient of variation > 1)
    assert g.std() / g.mean() > 1.5


def test_bursty_validation():
    with pytest.raises(C.ConfigError) as exc:
        C.from_dict({"workload": {"inter_arrival": {"distribution": "bursty", "mean_ms": 100, "burst_mean_ms": 10,
                                                    "burst_ms": 10_000, "quiet_ms": 1_000}}})
    assert exc.value.path == "workload.inter_arrival.burst_mean_ms"
    with pytest.raises(C.ConfigError) as exc:
        C.from_dict({"workload": {"num_tables": 2, "inter_arrival": {
            "distribution": "bursty", "mean_ms": 100, "burst_mean_ms": 10, "burst_ms": 1000, "quiet_ms": 60_000,
            "burst_table": 3}}})
    assert exc.value.path == "workload.inter_arrival.burst_table"


def test_zipf_probabilities():
    p = TableChoice(50, 1.5).probabilities()
    assert p[0] == pytest.approx(1 / sum(k ** -1.5 for k in range(1, 51))) and p.sum() == pytest.approx(1.0)
    assert p[1] / p[0] == pytest.approx(2 ** -1.5)
    # the seed: "the effective table count tops out at ~4.5 even with 50 physical tables" (1 / sum p^2 = 4.52)
    assert 1 / (p ** 2).sum() == pytest.approx(4.5, abs=0.1)
