"""Long reads (sim/long_reads.py, docs/MODEL.md "Long reads"): a read of more than EXACT_MAX GETs, serial or one
GET a lane, is one draw from its tabulated law. Its law against the exact sum (or max) of its draws, within stated
tolerances; its GETs counted exactly; `io.long_reads: exact` the model before version 10, bit for bit."""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from sim import long_reads
from sim.config import from_dict
from sim.latency import LogNormal, latency_model
from sim.model import io
from sim.model.state import N_SRC, Src

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from long_reads import exact_sample, ks, ks_two, lanes_samples, table_law  # noqa: E402

SAMPLES = 50_000
# the KS distance the tabulated law may be from the exact one (the target), plus what a sample of SAMPLES
# exact reads may add by chance (the one-sample KS bound at 99.9 %, 1.95 / sqrt N); seeds are fixed
KS_TOLERANCE = 0.01 + 1.95 / SAMPLES ** 0.5
MEAN_TOLERANCE = 0.005    # the table's mean against n x the analytic mean, relative


def _get(provider: str, profile_set: str) -> LogNormal:
    return latency_model(from_dict({"storage": {"provider": provider, "profile_set": profile_set}})).get


# a broad GET (S3's seed figures, sigma 0.62) and a tight one with a fifth of its mass on its floor (S3 Express,
# measured: sigma 0.105, floor 1.29 ms at a median of 1.4 ms), the two shapes a table discretizes worst
PROFILES = [("s3", "seed"), ("s3x", "measured"), ("azure", "measured")]


@pytest.mark.parametrize("provider, profile_set", PROFILES)
@pytest.mark.parametrize("n", [33, 300])
def test_sum_law_is_the_exact_sums(provider, profile_set, n):
    dist = _get(provider, profile_set)
    law = table_law(dist, n, of_max=False)
    sample = exact_sample(dist, n, SAMPLES, np.random.default_rng(n), of_max=False)
    assert ks(law, sample) <= KS_TOLERANCE
    assert abs(law.mean() / (n * dist.mean_ms()) - 1.0) <= MEAN_TOLERANCE


@pytest.mark.parametrize("provider, profile_set", PROFILES)
@pytest.mark.parametrize("n", [33, 300])
def test_max_law_is_the_exact_maxima(provider, profile_set, n):
    dist = _get(provider, profile_set)
    law = table_law(dist, n, of_max=True)
    sample = exact_sample(dist, n, SAMPLES, np.random.default_rng(n + 1), of_max=True)
    assert ks(law, sample) <= KS_TOLERANCE
    assert abs(law.mean() / sample.mean() - 1.0) <= MEAN_TOLERANCE


# reads queued on fewer lanes than GETs: the greedy makespan drawn lane by lane (renewal processes) against the heap's
# (`lanes_ms`, the model before it): 1000 lanes as delta-rs's snapshot reads, 4 as a validation; S3 Express measured
# (tight, a fifth of its mass on its floor: ties; at 6000 GETs each lane's first 2 epochs are one sum)
# (the two longest reads in the slow set: the default run keeps one read of each kind)
LANES = [(1000, 1500, "s3x", "measured"), pytest.param(1000, 6000, "s3x", "measured", marks=pytest.mark.slow),
         pytest.param(1000, 3000, "s3", "seed", marks=pytest.mark.slow), (4, 400, "s3", "seed"),
         (4, 400, "s3x", "measured")]
LANE_SAMPLES = 4000
LANES_TOLERANCE = 0.01 + 1.95 * (2 / LANE_SAMPLES) ** 0.5   # two samples, each LANE_SAMPLES, 99.9 %


@pytest.mark.parametrize("k, n, provider, profile_set", LANES)
def test_lanes_makespan_is_the_heaps(k, n, provider, profile_set):
    dist = _get(provider, profile_set)
    renewal, heap = lanes_samples(dist, n, k, LANE_SAMPLES)
    assert ks_two(renewal, heap) <= LANES_TOLERANCE
    assert abs(renewal.mean() / heap.mean() - 1.0) <= MEAN_TOLERANCE


def test_sum_never_below_its_floor_and_normal_past_the_last_count():
    """Past the last tabulated count the standardized quantiles move towards the normal's: at a billion GETs the
    draw's median is n x the mean within a standard deviation's thousandth, and no draw is below n x the floor."""
    dist = _get("s3", "seed")
    law = table_law(dist, 10 ** 9, of_max=False)
    n = 10 ** 9
    sd = long_reads.table(dist)[1][long_reads.H_SD]
    assert abs(np.median(law) - n * dist.mean_ms()) < 1e-3 * sd * n ** 0.5 + 1e-6 * n * dist.mean_ms()
    assert law.min() >= n * dist.floor_ms


