"""The writers knee: the knee search moving `workload.writers.count` (sim.knee.param.WritersParam) on synthetic
success curves over the writer count, its integer answer (floor of the crossing, CI of floors), its censored
cases, its output; and end to end on the model (`sim knee`, a `knee:` sweep)."""
import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import optimize

from helpers import run_cli
from sim.config import ConfigError, from_dict
from sim.knee import WRITERS_PARAM, Crossing, Fit, KneeSearch, KneeSpec, parse_spec
from sim.report import write_report
from sim.sweep.knee import knee_json, run_knee_sweep, run_searches
from sim.sweep.spec import parse

PER_WRITER = 60          # window transactions of one writer in a full run (a 30 s cycle over 30 min)


def closed_loop(a: float, retries: int):
    """Success of N closed-loop writers on one table: an attempt conflicts when one of the N - 1 others committed
    during it, probability 1 - exp(-a (N - 1)); a transaction fails when all its retries + 1 attempts do."""
    return lambda n: 1 - (1 - math.exp(-a * (n - 1))) ** (retries + 1)


def crossing(curve, thr=0.95) -> float:
    return optimize.brentq(lambda n: curve(n) - thr, 1.0, 1e4)


CURVE = closed_loop(0.03, 2)          # crosses 0.95 at 16.3 writers
MANY = closed_loop(0.009, 2)          # 52.1
FEW = closed_loop(0.04, 1)            # 7.3


def _summary(n: int, success: float, rng) -> dict:
    arrived = PER_WRITER * n
    c = int(rng.binomial(arrived, min(1.0, max(0.0, success))))
    return {"success_rate": c / arrived, "arrived": arrived, "committed": c, "aborted": arrived - c,
            "throughput_cps": c / 1800, "offered_cps": arrived / 1800, "commit_latency_mean_ms": 100.0,
            "commit_latency_p99_ms": 300.0}


def _drive(search, rng, curve=CURVE, rep_sd=0.0, pilot=None):
    """Feed every run asked for: success by `curve` (pilot runs by `pilot`, default the same), each full run with
    its replication's shift (run-to-run noise beyond the binomial), arrivals proportional to the writers."""
    shifts = rng.normal(0, rep_sd, 1000)
    while (todo := search.pending()):
        for p, rep in todo:
            assert isinstance(p.value, int) and p.value >= 1 and p.load == p.value
            s = (pilot or curve)(p.value) if p.pilot else curve(p.value) + shifts[rep]
            search.feed(p, _summary(p.value, s, rng))
    return search.result()


def _search(**kw) -> KneeSearch:
    return KneeSearch(from_dict({}), KneeSpec(param=WRITERS_PARAM, **kw))


@pytest.mark.parametrize("seed", range(3))
def test_writers_search_finds_the_crossing_and_reports_an_integer_knee(seed):
    rec = _drive(_search(), np.random.default_rng(seed), rep_sd=0.004)
    true = crossing(CURVE)
    assert rec["status"] == "ok" and rec["param"] == WRITERS_PARAM and rec["unit"] == "writers"
    assert abs(rec["writers_crossing"] / true - 1) < 0.08
    assert rec["writers_crossing_low"] < rec["writers_crossing"] < rec["writers_crossing_high"]
    assert rec["writers"] == rec["value"] == math.floor(rec["writers_crossing"])
    assert (rec["writers_low"], rec["writers_high"]) == (math.floor(rec["writers_crossing_low"]),
                                                         math.floor(rec["writers_crossing_high"]))
    assert rec["success_rate"] >= 0.94          # fitted at the integer knee, at or below the crossing
    assert math.isnan(rec["offered_cps"]) and rec["measured_offered_cps"] > 0
    assert 4 <= rec["fit_runs"] <= rec["full_runs"] <= 24


@pytest.mark.parametrize("curve, fixed", [(CURVE, False), pytest.param(CURVE, True, marks=pytest.mark.slow),
                                          pytest.param(MANY, False, marks=pytest.mark.slow),
                                          pytest.param(FEW, False, marks=pytest.mark.slow)])
