"""`sim testbed report`'s comparison: each cell's verdict against the issue's targets (failure share within 5 pp,
successes/s within 15 %, p50 within 20 % of the measured means), `cpu_bound` over the busy bound or the CPU-wait
bound, and CIs kept within what a figure can be (no share above 1, no rate below 0). Needs no client or server."""
from __future__ import annotations

import pandas as pd
import pytest

from sim.testbed.figures import FIGURES, mean_ci
from sim.testbed.report import compare

CELL = {"stack": "iceberg-sql", "delay_ms": 25.0, "retries": "off", "writers": 4}
MEASURED = {"failure_share": 0.70, "successes_per_s": 2.0, "attempts_per_s": 6.7, "commit_p50_ms": 500.0,
            "commit_p99_ms": 900.0}


def _measured(values: list[dict], own=0.2, machine=0.3, wait=None) -> pd.DataFrame:
    extra = {} if wait is None else {"cpu_wait_share": wait}
    return pd.DataFrame([{**CELL, **v, "calibration": False, "own_busy_fraction": own, "busy_fraction": machine,
                          "conserved": True, **extra} for v in values])


def _predicted(**change) -> pd.DataFrame:
    return pd.DataFrame([{**CELL, **MEASURED, **change}] * 3)


@pytest.mark.parametrize("change, verdict", [
    ({}, "ok"),
    ({"failure_share": 0.749}, "ok"),
    ({"failure_share": 0.76}, "miss: failure_share"),
    ({"successes_per_s": 2.29}, "ok"),
    ({"successes_per_s": 1.6}, "miss: successes_per_s"),
    ({"commit_p50_ms": 610.0}, "miss: commit_p50_ms"),
    ({"commit_p50_ms": 590.0, "attempts_per_s": 20.0, "commit_p99_ms": 5000.0}, "ok"),   # not targets
    ({"failure_share": 0.6, "successes_per_s": 3.0}, "miss: failure_share, successes_per_s"),
])
def test_the_verdict_is_the_targets_on_the_means(change, verdict):
    comp = compare(_measured([MEASURED] * 3), _predicted(**change))
    assert comp["verdict"].tolist() == [verdict]


@pytest.mark.parametrize("own, machine, machine_busy, verdict", [
    (0.51, 0.2, True, "cpu_bound"), (0.2, 0.51, True, "cpu_bound"), (0.2, 0.51, False, "ok"),
    (0.5, 0.5, True, "ok")])
def test_a_cell_over_the_busy_bound_is_cpu_bound_not_compared(own, machine, machine_busy, verdict):
    comp = compare(_measured([MEASURED] * 3, own, machine), _predicted(), machine_busy)
    assert comp["verdict"].tolist() == [verdict]


@pytest.mark.parametrize("wait, verdict", [(0.151, "cpu_bound"), (0.149, "ok"), (0.05, "ok"),
                                           (float("nan"), "ok")])
def test_a_cell_whose_processes_waited_for_a_cpu_past_the_bound_is_cpu_bound(wait, verdict):
    """The wait bound: 5 pp of the writers' commit time over the one-writer cell of the same stack, delay and
    retries (here 0.10), beside the busy bound; a cell measured before the wait was (NaN) is judged by its busy
    fraction alone, and so is the one-writer cell itself."""
    one = _measured([MEASURED] * 3, wait=0.10).assign(writers=1)
    comp = compare(pd.concat([one, _measured([MEASURED] * 3, wait=wait)]), _predicted(),
                   False).set_index("writers")
    assert comp.loc[4, "verdict"] == verdict
    assert comp.loc[1, "cpu_wait_excess"] == 0.0


