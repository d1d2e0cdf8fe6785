"""A knee is a value with a bounded CI, or a status with its bound (sim.knee.status, docs/knee.md#reporting-a-knee),
for random grids (loads that never reach the knee, loads all past it, a cliff, one replication or three, a mix
whose VO has few transactions, transactions left out in their runtime) and for the knee search on random synthetic
curves: every row is `ok` with a finite 0 < low <= value <= high within the loads run, or a range status with its
bound, or `undecided` with its reason; every success value is in [0, 1]."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import special

from sim.config import from_dict
from sim.knee import KneeSearch, KneeSpec
from sim.knee.status import STATUSES, gain_text, knee_short_text, knee_text, read_crossing
from sim.report.aggregate import knee_table, tiers_table

THR = 0.95
WINDOW_S = 1800.0


def success_at(rate: float, knee: float, slope: float, floor: float) -> float:
    """A success curve that crosses THR at `knee` with logit slope `slope` in log rate, flat at `floor` far
    below the knee (a cliff when the slope is steep)."""
    p = special.expit(special.logit(THR) + slope * math.log(rate / knee))
    return min(p, floor)


@st.composite
def grids(draw):
    """A random grid's results table: loads, replications, a knee anywhere (below, inside, above the loads),
    slope, over-dispersion, a mix or not, a share of arrivals left out in their runtime."""
    n_loads = draw(st.integers(2, 9))
    lightest = draw(st.floats(0.05, 20.0))
    span = draw(st.floats(1.5, 300.0))
    rates = np.geomspace(lightest, lightest * span, n_loads)
    where = draw(st.sampled_from(["below", "inside", "above"]))
    knee = {"below": lightest / draw(st.floats(1.2, 10.0)), "above": rates[-1] * draw(st.floats(1.2, 10.0)),
            "inside": math.exp(draw(st.floats(math.log(lightest), math.log(rates[-1]))))}[where]
    slope = -draw(st.floats(0.5, 40.0))
    floor = draw(st.floats(0.97, 1.0))
    reps = draw(st.integers(1, 3))
    shift_sd = draw(st.sampled_from([0.0, 0.005, 0.03]))
    mix = draw(st.sampled_from([1.0, 0.9]))
    left_out = draw(st.sampled_from([0.0, 0.013]))
    seed = draw(st.integers(0, 2 ** 31))
    rng = np.random.default_rng(seed)
    rows = []
    for rate in rates:
        for rep in range(reps):
            s = min(1.0, max(0.0, success_at(rate, knee, slope, floor) + rng.normal(0, shift_sd)))
            n = max(int(rng.poisson(rate * WINDOW_S)), 1)
            began = n - int(round(left_out * n))
            vo_n = int(round((1 - mix) * n))
            vo_began = vo_n - int(round(left_out * vo_n))
            vo_s = min(1.0, max(0.0, s - (0.02 if mix < 1 else 0.0)))
            vo_k = int(rng.binomial(vo_began, vo_s)) if vo_began else 0
            k = vo_k + int(rng.binomial(began - vo_began, s))
            rows.append({"inter_arrival_ms": 1000.0 / rate, "fast_append_ratio": mix, "replication": rep,
                         "status": "ok", "arrived": n, "began_commit": began, "committed": k,
                         "vo_arrived": vo_n, "vo_began_commit": vo_began, "vo_committed": vo_k,
                         "success_rate": k / began, "vo_success_rate": vo_k / vo_began if vo_began else math.nan,
                         "offered_cps": n / WINDOW_S, "throughput_cps": k / WINDOW_S,
                         "commit_latency_mean_ms": 100.0 / max(s, 0.01), "commit_latency_p99_ms": 500.0})
    return pd.DataFrame(rows), where


def check_row(r, lightest: float, heaviest: float) -> None:
    """One knee row: a bounded knee within the loads run, or a range status with its bound, or undecided with its
    reason; success in [0, 1]."""
    status = r["knee_status"]
    assert status in STATUSES
    value = [r[f"knee_offered_cps{s}"] for s in ("", "_low", "_high")]
    tp = [r[f"knee_throughput_cps{s}"] for s in ("", "_low", "_high")]
    if status == "ok":
        v, lo, hi = value
        assert all(math.isfinite(x) for x in value + tp) and 0 < lo <= v <= hi
        assert lightest * (1 - 1e-9) <= lo and hi <= heaviest * (1 + 1e-9)      # never extrapolated
        assert 0 < tp[1] <= tp[0] <= tp[2] <= hi
        assert math.isnan(r["knee_bound_cps"]) and r["knee_reason"] == ""
        assert knee_text(r).endswith(" c/s") and "[" in knee_text(r)
    else:
        assert all(math.isnan(x) for x in value + tp)
        assert all(math.isnan(r[c]) for c in ("knee_success_rate", "knee_vo_success_rate", "latency_mean_ms"))
    if status in ("below_range", "above_range"):
        assert math.isfinite(r["knee_bound_cps"]) and r["knee_bound_cps"] > 0
        # a bound within the loads run: the lightest load's (the grid's end) or a CI end's within the loads run
        from_ci = bool(r["knee_reason"])
        assert r["knee_bound_cps"] <= (heaviest if from_ci or status == "above_range" else lightest) * (1 + 1e-9)
        assert not from_ci or ("ends past the heaviest" if status == "above_range" else "starts below the lightest") \
            in r["knee_reason"]
        sign = "<" if status == "below_range" else ">"
        assert knee_text(r).startswith(f"{status} ({sign} ") and knee_short_text(r).startswith(f"{sign} ")
    if status == "undecided":
        assert r["knee_reason"] and knee_text(r) == f"undecided ({r['knee_reason']})"
        assert knee_short_text(r) == "undecided"
    if status == "ok":
        assert knee_short_text(r) == knee_text(r)
    for c in ("knee_success_rate", "knee_vo_success_rate"):
        assert math.isnan(r[c]) or 0.0 <= r[c] <= 1.0


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grid=grids())
def test_every_grid_knee_is_bounded_or_says_why(grid):
    df, where = grid
    k = knee_table(df, [], "inter_arrival_ms").iloc[0]
    rates = df.groupby("inter_arrival_ms")["offered_cps"].mean()
    check_row(k, rates.min(), rates.max())
    if k["knee_status"] == "below_range" and not k["knee_reason"]:   # the lightest load failed: its trials/s
        # the lightest point is the one of least mean offered rate, as the grid knee orders them (with a few
        # arrivals a run, two neighbouring loads' measured rates can come out in the other order)
        light = df[df["inter_arrival_ms"] == rates.idxmin()]
        assert k["knee_bound_cps"] == pytest.approx(rates.min() * light["began_commit"].sum() / light["arrived"].sum())


def test_grids_that_never_reach_the_knee_or_start_past_it_are_range_statuses():
    """Loads all far below the knee pass: above_range; all far past it fail: below_range (no noise here)."""
    for where, want in (("above", "above_range"), ("below", "below_range")):
        rates = np.geomspace(1.0, 10.0, 5)
        knee = 100.0 if where == "above" else 0.1
        rows = [{"inter_arrival_ms": 1000.0 / r, "replication": 0, "status": "ok", "arrived": int(r * WINDOW_S),
                 "committed": int(success_at(r, knee, -6.0, 1.0) * int(r * WINDOW_S)), "offered_cps": r,
                 "throughput_cps": 0.0, "success_rate": success_at(r, knee, -6.0, 1.0)} for r in rates]
        k = knee_table(pd.DataFrame(rows), [], "inter_arrival_ms").iloc[0]
        assert k["knee_status"] == want
        check_row(k, 1.0, 10.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grid=grids(), more=grids())
def test_tiers_are_bounded_or_say_why(grid, more):
    """The tiers of two table counts: each side a knee row as above, the gain bounded or a status."""
    (a, _), (b, _) = grid, more
    df = pd.concat([a.assign(num_tables=1), b.assign(num_tables=50)], ignore_index=True)
    knees = knee_table(df, ["num_tables"], "inter_arrival_ms")
    t = tiers_table(knees, {"x": "num_tables", "hue": None, "facet": None}).iloc[0]
    for tag in ("single", "multi"):
        assert t[f"{tag}_knee_status"] in STATUSES
        assert knee_text(t, f"{tag}_") == knee_text(knees.iloc[0 if tag == "single" else 1])
    assert t["gain_status"] in STATUSES
    if t["gain_status"] == "ok":
        assert 0 < t["gain_low"] <= t["gain"] <= t["gain_high"] < math.inf
    elif t["gain_status"] != "undecided":
        assert 0 < t["gain_bound"] < math.inf
    assert gain_text(t).split(" ")[0] in ("undecided", "above_range", "below_range") or gain_text(t).endswith("]")


# ------------------------------------------------------------------------------------------- the knee search

def _summary(rate: float, rng, knee: float, slope: float, floor: float, sd: float) -> dict:
    s = min(1.0, max(0.0, success_at(rate, knee, slope, floor) + rng.normal(0, sd)))
    n = max(int(rate * WINDOW_S), 1)
    began = n - int(round(0.013 * n))
    c = int(rng.binomial(began, s))
    return {"arrived": n, "began_commit": began, "committed": c, "aborted": began - c, "success_rate": c / began,
            "throughput_cps": c / WINDOW_S, "offered_cps": rate, "commit_latency_mean_ms": 100.0,
            "commit_latency_p99_ms": 300.0}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(knee=st.floats(0.01, 500.0), slope=st.floats(0.5, 40.0), floor=st.floats(0.96, 1.0),
       sd=st.sampled_from([0.0, 0.01, 0.04]), seed=st.integers(0, 2 ** 31))
def test_every_search_knee_is_bounded_or_says_why(knee, slope, floor, sd, seed):
    """The search's record on a synthetic curve (the start bracket 20-5000 ms: 0.2-50 arrivals/s, pushed out
    twice): the knee as reported, as for the grid."""
    rng = np.random.default_rng(seed)
    search = KneeSearch(from_dict({}), KneeSpec(max_runs=16))
    while todo := search.pending():
        for point, _ in todo:
            search.feed(point, _summary(point.rate_cps, rng, knee, -slope, floor, sd))
    rec = search.result()
    levels = [p.load for p in search._points()]
    check_row({**rec, **{f"knee_offered_cps{s}": rec[f"offered_cps{s}"] if rec["knee_status"] == "ok" else math.nan
                         for s in ("", "_low", "_high")},
               "knee_success_rate": rec["success_rate"], "knee_vo_success_rate": rec["vo_success_rate"],
               "latency_mean_ms": math.nan if rec["knee_status"] != "ok" else 0.0},
              min(levels), max(levels))


@pytest.mark.parametrize("knee, low, high, want, bound, reason", [
    (10.0, 9.0, 11.0, "ok", math.nan, ""),
    # 4c's s3x, 5 tables, FA only: a CI ending past the heaviest load run reads as a bound from its low end
    (48.0, 45.1, 51.5, "above_range", 45.1,
     "its 95 % CI [45.1, 51.5] arrivals/s ends past the heaviest load run (50.3 arrivals/s)"),
    (3.0, 6.47e-13, 7.4, "below_range", 7.4,
     "its 95 % CI [6.47e-13, 7.4] arrivals/s starts below the lightest load run (0.203 arrivals/s)"),
    (52.0, 45.1, 60.0, "above_range", 45.1,        # the crossing past the loads, the low end within them
     "its 95 % CI [45.1, 60] arrivals/s ends past the heaviest load run (50.3 arrivals/s)"),
    (10.0, 0.1, 60.0, "undecided", math.nan,
     "its 95 % CI [0.1, 60] arrivals/s reaches past both ends of the loads run (0.203-50.3 arrivals/s)"),
    (55.0, 51.0, 60.0, "undecided", math.nan,      # wholly past the loads: its low end would be extrapolated
     "its 95 % CI [51, 60] arrivals/s lies outside the loads run (0.203-50.3 arrivals/s)"),
    (10.0, 0.0, 11.0, "undecided", math.nan, "its 95 % CI is unbounded"),
    (10.0, 9.0, math.inf, "undecided", math.nan, "its 95 % CI is unbounded"),
    (10.0, 11.0, 12.0, "undecided", math.nan, "its 95 % CI does not hold the crossing"),
    (math.nan, 0.0, math.inf, "undecided", math.nan, "the fitted success does not fall with load"),
])
def test_a_crossing_reads_as_a_knee_a_bound_within_the_loads_or_undecided(knee, low, high, want, bound, reason):
    r = read_crossing(knee, low, high, 0.203, 50.3)
    assert (r.status, r.reason) == (want, reason)
    assert r.bound == bound or (math.isnan(r.bound) and math.isnan(bound))


def test_a_bound_off_a_ci_is_in_commits_per_second_as_the_grids_ends_are():
    """Above range: threshold x the trials/s at the CI's low end; below range: the trials/s at its high end."""
    share = 0.9     # of arrivals, those that began to commit
    assert read_crossing(48.0, 45.1, 51.5, 0.203, 50.3).bound_cps(share, 0.95) == pytest.approx(0.95 * 45.1 * 0.9)
    assert read_crossing(3.0, 1e-3, 7.4, 0.203, 50.3).bound_cps(share, 0.95) == pytest.approx(7.4 * 0.9)
    assert math.isnan(read_crossing(10.0, 9.0, 11.0, 0.203, 50.3).bound_cps(share, 0.95))