def test_writers_ci_covers_the_true_crossing(curve, fixed):
    """200 searches with binomial noise and per-run shifts (sd 0.004), the pilot seeing 1.5x fewer conflicts (a
    short run's bias): the crossing's 95 % CI must cover the true crossing in at least 90 % of them, and the
    integer CI [floor(lo), floor(hi)] the true integer knee (floor is monotone: at least as often). Measured:
    98.5 % / 99 % (adaptive / stopped at 8 full runs) on 16.3 writers, 97.5 % on 52.1, 95.5 % on 7.3. The default run
    holds the adaptive search on 16.3 writers; the other three curves are `slow` (~4 s each)."""
    rng = np.random.default_rng(7)
    true = crossing(curve)
    spec = {"halfwidth": 1e-4, "max_runs": 8} if fixed else {}
    recs = [_drive(_search(**spec), rng, curve, rep_sd=0.004, pilot=lambda n: curve(n / 1.5)) for _ in range(200)]
    assert all(r["status"] == "ok" for r in recs)
    covered = np.mean([r["writers_crossing_low"] <= true <= r["writers_crossing_high"] for r in recs])
    knee_covered = np.mean([r["writers_low"] <= math.floor(true) <= r["writers_high"] for r in recs])
    assert 0.90 <= covered <= knee_covered
    # and not by being wide: Fieller's interval is unbounded in at most 15 % (stopped at 8 runs: 12.5 %)
    assert np.mean([math.isfinite(r["writers_crossing_high"]) for r in recs]) >= 0.85
    assert np.median(np.nan_to_num([r["ci95_halfwidth_rel"] for r in recs], nan=np.inf)) < 0.1
    off = np.nan_to_num([abs(r["writers"] - math.floor(true)) for r in recs], nan=np.inf)   # NaN: no knee
    assert np.median(off) <= max(1, 0.03 * true)


def _at(crossing_n: float, low_n: float, high_n: float) -> dict:
    """The result of a writers search whose fit crossed at `crossing_n` writers with the CI [low_n, high_n]."""
    s = _search()
    runs = [(math.log(n), {"success_rate": 0.95, "throughput_cps": 1.0}) for n in (1, 2, 3, 4) * 2]
    cross = Crossing(math.log(crossing_n), math.log(low_n) if low_n > 0 else -math.inf, math.log(high_n), -3.0,
                     1.0, 100.0, sides=(4, 4))
    s.full.fit = Fit(math.log(crossing_n), runs, {"": cross})
    s.status = "ok"
    return s.result()


def test_the_writers_knee_is_the_floor_of_the_crossing_and_its_ci_the_floors_of_the_crossings_ci():
    rec = _at(7.6, 6.9, 8.2)
    assert rec["status"] == "ok"
    assert (rec["writers"], rec["writers_low"], rec["writers_high"]) == (7, 6, 8)
    assert rec["writers_crossing"] == pytest.approx(7.6) and rec["writers_crossing_low"] == pytest.approx(6.9)
    assert rec["value"] == 7
    rec = _at(3.0, 2.0, math.inf)                   # an unbounded Fieller side stays unbounded
    assert (rec["writers"], rec["writers_low"], rec["writers_high"]) == (3, 2, math.inf)
    rec = _at(0.8, 0.0, 1.3)                        # N* < 1: not even one writer meets the threshold
    assert rec["status"] == "below_range" and rec["writers"] == 0 and rec["writers_high"] == 1


def test_one_failing_writer_is_below_range_and_passing_most_writers_above_range():
    rng = np.random.default_rng(0)
    low = _drive(_search(), rng, curve=lambda n: 0.5)
    assert low["status"] == "below_range" and math.isnan(low["writers"])
    assert low["pilot_runs"] == 2 and low["full_runs"] == 0     # 1 and 64 failed: there is nothing below 1
    s = _search(start=(4, 16))
    assert _drive(s, rng, curve=lambda n: 0.5)["status"] == "below_range"
    assert sorted(p["writers"] for p in s.trace()) == [1, 4, 16]         # the fewest writers pushed to one
    s = _search(start=(4, 16), expansions=2)
    high = _drive(s, rng, curve=lambda n: 1.0)
    assert high["status"] == "above_range" and math.isnan(high["writers"])
    assert sorted(p["writers"] for p in s.trace() if p["phase"] == "pilot") == [4, 16, 32, 64]   # doubled twice
    assert [p["writers"] for p in s.trace() if p["phase"] != "pilot"] == [64]      # confirmed by one full run
    assert high["pilot_runs"] == 4 and high["full_runs"] == 1