def test_the_wait_share_is_every_process_groups_wait_over_the_writers_commit_time():
    from sim.testbed.campaign import cpu_wait_share
    cpu = {"wait_writers_s": 0.3, "wait_servers_s": 0.2, "wait_proxy_s": 0.1, "commit_calls_s": 12.0}
    assert cpu_wait_share(cpu) == pytest.approx(0.05)
    assert cpu_wait_share({"cpu_writers_s": 1.0}) != cpu_wait_share({"cpu_writers_s": 1.0})   # not measured: NaN


def test_a_process_that_spins_beside_busy_ones_is_seen_waiting_for_a_cpu():
    """`run_queue_wait_s` reads the scheduler's count: a thread kept runnable beside more spinning processes than
    there are CPUs waits for one; alone on an idle CPU, hardly."""
    import multiprocessing as mp
    import os
    import time

    from sim.testbed.cpu import run_queue_wait_s
    if not os.path.exists("/proc/self/task"):
        pytest.skip("no /proc")

    def spin(seconds):
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:
            pass
    n = 2 * (os.cpu_count() or 1)
    w0 = run_queue_wait_s()
    ctx = mp.get_context("fork")
    others = [ctx.Process(target=spin, args=(1.5,)) for _ in range(n)]
    for q in others:
        q.start()
    try:
        spin(1.0)
    finally:
        for q in others:
            q.join()
    assert run_queue_wait_s() - w0 > 0.2        # about half of the second (n + 1 runnable on n / 2 CPUs)


def test_a_share_and_a_rate_keep_their_ci_within_what_they_can_be():
    spread = [{**MEASURED, "failure_share": s, "successes_per_s": r} for s, r in ((0.1, 0.1), (0.99, 9.0))]
    comp = compare(_measured(spread), _predicted()).iloc[0]
    assert comp["measured_failure_share_lo"] == 0.0 and comp["measured_failure_share_hi"] == 1.0
    assert comp["measured_successes_per_s_lo"] == 0.0 and comp["measured_successes_per_s_hi"] > 9.0
    for fig in FIGURES:
        assert comp[f"measured_{fig}_lo"] <= comp[f"measured_{fig}"] <= comp[f"measured_{fig}_hi"]


def test_mean_ci_is_students_t():
    m, lo, hi = mean_ci([11.0, 12.0, 13.0])
    assert m == 12.0 and hi - m == pytest.approx(4.302653 * 1.0 / 3 ** 0.5, rel=1e-5) and m - lo == hi - m
    assert mean_ci([5.0])[1] != mean_ci([5.0])[1]          # one value: no interval (NaN)


def test_precise_asks_a_quarter_of_each_target_of_the_means_ci():
    """`precise`: every target figure's 95 % CI half-width (Student's t) within a quarter of its target: 1.25 pp of
    failure share, 3.75 % of successes/s, 5 % of p50. A p50 whose runs fall half in a mode at 500 ms, half at
    1,000 ms (mean 750, sd 250) needs 180 of them: at 150 the half-width is 40.5 ms, at 180 36.9, against 37.5."""
    from sim.testbed.figures import precise

    def rows(n, p50=None, share=None):
        return pd.DataFrame({"failure_share": share if share is not None else [0.5] * n,
                             "successes_per_s": [3.0] * n,
                             "commit_p50_ms": p50 if p50 is not None else [700.0] * n})
    modes = lambda n: [500.0 if i % 2 == 0 else 1000.0 for i in range(n)]   # noqa: E731
    assert precise(rows(30))
    assert not precise(rows(150, p50=modes(150))) and precise(rows(180, p50=modes(180)))
    shares = lambda n: [0.45 if i % 2 == 0 else 0.55 for i in range(n)]    # sd 0.05: 1.25 pp from n = 64
    assert not precise(rows(60, share=shares(60))) and precise(rows(70, share=shares(70)))
    assert precise(rows(5, p50=[float("nan")] * 5))          # no commit in any run: no p50 to pin