def _reads(dist, gets: int) -> SimpleNamespace:
    """The fields of a run's `Model` that a read takes: its table built, `gets` GET draws and uniforms queued."""
    counts, flat = long_reads.table(dist)
    draws = np.concatenate([dist.draw(np.random.default_rng(1), gets), np.random.default_rng(2).random(8)])
    at = np.zeros(N_SRC, dtype=np.int64)
    at[Src.LONG] = gets
    step = np.ones(N_SRC, dtype=np.int64)
    tx = [SimpleNamespace(gets=0, lists=0)]
    return SimpleNamespace(lr=flat.tolist(), lr_n=counts.tolist(), draws=draws.tolist(), draw_at=at.tolist(),
                           cur=[0] * N_SRC, step=step.tolist(), lanes=[0.0] * 8, lane_n=[0] * 8,
                           epochs=[0.0] * 64, tx=tx, p=SimpleNamespace(exact_reads=False))


@pytest.mark.parametrize("n, lanes, gets_drawn, long_drawn", [
    (long_reads.EXACT_MAX, 1, long_reads.EXACT_MAX, 0),   # the exact range: GET by GET
    (5000, 1, 0, 1),                                        # a long serial read: one draw
    (900, 1000, 0, 1),                                      # one GET a lane: one draw
    (40, 4, None, 0),                                       # queued on 4 lanes: lane by lane, GET by GET
])
def test_a_read_counts_its_gets_and_draws_what_it_says(n, lanes, gets_drawn, long_drawn):
    dist = _get("s3", "seed")
    m = _reads(dist, 5000)
    ms = io.gets_on_ms(m, 0, n, lanes)
    assert m.tx[0].gets == n
    if gets_drawn is None:   # each lane's epochs up to past the horizon: its GETs and at most 3 a lane more
        assert n <= m.cur[Src.GET] <= n + 3 * lanes and m.cur[Src.LONG] == long_drawn
    else:
        assert (m.cur[Src.GET], m.cur[Src.LONG]) == (gets_drawn, long_drawn)
    assert ms >= dist.floor_ms * (n if lanes == 1 else 1)


def test_a_long_list_counts_its_pages():
    m = _reads(_get("s3", "seed"), 64)
    io.list_ms(m, 0, 3000)
    assert (m.tx[0].lists, m.tx[0].gets, m.cur[Src.GET], m.cur[Src.LONG]) == (3000, 0, 0, 1)


# model version 9's pin of the smoke run smoke_02c280d8712687eb-r0 (tests/golden/digests.json before version 10),
# whose VOs validate about 200 snapshots a prepare
SMOKE = "smoke_02c280d8712687eb-r0"
SMOKE_V9 = {"records": "57bf186d327d7e01586c8e0a633c0d8ca7f4b5d3fd9f3ce91e88dbd8ad303257",
            "history": "63e85eecddf5ea885f80bd456c867fe275ebafbc0d363507bd4b5ce0e1d9452a",
            "summary": "f58e98f50913fa6f492f1d1815ed0bf27f4e909f5948180de2e05e87e41e7aae", "transactions": 6062}


def test_exact_reads_are_the_model_before_version_10():
    """`io.long_reads` is not seeded: `exact` draws the same streams GET by GET, so it gives version 9's results
    (every golden entry did, on the fast engine, when version 10 was pinned)."""
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here / "golden"))
    import json
    from make import compute
    g = json.loads((here / "golden" / "digests.json").read_text())[SMOKE]
    data = {**g["config"], "io": {**g["config"].get("io", {}), "long_reads": "exact"}}
    assert compute(SMOKE, data, g["replication"], "fast") == SMOKE_V9
    assert compute(SMOKE, g["config"], g["replication"], "fast")["records"] != SMOKE_V9["records"]


def test_a_table_is_the_same_bits_on_every_machine(tmp_path, monkeypatch):
    """A table is built from IEEE arithmetic, libm, scipy's scalar normal functions, exact sums and pocketfft,
    none of which depends on the CPU (numpy's own log and exp, and a BLAS dot, would): so runs with long reads are
    the same bits everywhere, whether their table was built or loaded. S3's seed GET, built afresh, as pinned."""
    monkeypatch.setenv("SIM_CACHE_DIR", str(tmp_path))
    counts, flat = long_reads.table.__wrapped__(LogNormal(27.0, 0.62, 10.0))
    digest = hashlib.sha256(counts.tobytes() + flat.tobytes()).hexdigest()
    assert digest == "16e219ff326e9c4c9750324e2b701e9ee48f8a8e810e409b8a8613cb658e0ff5"
    again = long_reads.table.__wrapped__(LogNormal(27.0, 0.62, 10.0))   # now from the file
    assert all((a == b).all() for a, b in zip(again, (counts, flat)))