def test_a_pilot_above_range_that_full_runs_fail_walks_down_to_the_knee():
    """Short pilot runs pass at every count (their window holds only the few transactions that began in it),
    full runs follow CURVE: the full run at the most writers fails, and the walk down finds the knee (16.3)."""
    rng = np.random.default_rng(2)
    s = _search(start=(1, 64), expansions=2)
    rec = _drive(s, rng, curve=CURVE, pilot=lambda n: 1.0)
    assert sorted(p["writers"] for p in s.trace() if p["phase"] == "pilot") == [1, 64, 128, 256]
    assert s.full.probes[0].value == 256 and not s.full.probes[0].passes(0.95)   # the first full run
    assert rec["status"] == "ok" and rec["writers_low"] <= 16 <= rec["writers_high"]


def test_full_runs_walk_out_of_range_is_censored():
    """The short pilot passes where full runs fail (or the reverse); the full-length walk stops at one writer
    (below_range) or at the most writers the search may try (start's end doubled `expansions` times)."""
    rng = np.random.default_rng(1)
    s = _search(start=(1, 8))
    low = _drive(s, rng, curve=lambda n: 0.6, pilot=CURVE)
    assert low["status"] == "below_range" and low["full_runs"] >= 1
    assert min(p["writers"] for p in s.trace() if p["phase"] != "pilot") == 1
    s = _search(start=(1, 8), expansions=1)
    high = _drive(s, rng, curve=lambda n: 1.0, pilot=FEW)
    assert high["status"] == "above_range"
    assert max(p["writers"] for p in s.trace()) == 16


def test_closed_loop_hive_on_gcp_pilot_above_range_is_checked_by_a_full_run(tmp_path):
    """Closed-loop hive writers on gcp (HMS at 10 ms): all start together and queue for HMS's lock for minutes, so
    a 10-min pilot's window holds only the few transactions that began in it, and every pilot count passes. The
    full run at the most writers (256) commits few of its transactions, and the search walks down to a knee."""
    cfg = from_dict({"design": "hive", "catalog": {"latency_ms": 10.0},
                     "storage": {"provider": "gcp", "profile_set": "seed"},      # the case found on the seed set
                     "duration_ms": 3_600_000, "warmup_ms": 600_000, "cooldown_ms": 600_000,
                     "workload": {"num_tables": 1, "writers": {"count": 1, "mode": "closed", "think_ms": 0.0},
                                  "runtime": {"median_ms": 2000, "sigma": 0.5, "min_ms": 0}}})
    s = KneeSearch(cfg, KneeSpec(param=WRITERS_PARAM, start=(1, 64), expansions=2))
    rec = run_searches([s], tmp_path, jobs=1).results[0]
    pilot = {p.value: p for p in s.pilot.points.values()}
    assert sorted(pilot) == [1, 64, 128, 256] and all(p.passes(0.95) for p in pilot.values())
    assert pilot[256].runs[0]["began_commit"] < 10                      # 256 writers, a handful of trials
    top = s.full.probes[0]
    assert top.value == 256 and top.runs[0]["began_commit"] > 500 and top.runs[0]["success_rate"] < 0.1
    assert rec["knee_status"] == "ok" and 1 <= rec["writers"] < 8


def test_writers_start_bracket_is_validated():
    with pytest.raises(ConfigError, match="knee.start"):
        _search(start=(1.5, 8.0))
    with pytest.raises(ConfigError, match="knee.start"):
        parse_spec({"param": WRITERS_PARAM, "start": [8, 2]})
    spec = parse_spec({"param": WRITERS_PARAM, "start": [2, 32]})
    s = KneeSearch(from_dict({}), spec)
    assert s.param.start == (2, 32) and s.param.most == 128
    assert sorted(p.value for p in s.pilot.points.values()) == [2, 32]


