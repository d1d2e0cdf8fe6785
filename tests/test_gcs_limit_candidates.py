"""benchmarks/calibration/gcs_limit_candidates.py's one-writer loop stands in for the model only where they agree: its token
bucket against the model's (`sim.run`, cas-bench-measured at one writer), and the limiters' own rules."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "calibration"
OPS = 20_000
TOLERANCE = 0.03   # the loop against the model, same mechanism, other random streams (both runs 20,000 operations)


@pytest.fixture(scope="module")
def candidates():
    sys.path.insert(0, str(BENCH))
    import gcs_limit_candidates
    import gcs_limit_fit
    yield gcs_limit_candidates, gcs_limit_fit
    sys.path.remove(str(BENCH))


def _provider_dir() -> Path:
    """Where the tests write their provider files: a fixed path, because the model's random streams are seeded by
    the config, which names the file (a fresh temporary directory made these comparisons vary run to run)."""
    where = Path(tempfile.gettempdir()) / "sim-test-gcs-limit"
    where.mkdir(exist_ok=True)
    return where


def test_the_loops_bucket_is_the_models(candidates):
    """One object, 1.9 writes/s, burst 20, gax's resends: mean, p95, p99, ops/s and 429s per operation within 3 %
    (the median is left out: the bucket's distribution has a gap there, and it moves by up to 20 % between seeds)."""
    loop, fit = candidates
    model = fit.figures(*fit.one_writer(fit.with_limit(1.9, 20.0, _provider_dir()), OPS))
    mine = loop.figures(loop.BUCKET, 1.9, 20.0, OPS, np.random.default_rng(1), run_ops=OPS)
    model["refused_per_op"] = model["throttled_per_op"]
    for key in ("mean_ms", "p95_ms", "p99_ms", "ops_per_s", "refused_per_op"):
        assert abs(mine[key] / model[key] - 1) <= TOLERANCE, (key, mine[key], model[key])


def test_refusals_count_only_where_the_mechanism_says(candidates):
    """At the same point, a bucket that goes into debt refuses more than the bucket, a burst of a whole run
    refuses nothing, and a server that holds writes refuses none but makes every operation wait."""
    loop, _ = candidates
    rng = lambda: np.random.default_rng(3)   # noqa: E731
    bucket = loop.figures(loop.BUCKET, 1.5, 5.0, 5000, rng())
    debt = loop.figures(loop.DEBT, 1.5, 5.0, 5000, rng())
    assert debt["refused_per_op"] > bucket["refused_per_op"] > 0.1 and debt["p99_ms"] > bucket["p99_ms"]
    whole_run = loop.figures(loop.DEBT, 1.5, float(loop.RUN_OPS), 5000, rng())
    assert whole_run["refused_per_op"] == 0.0 and whole_run["p99_ms"] < 400
    hold = loop.figures(loop.HOLD, 1.5, 1.0, 5000, rng())
    assert hold["refused_per_op"] == 0.0 and hold["median_ms"] > 1000 / 1.5 - 1


def test_the_loops_refusal_cost_is_the_models(candidates):
    """A bucket whose refusals take 2.25 tokens (gcs_refusal_fit.py's point: 3.15 /s, burst 6), one object, gax's
    resends: the loop's `debt` with that cost against the model's `mutation_refusal_tokens`. Mean, p95, ops/s and
    429s per operation within 3 %; the p99 within 8 % (over seeds the loop's moves from 6.76 to 7.28 s)."""
    loop, fit = candidates
    model = fit.figures(*fit.one_writer(fit.with_limit(3.15, 6.0, _provider_dir(), 2.25), OPS))
    mine = loop.figures(loop.DEBT, 3.15, 6.0, OPS, np.random.default_rng(1), run_ops=OPS, cost=2.25)
    model["refused_per_op"] = model["throttled_per_op"]
    for key, tolerance in (("mean_ms", TOLERANCE), ("p95_ms", TOLERANCE), ("ops_per_s", TOLERANCE),
                           ("refused_per_op", TOLERANCE), ("p99_ms", 0.08)):
        assert abs(mine[key] / model[key] - 1) <= tolerance, (key, mine[key], model[key])
    plain = loop.figures(loop.DEBT, 3.15, 6.0, OPS, np.random.default_rng(1), run_ops=OPS, cost=0.0)
    assert plain["refused_per_op"] < 0.7 * mine["refused_per_op"]    # no cost: 0.26 429s an op, not 0.44