def _two_mode_runs(monkeypatch):
    """`sim.testbed.predict` with the model replaced by runs whose p50 falls at 500 or 1,000 ms by parity."""
    from sim import api
    from sim.testbed import predict as P

    def run(cfg, r, stream=False):
        ends = [500.0, 500.0, 1000.0] if r % 2 == 0 else [1000.0, 1000.0, 1000.0]
        rec = pd.DataFrame({"arrival_ms": 0.0, "end_ms": ends, "outcome": "committed", "attempts": 1})
        return type("R", (), {"records": rec})()
    monkeypatch.setattr(api, "config", lambda d: d)
    monkeypatch.setattr(api, "run", run)
    monkeypatch.setattr(P, "config_of", lambda profile, spec: {})
    return P


def test_a_prediction_adds_replications_until_precise(monkeypatch):
    """`predict` runs its replications, then as many more at a time until `precise` or the cap; replication r is
    the same run whatever the count. Runs whose p50 falls at 500 or 1,000 ms by parity: 180 (six batches of 30)."""
    import numpy as np
    P = _two_mode_runs(monkeypatch)
    df = P.predict({}, None, 30, 300)
    assert len(df) == 180 and list(df.replication) == list(range(180))
    assert np.array_equal(df.commit_p50_ms[:30], P.predict({}, None, 30, 30).commit_p50_ms)
    assert len(P.predict({}, None, 30, 90)) == 90 and len(P.predict({}, None, 30, 0)) == 30


def test_a_prediction_goes_on_while_a_target_edge_lies_inside_its_ci(monkeypatch):
    """Given the cell's measured means, `predict` also goes on while a target's edge lies inside the CI of its
    mean (`straddled`), up to the cap. Runs at 500 or 1,000 ms by parity (mean 750, sd about 250) against a measured
    p50 of 981.25 ms, whose lower edge (x 0.8) is 785: 35 ms off the mean, which the CI's half-width clears at 210
    runs (34.1 ms; 36.9 at 180, where the runs are already `precise`). A measured mean whose edge is the runs' mean
    is never decided: the cap."""
    from sim.testbed.figures import straddled
    P = _two_mode_runs(monkeypatch)
    df = P.predict({}, None, 30, 3000, {"commit_p50_ms": 981.25})
    assert len(df) == 210
    measured = {"commit_p50_ms": 981.25}
    assert straddled(df[:180], measured) == ["commit_p50_ms"] and not straddled(df, measured)
    assert len(P.predict({}, None, 30, 600, {"commit_p50_ms": 750.0 / 0.8})) == 600
    assert len(P.predict({}, None, 30, 3000, {"failure_share": 0.5})) == 180    # no spread, the edge far: precise


def test_straddled_names_the_figures_whose_edge_the_ci_holds():
    """`straddled`: the 95 % CI of the replications' mean, kept within what the figure can be, against the
    measured mean less or plus its target; a figure not measured, or replicated once, is none."""
    from sim.testbed.figures import straddled
    rows = pd.DataFrame({"failure_share": [0.0, 0.02, 0.04], "successes_per_s": [3.0, 3.0, 3.0],
                         "commit_p50_ms": [380.0, 400.0, 420.0]})
    assert straddled(rows, {"commit_p50_ms": 500.0}) == ["commit_p50_ms"]          # 400 = 500 x 0.8
    assert straddled(rows, {"commit_p50_ms": 250.0, "successes_per_s": 3.0}) == []  # CI about [350, 450]
    assert straddled(rows, {"failure_share": 0.07}) == ["failure_share"]            # CI [0, 0.07] holds 0.02
    assert straddled(rows, {"failure_share": 0.025}) == []                          # -0.025 is no share
    assert straddled(rows[:1], {"commit_p50_ms": 500.0}) == []