def test_writers_knee_json_names_the_parameter_and_unit():
    s = _search()
    rec = _drive(s, np.random.default_rng(2))
    k = knee_json(s, rec)["knee"]
    assert k["param"] == WRITERS_PARAM and k["unit"] == "writers"
    assert k["writers"] == rec["writers"] and k["writers_ci95"] == [rec["writers_low"], rec["writers_high"]]
    assert k["writers_crossing_ci95"] == [rec["writers_crossing_low"], rec["writers_crossing_high"]]
    assert all(isinstance(p["writers"], int) for p in knee_json(s, rec)["points"])
    # the load knee's record is as it was: no unit, no writers fields
    load = KneeSearch(from_dict({}), KneeSpec())
    assert not {"unit", "writers"} & set(load.result()) and load.param.path == "workload.inter_arrival.mean_ms"


# ------------------------------------------------------------------------------------------- on the model

#: closed-loop writers on one S3 table, one retry: the full runs' crossing is about 9.4 writers
#: (benchmarks/calibration/writers_knee_fit.md); runs of 30 simulated minutes take milliseconds
WRITERS = {"duration_ms": 1_800_000, "warmup_ms": 300_000, "cooldown_ms": 300_000, "drain_limit_ms": 600_000,
           "storage": {"provider": "s3"}, "commit": {"max_retries": 1},
           "workload": {"num_tables": 1, "runtime": {"median_ms": 5000, "sigma": 0.5, "min_ms": 1000},
                        "writers": {"count": 4, "mode": "closed", "think_ms": 2000, "think": "exponential",
                                    "start_spread_ms": 5000}}}


def test_a_config_with_writers_searches_its_writer_count():
    cfg = from_dict(WRITERS)
    s = KneeSearch(cfg, KneeSpec(pilot_fraction=0.25))
    assert s.param.path == WRITERS_PARAM and s.base.workload.writers.count == 4      # the config as given
    for p, _ in s.pending():
        c = s.config_of(p)
        assert c.workload.writers.count == p.value and c.duration_ms == cfg.duration_ms / 4
    with pytest.raises(ConfigError, match="knee.param"):
        KneeSearch(cfg, KneeSpec(param="workload.inter_arrival.mean_ms"))
    # an open-loop config searched by its writer count: default closed-loop writers replace its arrivals
    s = KneeSearch(from_dict({"workload": {"inter_arrival": {"mean_ms": 300}}}), KneeSpec(param=WRITERS_PARAM))
    assert s.base.workload.writers.count == 1 and s.config_of(s.pending()[-1][0]).workload.writers.count == 64


@pytest.mark.slow   # the knee CLI end to end runs by default in tests/test_knee.py
def test_writers_knee_cli_end_to_end(tmp_path):
    cfg = tmp_path / "writers.yaml"
    cfg.write_text(yaml.safe_dump(WRITERS))
    args = ("knee", cfg, "--json", "--start", "2,16", "--max-runs", "8", "--halfwidth", "0.3", "--jobs", "1",
            "--out", tmp_path / "k")
    r = run_cli(*args)           # 11-12 runs, about 5 s once the engine is compiled
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    k = out["knee"]
    assert k["status"] == "ok" and k["param"] == WRITERS_PARAM and k["unit"] == "writers"
    assert 4 <= k["writers"] == k["value"] == math.floor(k["writers_crossing"]) <= 16
    lo, hi = k["writers_crossing_ci95"]
    assert lo <= k["writers_crossing"] <= hi and k["writers_ci95"] == [math.floor(lo), math.floor(hi)]
    assert k["offered_cps"] is None and k["throughput_cps"]["value"] > 0
    assert all(isinstance(p["writers"], int) and 1 <= p["writers"] <= 64 for p in out["points"])
    again = json.loads(run_cli(*args).stdout)
    assert again["new_runs"] == 0 and again["knee"] == k       # every run came from the cache
    text = run_cli("knee", cfg, *args[3:])           # without --json: the line a user reads
    assert f"knee {k['knee_text']}; search ok: {k['writers']} writers (95 % CI {k['writers_ci95'][0]} .. " \
           f"{k['writers_ci95'][1]}; crossing {k['writers_crossing']:.2f}" in text.stdout
    assert k["knee_status"] == "ok" and k["knee_text"].endswith(" writers")


