"""More load never raises the success rate: a model property no single golden pins (a change that, say, let
contention lapse under heavy load would keep every digest test of light configs green).

For each configuration a ladder of loads (mean inter-arrival falling), REPS replications each, short runs of
short transactions (two simulated minutes) so the test takes seconds. Tolerance: for each adjacent pair, the mean
success at the higher load is at most the mean at the lower load plus the two loads' 95 % CI half-widths combined,
sqrt(h_lower^2 + h_higher^2), where h = t(0.975, REPS - 1) * sd / sqrt(REPS) over the replications."""
import math

import pytest
from scipy import stats

from sim import api

REPS = 4
BASE = {"duration_ms": 120_000, "warmup_ms": 20_000, "cooldown_ms": 20_000, "drain_limit_ms": 60_000,
        "workload.runtime.median_ms": 1000, "workload.runtime.sigma": 1.0, "workload.runtime.min_ms": 100,
        "workload.fast_append_ratio": 1.0}
# mean inter-arrival (ms), lightest load first; each ladder takes success from near 1 well down
LADDERS = {"s3": (400, 200, 100, 50, 25), "s3x": (200, 100, 50, 25, 15)}


def _success(provider: str, tables: int, mean_ms: float) -> tuple[float, float]:
    """Mean success over REPS replications and its 95 % CI half-width."""
    cfg = api.config(None, **BASE, **{"storage.provider": provider, "workload.num_tables": tables,
                                       "workload.inter_arrival.mean_ms": mean_ms})
    s = api.replicate(cfg, REPS)["success_rate"]
    return float(s.mean()), float(stats.t.ppf(0.975, REPS - 1) * s.std(ddof=1) / math.sqrt(REPS))


@pytest.mark.parametrize("tables", [1, 5])
@pytest.mark.parametrize("provider", sorted(LADDERS))
def test_more_load_never_raises_success(provider, tables):
    ladder = [(mean_ms, *_success(provider, tables, mean_ms)) for mean_ms in LADDERS[provider]]
    for (light_ms, light, h_light), (heavy_ms, heavy, h_heavy) in zip(ladder, ladder[1:]):
        assert heavy <= light + math.hypot(h_light, h_heavy), (
            f"{provider}, {tables} table(s): success {heavy:.4f} at {heavy_ms} ms > {light:.4f} at {light_ms} ms")
    assert ladder[-1][1] < ladder[0][1] - 0.02      # the ladder reaches contention: the check is not vacuous