def test_each_cells_measured_means_key_its_prediction():
    """`measured_means`: the repetitions' mean of each target figure, keyed as `predict_cells` keys its cells."""
    from sim.testbed.report import measured_means
    done = _measured([MEASURED, {**MEASURED, "commit_p50_ms": 700.0}])
    means = measured_means(done)
    (key, m), = means.items()
    assert key == ("iceberg-sql", 25.0, False, 4) and m["commit_p50_ms"] == (MEASURED["commit_p50_ms"] + 700.0) / 2
    assert set(m) == {"failure_share", "successes_per_s", "commit_p50_ms"}


def test_chance_miss_is_how_often_a_right_model_misses():
    """`chance_miss`: the model's replications drawn as the cell's repetitions, judged against their own mean.
    Failure shares of 0.0 and 0.2 half each (mean 0.1): one repetition is always 0.1 off (a miss); two are 0.1 or 0.0
    off, half the time each (0.5, within 2 pp of 20,000 draws); replications that agree never miss."""
    from sim.testbed.figures import chance_miss

    def rows(shares):
        return pd.DataFrame({"failure_share": shares, "successes_per_s": 2.0, "commit_p50_ms": 500.0})
    two = rows([0.0, 0.2] * 50)
    assert chance_miss(two, 1) == 1.0
    assert chance_miss(two, 2) == pytest.approx(0.5, abs=0.02)
    assert chance_miss(two, 10) < chance_miss(two, 2)
    assert chance_miss(rows([0.3] * 40), 3) == 0.0
    assert chance_miss(two, 2) == chance_miss(two, 2)          # a fixed seed: a pure function of its inputs


def test_the_comparison_says_how_many_misses_a_right_model_would_show():
    """Each cell's `chance_miss`, and the markdown's line: their sum over the cells judged (not `cpu_bound`)."""
    from sim.testbed.report import expected_misses, markdown
    pred = pd.concat([_predicted(failure_share=x) for x in (0.6, 0.8)], ignore_index=True)
    comp = compare(_measured([MEASURED] * 2), pred)
    assert comp["chance_miss"].iloc[0] == pytest.approx(0.5, abs=0.02)    # 0.6 / 0.8: two repetitions, as above
    assert expected_misses(comp) == comp["chance_miss"].iloc[0]
    assert f"A model exactly right would miss {expected_misses(comp):.2f} of these 1 judged cells" in markdown(comp)
    busy = compare(_measured([MEASURED] * 2, own=0.9), pred)
    assert busy["verdict"].iloc[0] == "cpu_bound" and expected_misses(busy) == 0.0


