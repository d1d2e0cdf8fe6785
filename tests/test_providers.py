"""Each provider profile reproduces the seed's percentile tables (within 1 ms or 5 %)."""
import numpy as np
import pytest

from sim.latency import LogNormal
from sim.providers import load_provider

Q = (5, 10, 25, 50, 75, 90, 95, 99)
# seed 002, "GET Percentiles" and "PUT Percentiles"
GET = {"s3x": (1, 1, 2, 2, 4, 5, 6, 9), "s3": (10, 12, 18, 27, 41, 60, 75, 114),
       "azurex": (31, 32, 33, 35, 37, 39, 40, 42), "azure": (20, 20, 24, 38, 59, 89, 113, 176),
       "gcp": (122, 136, 163, 200, 245, 294, 328, 402)}
PUT = {"s3x": (4, 5, 6, 7, 8, 9, 10, 12), "s3": (37, 42, 50, 60, 73, 87, 97, 118),
       "azurex": (35, 36, 39, 41, 44, 47, 49, 52), "azure": (20, 24, 32, 45, 63, 86, 103, 145),
       "gcp": (122, 136, 164, 200, 245, 294, 328, 402)}
MANIFEST_LIST_BYTES = 10 * 1024


def _sampled(dist: LogNormal, n=400_000):
    return np.percentile(dist.draw(np.random.default_rng(7), n), Q)


def _assert_close(got, want, what):
    for q, g, w in zip(Q, got, want):
        assert abs(g - w) <= max(1.0, 0.05 * w), f"{what} p{q}: sampled {g:.2f} ms, seed table {w} ms"


@pytest.mark.parametrize("name", sorted(GET))
def test_get_percentiles_match_seed(name):
    p = load_provider(name)
    _assert_close(_sampled(LogNormal(p.get_median_ms, p.get_sigma, p.min_latency_ms)), GET[name], f"{name} GET")


@pytest.mark.parametrize("name", sorted(PUT))
def test_put_percentiles_match_seed(name):
    p = load_provider(name)
    dist = LogNormal(p.put_median_ms(MANIFEST_LIST_BYTES), p.put_sigma, p.min_latency_ms)
    _assert_close(_sampled(dist), PUT[name], f"{name} PUT")


# seed 002, "Provider summary": CAS median and sigma
CAS = {"s3x": (22, 0.22), "s3": (61, 0.14), "azurex": (64, 0.73), "azure": (93, 0.82), "gcp": (170, 0.91)}


@pytest.mark.parametrize("name", sorted(CAS))
def test_cas_profile_matches_seed(name):
    p = load_provider(name)
    median, sigma = CAS[name]
    assert (p.cas_median_ms, p.cas_sigma) == (median, sigma)
    got = np.median(LogNormal(p.cas_median_ms, p.cas_sigma, p.min_latency_ms).draw(np.random.default_rng(1), 200_000))
    assert abs(got - median) <= max(1.0, 0.05 * median)


def test_floor_is_a_clamp_and_the_analytic_mean_knows_it():
    d = LogNormal(27, 0.62, 10)
    x = d.draw(np.random.default_rng(3), 1_000_000)
    assert x.min() == 10.0 and (x == 10.0).mean() == pytest.approx(0.0547, abs=0.002)  # P(Z < ln(10/27)/0.62)
    assert x.mean() == pytest.approx(d.mean_ms(), rel=0.003)


def test_unknown_provider_is_an_error():
    from sim.providers import ProviderError
    with pytest.raises(ProviderError, match="unknown provider 'nope'"):
        load_provider("nope")


def test_lognormal_draws_use_libm_exp_on_every_machine():
    """A draw is max(median * exp(sigma * z), floor) with z numpy's standard normal and exp libm's scalar exp
    (Python's `math.exp`), bit for bit: numpy's own float64 exp is an AVX-512 kernel on CPUs that have it and
    libm elsewhere, and results (goldens included) must not depend on the machine."""
    import math
    dist = LogNormal(27.0, 0.8, 4.0)
    got = dist.draw(np.random.default_rng(11), 50_000)
    z = np.random.default_rng(11).standard_normal(50_000)
    want = np.array([max(27.0 * math.exp(0.8 * x), 4.0) for x in z.tolist()])
    assert got.tobytes() == want.tobytes()