def test_writers_knee_sweep(tmp_path):
    data = {"name": "wk", "base": WRITERS, "grid": {"commit.max_retries": [1, 3]},
            "knee": {"start": [2, 16], "max_runs": 6, "halfwidth": 0.3}}
    sweep = parse(data)
    with pytest.raises(ConfigError, match="grid.workload.writers.count"):
        parse({**data, "grid": {WRITERS_PARAM: [2, 4]}})
    with pytest.raises(ConfigError, match="knee.start"):
        parse({**data, "knee": {"start": [2.5, 16]}})
    run_knee_sweep(sweep, sweep.knee, tmp_path / "out", jobs=1, log=None)
    knees = pd.read_parquet(tmp_path / "out" / "knees.parquet")
    assert list(knees["max_retries"]) == [1, 3] and set(knees["unit"]) == {"writers"}
    assert (knees["writers"] == np.floor(knees["writers_crossing"])).all()
    assert knees["writers"].iloc[1] > knees["writers"].iloc[0]       # more retries take more writers
    points = pd.read_parquet(tmp_path / "out" / "knee_points.parquet")
    assert "writers" in points.columns and "offered_cps" not in points.columns
    text = write_report(tmp_path / "out").read_text()
    report = pd.read_csv(tmp_path / "out" / "report" / "writers_knees.csv")      # the knees as read, per cell
    assert report["max_retries"].tolist() == [1, 3] and report["knee_status"].tolist() == ["ok", "ok"]
    for (_, k), label in zip(knees.iterrows(), report["knee_text"]):
        want = f"{k['writers']:.0f} [{k['writers_low']:.0f}, {k['writers_high']:.0f}] writers"
        assert label == want and want in text
    assert (report["most_writers"] >= report["writers_high"]).all()       # the most writers the search ran
    assert (tmp_path / "out" / "report" / "figures" / "writers_knee.png").is_file()


def test_periodic_writers_count_ticks_as_trials():
    """A periodic run's trials are its ticks: arrived / (1 - missed share); a tick merged into a later commit
    is a failure. Other runs are left as they are."""
    from sim.knee.points import run_success, with_ticks
    run = {"arrived": 30, "committed": 30, "missed_interval_share": 0.4}
    ticked = with_ticks(run)
    assert ticked["arrived"] == 50 and run_success(ticked, "") == 0.6
    for share in (math.nan, 0.0):
        same = {"arrived": 30, "committed": 29, "missed_interval_share": share}
        assert with_ticks(same) is same


def test_periodic_writers_knee_reports_success_over_ticks():
    """The success rate a writers knee gives at the knee is what its fit counts: per tick, not per commit (every
    commit of these runs succeeds, two in five ticks do not)."""
    from sim.knee.fit import logistic_crossing
    from sim.knee.points import trials, with_ticks
    run = with_ticks({"arrived": 30, "committed": 30, "began_commit": 30, "success_rate": 1.0, "vo_arrived": 0,
                      "vo_committed": 0, "vo_success_rate": math.nan, "missed_interval_share": 0.4})
    assert trials(run, "") == 50
    fit = Fit(0.0, [(0.0, run)], {"": logistic_crossing([0.0], [30], [trials(run, "")], 0.95)})
    assert fit.success_at("", 0.0) == 0.6                # one run: no fitted curve, its pooled success over ticks
    assert math.isnan(fit.success_at("vo_", 0.0))        # not a checked kind: undefined


def test_periodic_writers_pilot_spans_ten_intervals():
    """Short pilot runs of periodic writers hold at least PILOT_TICKS intervals in their window (a backlog of
    late ticks builds over intervals); closed loops keep the spec's pilot fraction."""
    from sim.knee.search import PILOT_TICKS
    base = {"duration_ms": 3_600_000, "warmup_ms": 600_000, "cooldown_ms": 600_000}
    for interval, want in ((60_000, PILOT_TICKS * 60_000 / 2_400_000), (300_000, 1.0), (1_000, 1 / 6)):
        cfg = from_dict({**base, "workload": {"writers": {"count": 2, "mode": "periodic", "interval_ms": interval}}})
        s = KneeSearch(cfg, KneeSpec(param=WRITERS_PARAM))
        assert math.isclose(s.pilot_base.duration_ms, cfg.duration_ms * want), interval
    closed = from_dict({**base, "workload": {"writers": {"count": 2}}})
    assert math.isclose(KneeSearch(closed, KneeSpec(param=WRITERS_PARAM)).pilot_base.duration_ms, 600_000)