def test_report_asks_max_replications_at_least_replications(tmp_path, capsys):
    """`sim testbed report --max-replications` under `--replications` is one line naming the option."""
    from sim.cli import main
    assert main(["testbed", "report", str(tmp_path), "--replications", "30", "--max-replications", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-replications" in err[0]


def test_the_markdown_gives_each_cells_runs_on_both_sides():
    """comparison.md: per stack, a row per cell with its repetitions and the model's replications ("runs")."""
    from sim.testbed.report import markdown
    md = markdown(compare(_measured([MEASURED] * 4), _predicted())).splitlines()
    header, rule, row = md[2], md[3], md[4]
    assert md[0] == "### iceberg-sql" and "| runs |" in header
    assert header.count("|") == rule.count("|") == row.count("|")
    assert row.startswith("| 25 | off | 4 | 4 / 3 | ") and row.endswith("| ok |")


@pytest.mark.parametrize("p50s, edge", [
    ([440.0, 450.0, 460.0], ""),                   # mean 450, CI about [443, 457]: within, no edge in it
    ([380.0, 400.0, 420.0], "commit_p50_ms"),      # mean 400 on the lower edge (500 x 0.8)
    ([360.0, 380.0, 400.0], ""),                   # a miss (380) whose CI, about [367, 393], holds no edge
    ([340.0, 390.0, 440.0], "commit_p50_ms"),      # a miss (390) whose CI, about [357, 423], holds the edge
    ([700.0, 700.0, 700.0], ""),                   # no spread: the CI is the point, off the edges
])
def test_a_target_edge_inside_the_prediction_ci_is_named(p50s, edge):
    """`edge_in_ci` names each target figure whose edge (measured 500 ms x 0.8 or x 1.2) the prediction's 95 % CI
    holds: the verdict there, either way, rests on the model's sampling; the markdown says so beside the verdict."""
    from sim.testbed.report import markdown
    pred = pd.concat([_predicted(commit_p50_ms=x) for x in p50s], ignore_index=True)
    comp = compare(_measured([MEASURED] * 3), pred)
    assert comp["edge_in_ci"].tolist() == [edge]
    row = markdown(comp).splitlines()[4]
    assert row.endswith(f"(the {edge} target's edge inside the model's CI) |") == bool(edge)


def _replications(rng_seed: int = 7, n: int = 4000, **normal) -> pd.DataFrame:
    """Replications whose target figures are normal (mean, sd) where given, else the measured means exactly."""
    import numpy as np
    rng = np.random.default_rng(rng_seed)
    cols = {"failure_share": 0.30, "successes_per_s": 2.0, "commit_p50_ms": 500.0}
    return pd.DataFrame({fig: rng.normal(*normal[fig], n) if fig in normal else np.full(n, value)
                         for fig, value in cols.items()})


@pytest.mark.parametrize("fig, mean, sd, side", [
    ("failure_share", 0.30, 0.05, +1),          # absolute: the edge 0.35, the truth's spread unchanged
    ("failure_share", 0.30, 0.05, -1),          # the edge 0.25
    ("commit_p50_ms", 500.0, 50.0, +1),          # relative: the edge 500 / 0.8 = 625, its spread scaled to 62.5
    ("commit_p50_ms", 500.0, 50.0, -1),          # 500 / 1.2 = 416.7, spread 41.7
])
def test_p_outside_is_the_chance_of_so_far_outside_at_the_targets_edge(fig, mean, sd, side):
    """`p_outside`: were the truth at the target band's edge nearest the measured mean, how often 10 repetitions
    give a mean as far out. Normal replications and a measured mean 1.645 standard errors past the edge: 0.05,
    within 0.01 of 20,000 draws; past it by much more: 1 / 20,001; inside the band: 1. The least figure is named."""
    import numpy as np
    from sim.testbed.figures import band, p_outside
    rows = _replications(**{fig: (mean, sd)})
    centre = rows[fig].mean()
    lo, hi = band(fig, centre)
    edge = hi if side > 0 else lo
    se = sd * (edge / centre if fig == "commit_p50_ms" else 1.0) / np.sqrt(10)
    others = {"failure_share": 0.30, "successes_per_s": 2.0, "commit_p50_ms": 500.0}
    p, which = p_outside(rows, 10, {**others, fig: edge + side * 1.645 * se})
    assert which == fig and p == pytest.approx(0.05, abs=0.01)
    assert p_outside(rows, 10, {**others, fig: edge + side * 10 * se}) == (1 / 20_001, fig)
    assert p_outside(rows, 10, {**others, fig: edge - side * 0.1 * se})[0] == 1.0


def test_the_comparison_says_how_far_outside_its_least_p_is():
    """Each cell's `p_outside` and `p_figure`, and the markdown's line: the least over the judged cells, with
    Bonferroni's bound (figures x p); a `cpu_bound` cell is not judged; all within, the line says so."""
    from sim.testbed.report import least_p, markdown
    pred = pd.concat([_predicted(failure_share=x) for x in (0.6, 0.8)], ignore_index=True)    # mean 0.7
    off = {**MEASURED, "failure_share": 0.80}                                               # 0.05 past the edge
    comp = compare(_measured([off] * 2), pred)
    assert comp["verdict"].iloc[0] == "miss: failure_share" and comp["p_figure"].iloc[0] == "failure_share"
    # at the edge (0.75) two repetitions of 0.65 / 0.85 reach 0.80 or more a quarter of the time
    assert comp["p_outside"].iloc[0] == pytest.approx(0.25, abs=0.02)
    p, row, figs, bound = least_p(comp)
    assert figs == 3 and bound == pytest.approx(3 * p)
    assert f"The least `p_outside` of the judged cells' 3 target figures: {p:.4f}" in markdown(comp)
    assert least_p(compare(_measured([off] * 2, own=0.9), pred)) is None
    within = compare(_measured([MEASURED] * 2), pred)
    assert within["p_outside"].iloc[0] == 1.0 and "lies within its target of the prediction" in markdown(within)


def _calls(*calls):
    """Transaction records of `(writer, arrival_ms, end_ms, attempts, outcome)`."""
    return pd.DataFrame(calls, columns=["writer", "arrival_ms", "end_ms", "attempts", "outcome"])


def test_the_first_loser_is_the_loser_of_the_start_whose_call_ended_first():
    """The attempt at which the start's first loser committed: later calls and later losers do not count; nobody
    lost at the start is 0, a first loser that gave up is -1."""
    from sim.testbed.figures import first_loser_attempt
    start = [(0, 0.0, 400.0, 1, "committed"), (1, 1.0, 2_900.0, 5, "committed"), (2, 2.0, 2_500.0, 4, "committed"),
             (0, 400.0, 800.0, 7, "committed")]
    assert first_loser_attempt(_calls(*start)) == 4
    assert first_loser_attempt(_calls(*start[:2], start[3])) == 5
    assert first_loser_attempt(_calls(start[0], (1, 1.0, 900.0, 1, "committed"), start[3])) == 0
    assert first_loser_attempt(_calls(start[0], (1, 1.0, 9_000.0, 10, "aborted"), start[2])) == 4
    assert first_loser_attempt(_calls(start[0], (1, 1.0, 2_000.0, 10, "aborted"), start[2])) == -1


@pytest.mark.parametrize("sd, needed", [
    (0.05, 10.0),        # a miss past 5 pp: 2 x Phi(-0.05 sqrt(r) / sd): 0.025 at 5, 0.0016 at 10
    (0.10, 30.0),        # 0.025 at 20, 0.0062 at 30
    (0.30, float("nan")),  # 0.096 at 100: more than the ladder holds
    (0.00, 3.0),         # replications that agree never miss
])
def test_reps_needed_is_the_fewest_repetitions_a_right_model_passes_by(sd, needed):
    """`reps_needed`: the fewest repetitions of the ladder at which `chance_miss` is at most 1 %; for a normal
    failure share of spread sd, against the closed form of its mean's miss, P(|mean of r - mu| > 5 pp)."""
    from sim.testbed.figures import reps_needed
    got = reps_needed(_replications(failure_share=(0.30, sd)))
    assert got == needed or (needed != needed and got != got)


def test_the_comparison_names_the_cells_short_of_repetitions():
    """Each cell's `reps_needed`, and the markdown's line naming the judged cells measured with fewer: failure
    shares of 0.6 and 0.8 half each miss 5 pp with 20 repetitions 1.2 % of the time, with 30 0.5 %; a cell with
    as many is not named, nor a `cpu_bound` one."""
    from sim.testbed.report import markdown, short_cells
    pred = pd.concat([_predicted(failure_share=x) for x in (0.6, 0.8)] * 20, ignore_index=True)
    comp = compare(_measured([MEASURED] * 2), pred)
    assert comp["reps_needed"].iloc[0] == 30.0 and len(short_cells(comp)) == 1
    assert ("1 judged cells have fewer repetitions than a model exactly right needs to be called a miss at most 1 % "
            "of the time") in markdown(comp)
    assert "iceberg-sql 25 ms 4 writers retries off: 30." in markdown(comp)
    assert not len(short_cells(compare(_measured([MEASURED] * 30), pred)))
    assert not len(short_cells(compare(_measured([MEASURED] * 2, own=0.9), pred)))