def test_the_short_wording_leaves_the_why_out():
    ok = {"knee_status": "ok", "knee_throughput_cps": 21.46, "knee_throughput_cps_low": 21.2,
          "knee_throughput_cps_high": 21.74}
    assert knee_short_text(ok) == knee_text(ok) == "21.5 [21.2, 21.7] c/s"
    above = {"knee_status": "above_range", "knee_bound_cps": 60.84, "knee_reason": "its 95 % CI [..] ends past ...",
             "knee_command": "sim knee base.yaml --set storage.provider=s3x"}
    assert knee_short_text(above) == "> 60.8 c/s"
    assert knee_text(above) == "above_range (> 60.8 c/s); to bound it: sim knee base.yaml --set storage.provider=s3x"
    assert knee_short_text({"knee_status": "below_range", "knee_bound_cps": 0.2}) == "< 0.20 c/s"
    assert knee_short_text({"knee_status": "below_range"}) == "below range"          # no bound known
    undecided = {"knee_status": "undecided", "knee_reason": "its 95 % CI [6.47e-13, 7.4] arrivals/s reaches past "
                 "both ends of the loads run (0.213-49.7 arrivals/s)"}
    assert knee_short_text(undecided) == "undecided"
    writers = {"knee_status": "below_range", "unit": "writers", "knee_bound_writers": 1.0}
    assert knee_short_text(writers) == "< 1 writer" and knee_text(writers) == "below_range (< 1 writer)"
    assert knee_short_text({"knee_status": "ok", "unit": "writers", "writers": 32, "writers_low": 30,
                            "writers_high": 33}) == "32 [30, 33] writers"
