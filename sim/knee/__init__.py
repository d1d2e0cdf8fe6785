"""Knee search: the usable throughput of one configuration, estimated where its success curve crosses the threshold
instead of read off a load grid.

Definition. The knee is the highest offered rate r (arrivals/s; r = 1000 / the mean inter-arrival gap in ms)
at which the success rate, and for a mix (fast_append_ratio < 1) the VO success rate too, is at least the
threshold: the crossing of the mean success curve (the lower crossing over the checked metrics). Success is
committed / window transactions that began to commit (`points.trials`), per kind too: one still in its runtime
when the drain ends is left out, one that began to commit and had not ended is a failure (`run_success`). A knee
is reported as a value with a bounded CI, or as a status with its bound (`status`: `knee_text` words it the same
everywhere).

The writers knee: the most writers (`workload.writers.count`, closed loop or periodic) at which success is at
least the threshold. The same search moves the writer count (the level is N, the fit is in log N); the answer is
the fitted continuous crossing N* with its Fieller interval [lo, hi], and the knee floor(N*), the largest count
whose fitted success passes, with the CI [floor(lo), floor(hi)] (docs/knee.md#writers-knee).

The search, in the order a reader follows it:
- `spec`: what is asked for (`KneeSpec`, `parse_spec`); `param`: the parameter moved (the inter-arrival gap, or
  the writer count) and its load level;
- `search`: `KneeSearch`, the two phases in order and the answer (`result`, `trace`);
- `pilot`: phase 1, short runs walking to a bracket (locates the knee, never enters its CI or its fit);
- `full`: phase 2, independent full-length runs: their monotone bracket, the fit, the stop rules;
- `placement`: where each full-length run goes (walking, narrowing, the c-optimal design around the crossing);
- `fit`: the binomial regression over the full runs and its crossing's Fieller interval;
- `points`: a point (one level) and its runs' success; `stats`: the interval statistics;
- `grid`: the knee read off a grid sweep's runs by the same fit; `status`: how a knee is reported.

Coverage: on a synthetic curve with run noise and per-run shifts (2x the binomial sd) the 95 % CI covers the
true crossing in 94.3 % of 400 searches stopped at 8 full runs and 95.5 % with the adaptive stop (87 % if z
replaced t, 76 % with the binomial variance as it is); on a gcp-like cliff 89 % of 100
(`tests/test_knee.py` checks >= 90 % and >= 85 %). On 10 cells of 4c the brute-force crossing of a dense grid
lies inside the CI in 10 of 10 (and in 5 more cells checked the same way). Measured on 4c (docs/knee.md): 803
simulated hours (the 900-run grid: 900), median half-width 3.6 %, all 90 cells within 5 %.

Pure logic: a `KneeSearch` says which (point, replication) runs it needs next and is fed their summaries;
`sim.sweep.knee` executes them (any executor, cached in the results store).
"""
from .fit import Crossing, Fit, logistic_crossing
from .points import Point, run_success, success_interval
from .search import AT_KNEE, KneeSearch
from .param import LOAD_PARAMS, WRITERS_PARAM, load_param, mean_gap_per_unit, search_param
from .spec import SPEC, KneeSpec, parse_spec
from .stats import fieller, mean_ci95, regression_at, wilson

__all__ = ["AT_KNEE", "LOAD_PARAMS", "SPEC", "WRITERS_PARAM", "Crossing", "Fit", "KneeSearch", "KneeSpec", "Point",
           "fieller", "load_param", "logistic_crossing", "mean_ci95", "mean_gap_per_unit", "parse_spec",
           "regression_at", "run_success", "search_param", "success_interval", "wilson"]
