"""A trace's headroom (docs/knee.md, "Headroom"): the knee over workload.trace.rate_scale.

The closed form: a Poisson trace replayed k times faster is a Poisson process at k times its rate (commit times
less iid runtimes are Poisson again, and every arrival is divided by k), so its headroom, in arrivals/s, is the
open loop's knee at the same configuration: the two searches must agree within their 95 % CIs. Then the per-table
logic on synthetic summaries: the table that breaks first binds, the others are read off the same runs."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sim import api
from sim.config import from_dict
from sim.knee import KneeSearch, KneeSpec
from sim.knee.headroom import MIN_TABLE_COMMITS, checked_tables, prefix
from sim.knee.param import SCALE_PARAM, ScaleParam
from sim.trace import write_trace

RUN = {"duration_ms": 1_500_000, "warmup_ms": 150_000, "cooldown_ms": 150_000, "drain_limit_ms": 300_000}
RUNTIME = {"median_ms": 2_000, "sigma": 0.5, "min_ms": 200}


def _poisson(path, rate_cps: float, duration_ms: float, tables=("a",), p=None, seed=7) -> None:
    rng = np.random.default_rng(seed)
    n = rng.poisson(rate_cps * duration_ms / 1000)
    write_trace(pd.DataFrame({"time_ms": 1.7e12 + np.sort(rng.uniform(0, duration_ms, n)),
                              "table": rng.choice(list(tables), n, p=p), "operation": "append"}), path)


def test_a_poisson_traces_headroom_is_the_open_loops_knee(tmp_path):
    _poisson(tmp_path / "p.parquet", 1.0, RUN["duration_ms"])
    trace = api.headroom({**RUN, "workload": {"trace": {"path": str(tmp_path / "p.parquet"), "start_ms": 1.7e12},
                                              "runtime": RUNTIME}}, tmp_path / "trace", jobs=1)
    open_loop = api.knee({**RUN, "workload": {"inter_arrival": {"mean_ms": 1000}, "runtime": RUNTIME}},
                         tmp_path / "open", jobs=1)
    doc, tables = trace
    t, o = doc["knee"], open_loop["knee"]
    assert t["knee_status"] == o["knee_status"] == "ok", (t, o)
    (tl, th), (ol, oh) = t["offered_cps_ci95"], o["offered_cps_ci95"]
    assert tl <= o["offered_cps"] <= th and ol <= t["offered_cps"] <= oh, (t["offered_cps_ci95"], o["offered_cps"],
                                                                           o["offered_cps_ci95"], t["offered_cps"])
    assert t["param"] == SCALE_PARAM and math.isclose(t["rate_scale"] * t["base_cps"], t["offered_cps"])
    assert t["rate_scale_ci95"][0] <= t["rate_scale"] <= t["rate_scale_ci95"][1]
    assert list(tables["table"]) == ["(all tables)", "a"] and tables["checked"].all()
    assert tables.loc[1, "k_status"] == "ok"


def _trace_config(tmp_path, shares=(0.6, 0.3, 0.1)) -> object:
    _poisson(tmp_path / "t.parquet", 2.0, 3_600_000, tables=("a", "b", "c"), p=list(shares))
    return from_dict({"warmup_ms": 600_000, "cooldown_ms": 600_000,
                      "workload": {"trace": {"path": str(tmp_path / "t.parquet")}, "runtime": RUNTIME}})


def test_tables_with_too_few_commits_are_not_checked(tmp_path):
    cfg = _trace_config(tmp_path, shares=(0.6, 0.395, 0.005))
    assert checked_tables(cfg) == (prefix(1), prefix(2))     # c: ~29 commits in the window, under the floor
    assert MIN_TABLE_COMMITS > 29


def _summary(k: float, knees: dict, rng, n_per_k: float) -> tuple[dict, list[dict]]:
    """A run at k: table t's success 1 / (1 + (k / knee_t)^4 (1/0.95 - 1)) (crossing 0.95 at its knee)."""
    rows, arrived, committed = [], 0, 0
    for rank, (share, knee) in enumerate(knees.items(), 1):
        n = int(rng.poisson(n_per_k * k * share))
        success = 1 / (1 + (k / knee) ** 4 * (1 / 0.95 - 1))
        c = int(rng.binomial(n, success))
        rows.append({"table_rank": rank, "arrived": n, "began_commit": n, "committed": c, "trace_waiting": 0})
        arrived, committed = arrived + n, committed + c
    return ({"arrived": arrived, "began_commit": arrived, "committed": committed, "trace_waiting": 0,
             "success_rate": committed / arrived}, rows)


def test_the_first_table_to_break_binds(tmp_path):
    """Table b (a third of the commits) crosses at k = 3, a (most of them) at 5, c never within the loads: the
    headroom is b's 3 [CI], b binds, a reads about 5 off the same runs, c passes everywhere (above range)."""
    cfg = _trace_config(tmp_path)
    s = KneeSearch(cfg, KneeSpec())
    assert isinstance(s.param, ScaleParam) and s.check == ("", prefix(1), prefix(2), prefix(3))
    rng = np.random.default_rng(11)
    knees = {0.6: 5.0, 0.3: 3.0, 0.1: 400.0}
    for _ in range(400):
        need = s.pending()
        if not need:
            break
        for point, _rep in need:
            summary, per_table = _summary(point.value, knees, rng, 3000.0)
            s.feed(point, s.summary_of({"summary": summary, "per_table": per_table}))
    rec = s.result()
    assert rec["knee_status"] == "ok" and rec["binding_table"] == "b", rec
    assert rec["rate_scale_low"] <= 3.0 <= rec["rate_scale_high"]
    rows = {r["table"]: r for r in s.headroom()}
    assert rows["a"]["k_status"] in ("ok", "above_range")
    if rows["a"]["k_status"] == "ok":
        assert rows["a"]["k_low"] <= 5.0 <= rows["a"]["k_high"] * 1.05
    assert rows["c"]["k_status"] == "above_range" and rows["c"]["k_bound"] > 3.0
    assert rows["(all tables)"]["checked"]


@pytest.mark.parametrize("param", ["workload.inter_arrival.mean_ms", "workload.writers.count"])
def test_a_trace_is_searched_by_its_rate_scale(tmp_path, param):
    from sim.config import ConfigError
    cfg = _trace_config(tmp_path)
    with pytest.raises(ConfigError, match="does not set the load of a trace"):
        KneeSearch(cfg, KneeSpec(param=param))
    with pytest.raises(ConfigError, match="the config has no workload.trace"):
        KneeSearch(from_dict({}), KneeSpec(param=SCALE_PARAM))
