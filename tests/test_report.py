"""Tests of sim.report on a synthetic but plausible results table (docs/FORMATS.md columns)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helpers import ROOT
from sim.report import aggregate, default_layout, heatmap, knee_table, write_report
from sim.sweep import load

PROVIDERS = ["s3", "gcp"]
TABLES = [1, 10]
INTER_ARRIVALS = [20.0, 100.0, 1000.0]
MIXES = [1.0, 0.9]
REPS = [0, 1]
T975_1 = stats.t.ppf(0.975, 1)   # Student t quantile for 2 replications

LAT = [f"commit_latency_{s}_ms" for s in ("mean", "p50", "p95", "p99")]
METRICS = (
    ["success_rate", "fa_success_rate", "vo_success_rate",
     "throughput_cps", "fa_throughput_cps", "vo_throughput_cps", "offered_cps"]
    + LAT + ["fa_" + c for c in LAT] + ["vo_" + c for c in LAT]
    + ["arrived", "committed", "aborted", "unfinished", "unfinished_share",
       "fa_arrived", "fa_committed", "fa_aborted", "vo_arrived", "vo_committed", "vo_aborted",
       "catalog_conflicts", "table_conflicts", "catalog_conflict_share",
       "mean_attempts", "gets_per_commit", "puts_per_commit", "manifest_lists_read_per_commit"]
)
STANDARD = ["provider", "backend", "num_tables", "fast_append_ratio", "inter_arrival_ms",
            "inter_arrival_distribution", "catalog_latency_ms", "table_selection", "zipf_alpha",
            "max_retries"]
SWEPT = ["storage.provider", "workload.num_tables", "workload.fast_append_ratio",
         "workload.inter_arrival.mean_ms"]
META = ["config_hash", "replication", "status", "error", "wall_s", "events"]

# design of the mean (over the two replications) success rates per load point:
# inter-arrival 20 ms is the highest-throughput point but has 90 % success -> the knee is at 100 ms
SUCCESS = {20.0: 0.90, 100.0: 0.97, 1000.0: 0.995}
VO_SUCCESS = {20.0: 0.80, 100.0: 0.96, 1000.0: 0.99}
THROUGHPUT_FACTOR = {20.0: 3.0, 100.0: 2.0, 1000.0: 0.5}
D = 0.005         # replication 0 is mean - D, replication 1 is mean + D (success rates)
TP_D = 0.1        # same for throughput (relative to the base)


def _design(provider, tables, mix, ia):
    s, vs = SUCCESS[ia], VO_SUCCESS[ia]
    if (provider, tables, mix) == ("gcp", 1, 0.9) and ia == 100.0:
        vs = 0.80                          # VO fails the test at 100 ms -> knee at 1000 ms
    if (provider, tables, mix) == ("gcp", 1, 1.0):
        s = min(s, 0.93)                   # nothing qualifies -> no knee
    base = (5.0 if provider == "s3" else 1.0) * (1 + tables / 10)
    return s, vs, base * THROUGHPUT_FACTOR[ia], base


def expected_knee(provider, tables, mix):
    """The last (lightest-load side) grid point that passes: the crossing lies between it and the next heavier
    point (None: the lightest load already fails)."""
    if (provider, tables, mix) == ("gcp", 1, 1.0):
        return None
    if (provider, tables, mix) == ("gcp", 1, 0.9):
        return 1000.0
    return 100.0


def make_results() -> pd.DataFrame:
    rows = []
    for provider, tables, ia, mix in product(PROVIDERS, TABLES, INTER_ARRIVALS, MIXES):
        chash = f"{provider}-{tables}-{int(ia)}-{mix}"
        for rep in REPS:
            sign = -1 if rep == 0 else 1
            s, vs, tp, base = _design(provider, tables, mix, ia)
            s += sign * D
            vs += sign * D
            tp += sign * TP_D * base
            fa_s = s if mix == 1.0 else min(1.0, s + 0.005)
            arrived = int(1800_000 / ia)
            unfinished = int(0.01 * arrived) if ia == 20.0 else 0
            decided = arrived - unfinished
            committed = min(decided, int(round(s * decided)))   # success_rate 1.005 is a noisy mean, not a count
            aborted = decided - committed
            fa_arr = int(round(mix * arrived))
            vo_arr = arrived - fa_arr
            vo_committed = min(vo_arr, int(round(vs * vo_arr)), committed)     # the counts carry VO success
            lat = 100.0 * (3.0 if provider == "gcp" else 1.0) * (1 + 20.0 / ia) + 5 * rep
            r = dict(
                provider=provider, backend="storage", num_tables=tables, fast_append_ratio=mix,
                inter_arrival_ms=ia, inter_arrival_distribution="exponential",
                catalog_latency_ms=np.nan, table_selection="zipf", zipf_alpha=1.5, max_retries=10,
                **{"storage.provider": provider, "workload.num_tables": tables,
                   "workload.fast_append_ratio": mix, "workload.inter_arrival.mean_ms": ia},
                config_hash=chash, replication=rep, status="ok", error="", wall_s=1.5 + rep,
                events=10_000 + rep,
                success_rate=s, fa_success_rate=fa_s, vo_success_rate=vs if mix < 1 else np.nan,
                throughput_cps=tp, fa_throughput_cps=tp * mix,
                vo_throughput_cps=tp * (1 - mix) if mix < 1 else 0.0, offered_cps=1000.0 / ia,
                arrived=arrived, committed=committed, aborted=aborted, unfinished=unfinished,
                unfinished_share=unfinished / arrived,
                fa_arrived=fa_arr, fa_committed=committed - vo_committed,
                fa_aborted=int(aborted * mix), vo_arrived=vo_arr,
                vo_committed=vo_committed, vo_aborted=aborted - int(aborted * mix),
                catalog_conflicts=50 * tables, table_conflicts=100, mean_attempts=1.2,
                gets_per_commit=3.0, puts_per_commit=2.0, manifest_lists_read_per_commit=1.1,
            )
            r["catalog_conflict_share"] = r["catalog_conflicts"] / (r["catalog_conflicts"] + r["table_conflicts"])
            for i, q in enumerate(("mean", "p50", "p95", "p99")):
                mult = (1.0, 0.8, 3.0, 6.0)[i]
                r[f"commit_latency_{q}_ms"] = lat * mult
                r[f"fa_commit_latency_{q}_ms"] = lat * mult * (0.9 if mix < 1 else 1.0)
                r[f"vo_commit_latency_{q}_ms"] = lat * mult * 10 if mix < 1 else np.nan
            rows.append(r)
    # one failed third replication of one configuration: must be ignored by the aggregation
    failed = {k: rows[0][k] for k in STANDARD + SWEPT + ["config_hash"]}
    failed.update(replication=2, status="failed", error="Traceback ...\nRuntimeError: boom",
                  wall_s=0.1, events=0, **{m: np.nan for m in METRICS})
    rows.append(failed)
    df = pd.DataFrame(rows)
    return df[STANDARD + SWEPT + META + METRICS]


def make_per_table(results: pd.DataFrame) -> pd.DataFrame:
    rows = []
    ok = results[results.status == "ok"]
    for _, r in ok.iterrows():
        n = int(r.num_tables)
        w = np.arange(1, n + 1, dtype=float) ** -1.5
        w /= w.sum()
        for rank in range(1, n + 1):
            # the hot table does worse under load
            s = min(1.0, r.success_rate + (0.0 if rank == 1 else 0.05))
            arrived = int(r.arrived * w[rank - 1])
            committed = int(round(s * arrived))
            rows.append(dict(
                config_hash=r.config_hash, replication=r.replication, table_rank=rank,
                arrived=arrived, committed=committed, aborted=arrived - committed,
                success_rate=s if arrived else np.nan,
                throughput_cps=r.throughput_cps * w[rank - 1],
                commit_latency_mean_ms=r.commit_latency_mean_ms * (1.5 if rank == 1 else 1.0),
                commit_latency_p99_ms=r.commit_latency_p99_ms * (1.5 if rank == 1 else 1.0),
                catalog_conflicts=10, table_conflicts=20 if rank == 1 else 2,
                **{c: r[c] for c in STANDARD}))
    return pd.DataFrame(rows)


@pytest.fixture()
def results() -> pd.DataFrame:
    return make_results()


@pytest.fixture()
def results_dir(tmp_path, results) -> Path:
    d = tmp_path / "sweep"
    d.mkdir()
    results.to_parquet(d / "results.parquet", index=False)
    make_per_table(results).to_parquet(d / "per_table.parquet", index=False)
    return d


# --------------------------------------------------------------------------------------------

def test_synthetic_table_has_all_documented_columns(results):
    for c in STANDARD + ["config_hash", "replication", "status", "error", "wall_s", "events"] + METRICS:
        assert c in results.columns


def test_aggregate_means_and_ci(results):
    by = ["provider", "num_tables", "fast_append_ratio", "inter_arrival_ms"]
    agg = aggregate(results, by)
    assert len(agg) == 2 * 2 * 2 * 3
    assert (agg["n_reps"] == 2).all()          # the failed replication is not counted
    for m in METRICS:
        assert m in agg.columns and f"{m}_ci95" in agg.columns
    row = agg[(agg.provider == "s3") & (agg.num_tables == 10) & (agg.fast_append_ratio == 1.0)
              & (agg.inter_arrival_ms == 100.0)].iloc[0]
    assert row["success_rate"] == pytest.approx(0.97)
    # two replications s - d, s + d: sample std = d*sqrt(2), s.e. = d, half-width = t(.975, 1) * d
    assert row["success_rate_ci95"] == pytest.approx(T975_1 * D)
    base = 5.0 * 2
    assert row["throughput_cps"] == pytest.approx(2.0 * base)
    assert row["throughput_cps_ci95"] == pytest.approx(T975_1 * TP_D * base)
    # latency differs by 5 ms between replications
    assert row["commit_latency_mean_ms_ci95"] == pytest.approx(T975_1 * 2.5)
    # identical values -> zero width; undefined metric (FA-only VO success) -> NaN
    assert row["mean_attempts_ci95"] == pytest.approx(0.0)
    assert np.isnan(row["vo_success_rate"]) and np.isnan(row["vo_success_rate_ci95"])


def test_aggregate_single_replication_has_nan_ci(results):
    one = results[results.replication == 0]
    agg = aggregate(one, ["config_hash"])
    assert (agg["n_reps"] == 1).all()
    assert agg["success_rate_ci95"].isna().all()
    assert agg["success_rate"].notna().all()


def test_aggregate_keeps_nan_keys(results):
    agg = aggregate(results, ["catalog_latency_ms", "provider"])
    assert len(agg) == 2 and agg["catalog_latency_ms"].isna().all()


def test_default_layout(results):
    lay = default_layout(results)
    assert lay == {"rows": "num_tables", "cols": "inter_arrival_ms",
                   "facets": ["provider", "fast_append_ratio"]}


def test_knee_table(results):
    knee = knee_table(results, ["provider", "num_tables", "fast_append_ratio"], "inter_arrival_ms")
    assert len(knee) == 8
    for provider, tables, mix in product(PROVIDERS, TABLES, MIXES):
        r = knee[(knee.provider == provider) & (knee.num_tables == tables)
                 & (knee.fast_append_ratio == mix)]
        assert len(r) == 1
        r = r.iloc[0]
        exp = expected_knee(provider, tables, mix)
        _, _, tp20, _ = _design(provider, tables, mix, 20.0)
        assert r["max_throughput_cps"] == pytest.approx(tp20)
        assert r["max_throughput_inter_arrival"] == 20.0
        if exp is None:
            assert np.isnan(r["knee_throughput_cps"]) and np.isnan(r["knee_inter_arrival"])
            assert np.isnan(r["fa_p99_ms"]) and r["knee_status"] == "below_range"
            continue
        if (provider, tables, mix) == ("gcp", 1, 0.9):     # VO 0.99 then 0.80: two points of two runs, whose CI
            assert r["knee_status"] == "below_range"        # starts below the lightest load (1/s): a bound from its
            assert r["knee_reason"].endswith("starts below the lightest load run (1 arrivals/s)")    # high end, no
            assert 1.0 < r["knee_bound_cps"] < 10.0                                                    # extrapolation
            assert np.isnan(r["knee_throughput_cps"]) and np.isnan(r["knee_success_rate"])
            continue
        # the crossing lies between the last passing grid point and the next heavier one, inside its CI
        heavier = INTER_ARRIVALS[INTER_ARRIVALS.index(exp) - 1]
        assert r["knee_status"] == "ok" and heavier < r["knee_inter_arrival"] < exp
        assert 0 < r["knee_throughput_cps_low"] <= r["knee_throughput_cps"] <= r["knee_throughput_cps_high"]
        assert 0 <= r["knee_success_rate"] <= 1 and (mix == 1.0) == np.isnan(r["knee_vo_success_rate"])
        assert r["knee_offered_cps_low"] < r["knee_offered_cps"] < r["knee_offered_cps_high"]
        assert r["knee_offered_cps"] == pytest.approx(1000.0 / r["knee_inter_arrival"])
        # commits/s at the knee: its offered rate x commits per arrival there (no runtime left out here)
        assert r["knee_throughput_cps"] == pytest.approx(r["knee_offered_cps"] * r["knee_success_rate"])
        assert np.isfinite(r["fa_latency_mean_ms"]) and np.isfinite(r["fa_p99_ms"])
        assert np.isnan(r["vo_p99_ms"]) == (mix == 1.0)
        assert np.isnan(r["vo_latency_mean_ms"]) == (mix == 1.0)


def test_heatmap_marks_low_success_cells(results):
    agg = aggregate(results, ["provider", "num_tables", "fast_append_ratio", "inter_arrival_ms"])
    sub = agg[(agg.provider == "s3") & (agg.fast_append_ratio == 1.0)]
    ax = heatmap(sub, "success_rate", "num_tables", "inter_arrival_ms")
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 2          # the 20 ms column (90 % success) for both table counts
    assert [t.get_text() for t in ax.get_xticklabels()] == ["20", "100", "1000"]
    ax.figure.savefig(Path("/dev/null"), format="png")


def test_share_scales_fit_their_data(results):
    """An unfinished share of 1 % gets 0..1 %, not 0..100 % (all white); rates stay 0..100 %."""
    from sim.report.plots import color_limits
    agg = aggregate(results, ["provider", "num_tables", "fast_append_ratio", "inter_arrival_ms"])
    assert color_limits(agg, ["unfinished_share"]) == (0.0, pytest.approx(0.01))
    assert color_limits(agg, ["success_rate", "fa_success_rate"]) == (0.0, 1.0)
    assert color_limits(agg.assign(unfinished_share=0.0), ["unfinished_share"]) == (0.0, 1.0)


def test_knee_picture_band_reaching_zero_leaves_the_log_axis_alone():
    """A band whose lower end is 0 (or whose upper end is unbounded) is not shaded, so the log axis stays near the
    knees (it reached 1e-9); a status with its bound is an open triangle at the bound."""
    from matplotlib.figure import Figure

    from sim.report.plots.knees import _knee_axes, _knee_line
    line = pd.DataFrame({"num_tables": [1, 2, 5, 10], "knee_cps": [3.0, 4.0, 8.0, np.nan],
                         "knee_cps_low": [2.5, 0.0, 6.0, np.nan], "knee_cps_high": [3.5, np.nan, 9.0, np.nan],
                         "knee_status": ["ok", "ok", "ok", "above_range"], "knee_bound_cps": [np.nan] * 3 + [20.0]})
    ax = Figure().add_subplot()
    _knee_line(ax, line, "num_tables", "C0", "s3")
    _knee_axes(ax, "num_tables", [1, 2, 5, 10])
    assert 1.0 < ax.get_ylim()[0] < 2.5 and ax.get_ylim()[1] > 20.0
    assert [(m.get_marker(), list(m.get_ydata())) for m in ax.lines if m.get_marker() == "^"] == [("^", [20.0])]


def test_knee_cell_wording():
    """One wording for a knee in every table: the value with its band, or the status with its bound."""
    from sim.report.labels import knee_cell
    ok = {"knee_status": "ok", "knee_throughput_cps": 12.34, "knee_throughput_cps_low": 11.0,
          "knee_throughput_cps_high": 13.1, "knee_command": "sim knee base.yaml"}   # the command: a column of its own
    assert knee_cell(pd.Series(ok)) == "12.3 [11.0, 13.1] c/s"
    assert knee_cell(pd.Series({"knee_status": "below_range", "knee_bound_cps": 0.4})) == "below_range (< 0.40 c/s)"
    assert knee_cell(pd.Series({"knee_status": "above_range", "knee_bound_cps": 52.1})) == "above_range (> 52.1 c/s)"
    assert knee_cell(pd.Series({"knee_status": "undecided", "knee_reason": "its 95 % CI is unbounded"})) == \
        "undecided (its 95 % CI is unbounded)"


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """The synthetic sweep's report, written once for the tests that read it (warnings are errors)."""
    import warnings
    d = tmp_path_factory.mktemp("sweep")
    results = make_results()
    results.to_parquet(d / "results.parquet", index=False)
    make_per_table(results).to_parquet(d / "per_table.parquet", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert write_report(d) == d / "report" / "index.html"
    return d


class _Page(HTMLParser):
    """index.html as the structural test reads it: ids in document order, links to them, and each table's class
    and cell texts."""

    def __init__(self, text: str):
        super().__init__()
        self.order, self.links, self.tables, self.cell = [], [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.order.append(("id", a["id"]))
        if tag == "a" and a.get("href", "").startswith("#"):
            self.links.append(a["href"][1:])
        if tag == "table":
            self.tables.append({"class": a.get("class", ""), "cells": []})
            self.order.append(("table", a.get("class", "")))
        if tag == "img":
            self.order.append(("img", a["src"]))
        if tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1]["cells"].append((tag, "".join(self.cell).strip()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def test_write_report(written):
    rep = written / "report"
    text = (rep / "index.html").read_text()
    assert 'id="writers"' not in text and not (rep / "writers.csv").exists()   # an open-loop sweep: no writers
    srcs = re.findall(r'<img src="([^"]+)"', text)
    for s in srcs:
        assert not s.startswith("/") and "://" not in s      # relative links
        assert (rep / s).exists() and (rep / s).stat().st_size > 1000
    # the PNGs: the knee picture and a latency-throughput figure per provider x mix; heatmaps are tables
    assert sorted(Path(s).name for s in srcs) == ["curves__provider-gcp_fast_append_ratio-0.9.png",
                                                 "curves__provider-gcp_fast_append_ratio-1.png",
                                                 "curves__provider-s3_fast_append_ratio-0.9.png",
                                                 "curves__provider-s3_fast_append_ratio-1.png", "knee.png"]
    page = _Page(text)
    heat = [t for t in page.tables if t["class"] == "hm"]
    # per provider: success, P99 and mean latency with FA and VO panels for 90/10 (3 x 3), throughput, catalog
    # share of conflicts and unfinished share (3 x 2); per rank: 10 tables x 2 providers x 2 mixes x 2 metrics
    assert len(heat) == 2 * 15 + 8
    assert text.count("<figcaption>") == len(srcs) + len(heat)
    assert "RuntimeError: boom" in text                     # failed configuration listed
    assert 'id="designs"' not in text                       # no design axis, no design comparison
    assert [i for k, i in page.order if k == "id" and not i.startswith("knee-note-")][:4] == [
        "knee", "tiers", "knee-picture", "heat__provider-s3"]

    knee = pd.read_csv(rep / "knee.csv")
    assert len(knee) == 8
    assert set(knee.columns) >= {"provider", "num_tables", "fast_append_ratio",
                                 "knee_throughput_cps", "knee_inter_arrival",
                                 "fa_latency_mean_ms", "vo_latency_mean_ms", "fa_p99_ms",
                                 "vo_p99_ms", "max_throughput_cps"}
    for provider, tables, mix in product(PROVIDERS, TABLES, MIXES):
        r = knee[(knee.provider == provider) & (knee.num_tables == tables)
                 & (knee.fast_append_ratio == mix)].iloc[0]
        exp = expected_knee(provider, tables, mix)
        if exp is None:
            assert np.isnan(r["knee_inter_arrival"])
        else:
            assert np.isnan(r["knee_inter_arrival"]) if r["knee_status"] != "ok" else \
                INTER_ARRIVALS[INTER_ARRIVALS.index(exp) - 1] < r["knee_inter_arrival"] < exp
    # the summary: a row per provider and mix, a column per table count; gcp FA-only at 1 table has no knee
    summary = [c for _, c in page.tables[0]["cells"]]
    assert summary[:4] == ["provider", "FA ratio", "1 table", "10 tables"] and page.tables[0]["class"] == "knees"
    assert summary[4:6] == ["s3", "1"] and summary[6].endswith(" c/s")
    # short cells: a value with its band, or a bound; the why in the hover and a numbered note (gcp, 1 table, 90/10:
    # its CI starts below the lightest load run)
    assert sum(c.startswith("< ") for c in summary) == 2 and max(len(c) for c in summary) <= 24
    assert "<td class=\"\" title=\"below_range (&lt; 5.09 c/s) (read off the grid); to bound it: sim knee " in text
    assert '&lt; 5.09 c/s<sup><a href="#knee-note-1">1</a></sup>' in text
    note = re.search(r'<li id="knee-note-1" value="1">([^<]*)</li>', text)[1]
    assert note == "its 95 % CI [0.218, 5.09] arrivals/s starts below the lightest load run (1 arrivals/s)"
    assert text.count('href="#knee-note-1"') == 2              # the summary's cell and the tiers' (its single end)
    tiers = pd.read_csv(rep / "tiers.csv")
    assert len(tiers) == 4                                             # gcp FA only: no gain, and why
    gcp_fa = tiers[(tiers.provider == "gcp") & (tiers.fast_append_ratio == 1.0)].iloc[0]
    assert gcp_fa["gain_status"] != "ok" and gcp_fa["single_knee_status"] == "below_range"

    summary = pd.read_csv(rep / "summary.csv")
    assert len(summary) == 24 and "success_rate_ci95" in summary.columns
    assert (summary["n_reps"] == 2).all()

    # unfinished share: 1 % of arrivals at 20 ms only
    res = pd.read_parquet(written / "results.parquet")
    ok = res[res.status == "ok"]
    share = ok.unfinished.sum() / ok.arrived.sum()
    assert f"{100 * share:.1f} %" in text


def test_report_page_structure(written):
    """The page a reader opens (a structural test: no browser here): the knee and tier tables come before the
    first heatmap and figure, the table of contents links to ids that exist, and no table cell is blank, `nan`
    or `None`; the cells that hold no value (\u2013, n/a) are explained on the page."""
    text = (written / "report" / "index.html").read_text()
    page = _Page(text)
    ids = [i for k, i in page.order if k == "id"]
    assert len(ids) == len(set(ids))
    assert page.links and set(page.links) <= set(ids)
    nav = re.search(r"<nav[^>]*>(.*?)</nav>", text, re.S).group(1)
    assert re.findall(r'href="#([^"]+)"', nav) == re.findall(r'<h2 id="([^"]+)"', text)    # every section, in order
    kinds = [(k, v) for k, v in page.order if k in ("table", "img")]
    first_heat = kinds.index(("table", "hm"))
    assert kinds[:2] == [("table", "knees"), ("table", "knees")] and first_heat > 2
    assert [k for k, _ in kinds[:first_heat]].count("img") == 1          # the knee picture, then the heatmaps
    cells = [(t["class"], tag, c) for t in page.tables for tag, c in t["cells"]]
    assert len(cells) > 500
    for cls, tag, c in cells:
        assert c and c.lower() not in ("nan", "none", "inf", "<na>", "nat"), (cls, tag, c)
        assert "nan" not in c.lower().split(), (cls, tag, c)
    values = {c for _, _, c in cells}
    assert "\u2013" in values and "\u2013: no knee, so no value at it" in text     # the knee table's reason
    if "n/a" in values:
        assert "n/a: undefined" in text
    # marked cells: s3 FA only, success at 20 ms (90 %) for both table counts
    s3 = text[text.index('id="heat__provider-s3"'):text.index('id="heat__provider-gcp"')]
    first = s3[s3.index('<table class="hm">'):s3.index("</table>")]
    assert first.count('class="x"') == 2


@pytest.mark.filterwarnings("error")
def test_report_of_the_smoke_sweep_prints_no_warnings(smoke_reference, tmp_path):
    """The smoke sweep's real results table (every metric column the engine writes): a report of it raises no
    library warning (pandas, seaborn, matplotlib, numpy), each being an error here. Laid out as
    `python -m sim report` lays it out: by the sweep file's report section."""
    spec_report = load(ROOT / "experiments" / "smoke.yaml").report
    assert spec_report["facets"] == ["provider"]
    index = write_report(smoke_reference, spec_report, out_dir=tmp_path / "report")
    assert index.is_file() and (tmp_path / "report" / "knee.csv").is_file()
    assert len(pd.read_csv(tmp_path / "report" / "summary.csv")) == 8


@pytest.mark.slow   # a second whole report (test_write_report writes one by default)
def test_write_report_with_spec_section(results_dir):
    index = write_report(results_dir, {"rows": "num_tables", "cols": "inter_arrival_ms",
                                       "facets": ["provider"], "title": "Synthetic 4c"})
    text = index.read_text()
    assert "Synthetic 4c" in text
    # fast_append_ratio varies but is not in facets: it is added, with a note
    assert "Also faceted by" in text and "fast_append_ratio" in text
    knee = pd.read_csv(results_dir / "report" / "knee.csv")
    assert len(knee) == 8


def test_write_report_all_failed(tmp_path, results):
    d = tmp_path / "bad"
    d.mkdir()
    results.assign(status="failed", error="ValueError: nope").to_parquet(d / "results.parquet")
    index = write_report(d)
    text = index.read_text()
    assert "ValueError: nope" in text and "<img" not in text


def test_default_layout_4a_like():
    """Service backend sweep: catalog latency and table selection vary; zipf_alpha and the
    dotted mirrors of standard columns add no facet; an extra swept dotted path does."""
    rows = []
    for cl, sel, nt, ia, pol in product([1.0, 50.0], ["uniform", "zipf"], [1, 10], [20.0, 100.0],
                                        ["immediate", "exponential"]):
        rows.append({"provider": "s3", "backend": "service", "num_tables": nt,
                     "fast_append_ratio": 1.0, "inter_arrival_ms": ia,
                     "inter_arrival_distribution": "exponential", "catalog_latency_ms": cl,
                     "table_selection": sel, "zipf_alpha": 1.5 if sel == "zipf" else np.nan,
                     "max_retries": 10, "catalog.latency_ms": cl,
                     "workload.table_selection.distribution": sel,
                     "workload.num_tables": nt, "workload.inter_arrival.mean_ms": ia,
                     "retry.table.policy": pol, "status": "ok", "success_rate": 1.0})
    lay = default_layout(pd.DataFrame(rows))
    assert lay["rows"] == "num_tables" and lay["cols"] == "inter_arrival_ms"
    assert lay["facets"] == ["catalog_latency_ms", "table_selection", "retry.table.policy"]


# --------------------------------------------------------------------------------------------
# design comparison

def make_design_results() -> pd.DataFrame:
    """A tiny design sweep: file and pointer on s3 and gcp, 1 and 50 tables, FA and 90/10, three loads, two
    replications. Success falls with load; pointer on 50 tables passes at every load (above range); file on gcp
    never qualifies; gcp's knees carry unfinished transactions and throttled resends."""
    base = make_results()
    one = base[(base.status == "ok") & (base.provider == "s3") & (base.num_tables == 1)]
    rows = []
    for design, provider, tables in product(["file", "pointer"], ["s3", "gcp"], [1, 50]):
        for _, r in one.iterrows():
            r = r.copy()
            ia = r["inter_arrival_ms"]
            scale = (50 if design == "pointer" else 2) if tables == 50 else 1
            r["throughput_cps"] = (1000.0 / ia) * (0.2 if provider == "gcp" else 1.0) * min(scale, 1000 / ia)
            ok_at = {("file", 1): 100.0, ("file", 50): 100.0, ("pointer", 1): 100.0, ("pointer", 50): 20.0}
            good = ia >= ok_at[(design, tables)] and not (design == "file" and provider == "gcp")
            r["success_rate"] = 0.99 if good else 0.5
            r["vo_success_rate"] = (0.99 if good else 0.5) if r["fast_append_ratio"] < 1 else np.nan
            r["vo_committed"] = round(r["success_rate"] * r["vo_arrived"])      # the counts the knee's fit reads
            r["committed"] = r["vo_committed"] + round(r["success_rate"] * r["fa_arrived"])
            r["unfinished_share"] = 0.3 if provider == "gcp" else 0.0
            r["throttled_per_commit"] = 2.0 if provider == "gcp" else 0.0
            r["provider"] = r["storage.provider"] = provider
            r["num_tables"] = r["workload.num_tables"] = tables
            r["design"] = design
            r["config_hash"] = f"{design}-{provider}-{tables}-{ia}-{r['fast_append_ratio']}"
            rows.append(r)
    return pd.DataFrame(rows)


def test_design_knees_and_headline():
    from sim.report.designs import design_knees, headline, with_ratio_to
    knee = with_ratio_to(design_knees(make_design_results()))
    assert len(knee) == 2 * 2 * 2 * 2

    def at(design, provider, tables, mix=1.0):
        return knee[(knee.design == design) & (knee.provider == provider) & (knee.num_tables == tables)
                    & (knee.fast_append_ratio == mix)].iloc[0]
    # the crossing interpolated between the passing 100 ms and the failing 20 ms, inside its CI
    f = at("file", "s3", 1)
    assert f.knee_status == "ok" and 20.0 < f.knee_inter_arrival < 100.0
    assert f.knee_offered_cps_low < f.knee_offered_cps < f.knee_offered_cps_high
    # every load passes: above range, no knee; its bound: the threshold x the heaviest load's trials/s (50/s)
    p = at("pointer", "s3", 50)
    assert p.knee_status == "above_range" and np.isnan(p.knee_throughput_cps)
    assert p.knee_bound_cps == pytest.approx(0.95 * 50) and p.max_throughput_cps == pytest.approx(50 * 50)
    g = at("file", "gcp", 50)      # the lightest load (1/s) fails: below range, the knee below its trials/s
    assert g.knee_status == "below_range" and np.isnan(g.knee_throughput_cps) and g.knee_bound_cps == pytest.approx(1.0)
    assert at("pointer", "s3", 1).ratio_to_file == pytest.approx(1.0)      # the same success and throughput
    assert at("pointer", "gcp", 1).unfinished_share_at_knee == pytest.approx(0.3)
    head = headline(knee)
    assert list(head.columns) == ["tables", "mix", "design", "s3", "gcp"]
    assert len(head) == 2 * 2 * 2
    cell = head[(head.tables == 50) & (head.mix == "FA") & (head.design == "pointer")].iloc[0]
    assert cell.s3 == cell.gcp == "above_range (> 47.5 c/s)"
    cell = head[(head.tables == 1) & (head.mix == "FA") & (head.design == "pointer")].iloc[0]
    assert cell.gcp.endswith(" c/s (unfinished 30 %, 2 429/commit)")
    assert head[(head.tables == 1) & (head.design == "file")].gcp.eq("below_range (< 1.00 c/s)").all()


@pytest.mark.filterwarnings("error")
def test_write_report_design_section_first(tmp_path):
    d = tmp_path / "designs"
    d.mkdir()
    df = make_design_results()
    df[(df.fast_append_ratio == 1.0) & (df.provider == "s3")].to_parquet(d / "results.parquet", index=False)
    text = write_report(d).read_text()
    headings = re.findall(r'<h2 id="([^"]+)"', text)
    assert headings[0] == "designs"
    srcs = [s for s in re.findall(r'<img src="([^"]+)"', text) if "design_knees" in s]
    assert len(srcs) == 1 and (d / "report" / srcs[0]).stat().st_size > 1000
    assert (d / "report" / "design_knees.csv").exists()
    knee = pd.read_csv(d / "report" / "design_knees.csv")
    f = knee[(knee.design == "file") & (knee.num_tables == 1)].iloc[0]       # interpolated, not a grid point
    assert "above_range (&gt; 47.5 c/s)" in text and f"{f.knee_throughput_cps:.1f}" in text
    assert 10.0 < f.knee_throughput_cps < 50.0


# --------------------------------------------------------------------------------------------
# writers sweeps (cas-bench): metrics against the writer count, one line per provider

THREADS = [1, 2, 4, 8]
WRITER_REPS = [0, 1, 2]


def _cas(provider: str, threads: int) -> tuple[float, float]:
    """(successes/s, attempts/s) of the design: successes saturate at the provider's rate, attempts grow."""
    rate = {"s3x": 40.0, "gcp": 2.0}[provider]
    return rate * min(threads, 2) / 2, rate * threads / 2


def make_writers_results(intervals=(None,)) -> pd.DataFrame:
    """A cas-bench-like results table: 2 providers x 4 thread counts x 3 replications (value - d, value,
    value + d), optionally x a swept commit interval; one failed run (ignored)."""
    rows = []
    for provider, t, rep, interval in product(["gcp", "s3x"], THREADS, WRITER_REPS, intervals):
        ok, att = _cas(provider, t)
        d = (rep - 1) * 0.1
        r = {c: 50.0 if "latency" in c else 0.0 for c in METRICS}
        r.update({"provider": provider, "backend": "storage", "num_tables": 1, "fast_append_ratio": 1.0,
                  "inter_arrival_ms": 100.0, "inter_arrival_distribution": "exponential",
                  "catalog_latency_ms": np.nan, "table_selection": "uniform", "zipf_alpha": np.nan,
                  "max_retries": 0, "writers": t, "writers_mode": "closed",
                  "interval_ms": np.nan if interval is None else interval, "think_ms": 0.0, "shape": "object",
                  "storage.provider": provider, "workload.writers.count": t,
                  "config_hash": f"{provider}-{t}-{interval}", "replication": rep, "status": "ok", "error": "",
                  "wall_s": 1.0, "events": 100, "throughput_cps": ok + d, "attempts_cps": att + 2 * d,
                  "attempt_failure_share": 1 - ok / att, "success_rate": ok / att})
        if interval is not None:
            r["workload.writers.interval_ms"] = interval
        rows.append(r)
    rows.append({**rows[0], "replication": 3, "status": "failed", "error": "boom", "throughput_cps": np.nan})
    return pd.DataFrame(rows)


def test_writers_table_means_and_ci():
    from sim.report.writers import is_writers_sweep, writers_cells, writers_table
    df = make_writers_results()
    assert is_writers_sweep(df) and not is_writers_sweep(make_results())
    agg, keys = writers_table(df)
    assert keys == ["storage.provider", "workload.writers.count"]     # `provider`, `writers` mirror them
    unswept = df.drop(columns=["workload.writers.count"])                # the count from the standard column
    assert is_writers_sweep(unswept) and writers_table(unswept)[1] == ["storage.provider", "writers"]
    assert agg["storage.provider"].tolist() == ["s3x"] * 4 + ["gcp"] * 4          # the report's provider order
    assert (agg["n_reps"] == 3).all()                                              # the failed run left out
    r = agg[(agg["storage.provider"] == "s3x") & (agg["workload.writers.count"] == 4)].iloc[0]
    assert r["throughput_cps"] == pytest.approx(40.0) and r["attempts_cps"] == pytest.approx(80.0)
    assert r["attempt_failure_share"] == pytest.approx(0.5) and r["attempt_failure_share_ci95"] == 0.0
    # three replications v - d, v, v + d: sample std d, half-width t(.975, 2) d / sqrt(3)
    t2 = stats.t.ppf(0.975, 2)
    assert r["throughput_cps_ci95"] == pytest.approx(t2 * 0.1 / np.sqrt(3))
    assert r["attempts_cps_ci95"] == pytest.approx(t2 * 0.2 / np.sqrt(3))
    cells = writers_cells(agg, keys)
    assert list(cells.columns) == ["provider", "writers", "success/s", "attempts/s", "failure share",
                                   "replications"]
    c = cells.iloc[2]
    assert (c["provider"], c["writers"]) == ("s3x", "4")
    assert c["success/s"] == f"40.0 \u00b1 {t2 * 0.1 / np.sqrt(3):.2f}" and c["failure share"] == "50.0 % \u00b1 0.0 %"


def test_write_report_writers_section_first(tmp_path):
    d = tmp_path / "cas-bench"
    d.mkdir()
    make_writers_results().to_parquet(d / "results.parquet", index=False)
    text = write_report(d).read_text()
    assert re.findall(r'<h2 id="([^"]+)"', text)[0] == "writers"
    srcs = [s for s in re.findall(r'<img src="([^"]+)"', text) if "/writers_" in s]
    assert sorted(Path(s).name for s in srcs) == ["writers_attempt_failure_share.png", "writers_attempts_cps.png",
                                                  "writers_throughput_cps.png"]
    for s in srcs:
        assert (d / "report" / s).stat().st_size > 1000
    csv = pd.read_csv(d / "report" / "writers.csv")
    assert len(csv) == 8 and {"throughput_cps_ci95", "attempts_cps_ci95", "attempt_failure_share_ci95"} <= set(
        csv.columns)
    assert re.findall(r'<h2 id="([^"]+)"', text) == ["writers", "overview", "unfinished", "failed"]
    assert not (d / "report" / "knee.csv").exists() and "Heatmap layout" not in text   # no inter-arrival grid
    assert (d / "report" / "summary.csv").exists()
    md = (d / "report" / "writers.md").read_text().splitlines()
    assert md[0] == "| provider | writers | success/s | attempts/s | failure share | replications |"
    assert len(md) == 2 + 8 and md[2].startswith("| s3x | 1 | 20.0 \u00b1 ")


def test_write_report_writers_facets(tmp_path):
    """A swept commit interval is a facet: one figure per metric and interval, the interval a table column."""
    d = tmp_path / "writers"
    d.mkdir()
    make_writers_results(intervals=(1000.0, 60000.0)).to_parquet(d / "results.parquet", index=False)
    text = write_report(d).read_text()
    srcs = [s for s in re.findall(r'<img src="([^"]+)"', text) if "/writers_" in s]
    assert len(srcs) == 6 and any("interval_ms-60000" in s for s in srcs)
    assert len(pd.read_csv(d / "report" / "writers.csv")) == 16
    head = (d / "report" / "writers.md").read_text().splitlines()[0]
    assert head == "| provider | interval_ms | writers | success/s | attempts/s | failure share | replications |"


# -------------------------------------------------------------------------------- writers-knee sweeps

#: the knee as the search reports it (sim.knee.search `_reported`) per search status; "inf": an unbounded crossing
REPORTED = {k: {"knee_status": st, "knee_reason": why, "knee_bound_writers": bound} for k, st, why, bound in (
    ("ok", "ok", "", np.nan), ("max_points", "ok", "", np.nan),
    ("inf", "undecided", "its 95 % CI is unbounded", np.nan), ("below_range", "below_range", "", 1.0),
    ("above_range", "above_range", "", np.nan), ("failed", "undecided", "the search failed: boom", np.nan))}


def make_writers_knees() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A writers-knee sweep's knees.parquet and knee_points.parquet as sim.sweep.knee writes them: interval x
    provider x design (the design fixes its retries), every status; the points give each cell's most writers."""
    inf, nan = np.inf, np.nan
    cells = {   # (interval, provider, design): status, knee, low, high, crossing, its low, its high
        (10000, "s3", "file"): ("ok", 32, 30, 33, 32.8, 30.8, 33.9),
        (10000, "s3", "log"): ("ok", 81, 81, inf, 81.9, 81.2, inf),
        (10000, "gcp", "file"): ("ok", 3, 2, 3, 3.4, 2.9, 3.8),
        (10000, "gcp", "log"): ("below_range", 0, 0, 0, 0.7, 0.5, 0.9),
        (60000, "s3", "file"): ("above_range", nan, nan, nan, nan, nan, nan),
        (60000, "s3", "log"): ("above_range", nan, nan, nan, nan, nan, nan),
        (60000, "gcp", "file"): ("failed", nan, nan, nan, nan, nan, nan),
        (60000, "gcp", "log"): ("max_points", 52, 51, 53, 52.4, 51.8, 53.1),
    }
    knees, points = [], []
    for (interval, prov, design), (status, *w) in cells.items():
        params = {"workload.writers.interval_ms": interval, "storage.provider": prov, "design": design,
                  "catalog": "{}", "provider": prov, "max_retries": 10 if design == "file" else 15,
                  "interval_ms": float(interval), "writers_mode": "periodic"}
        knees.append({**params, "status": status, "unit": "writers", **REPORTED[status if w[5] != inf else "inf"],
                      **dict(zip(["writers", "writers_low", "writers_high", "writers_crossing",
                                  "writers_crossing_low", "writers_crossing_high"], map(float, w))),
                      "offered_cps": nan, "offered_cps_low": nan, "offered_cps_high": nan,
                      "success_rate": 0.95 if w[0] == w[0] else nan, "throughput_cps": 2.0 if w[0] == w[0] else nan,
                      "measured_offered_cps": 2.1 if w[0] == w[0] else nan,
                      "commit_latency_mean_ms": 900.0, "commit_latency_p99_ms": 3000.0,
                      "runs": 10, "full_runs": 8, "simulated_hours": 5.0})
        most = 512 if status == "above_range" else 128
        points += [{**params, "phase": "pilot", "writers": n, "value": n, "runs": 1} for n in (1, most // 2, most)]
    return pd.DataFrame(knees), pd.DataFrame(points)


def test_writers_knees_table_reads_every_status():
    from sim.report import writers_knees as wk
    knees, points = make_writers_knees()
    assert wk.is_writers_knees(knees) and not wk.is_writers_knees(knees.drop(columns="unit"))
    lay = wk.layout(knees)
    assert lay == {"x": "interval_ms", "hue": "provider", "facet": "design", "groups": []}  # retries: by design
    table, _ = wk.writers_knees_table(knees, points)
    assert table[["interval_ms", "design", "provider"]].values.tolist()[:4] == [
        [10000.0, "file", "s3"], [10000.0, "file", "gcp"], [10000.0, "log", "s3"], [10000.0, "log", "gcp"]]
    key = list(zip(table["interval_ms"], table["provider"], table["design"]))
    assert dict(zip(key, table["knee_text"])) == {
        (10000.0, "s3", "file"): "32 [30, 33] writers", (10000.0, "s3", "log"): "undecided (its 95 % CI is unbounded)",
        (10000.0, "gcp", "file"): "3 [2, 3] writers", (10000.0, "gcp", "log"): "below_range (< 1 writer)",
        (60000.0, "s3", "file"): "above_range (> 512 writers)", (60000.0, "s3", "log"): "above_range (> 512 writers)",
        (60000.0, "gcp", "file"): "undecided (the search failed: boom)",
        (60000.0, "gcp", "log"): "52 [51, 53] writers"}
    assert table["plotted"].tolist() == pytest.approx([32, 3, np.nan, 0, 512, np.nan, 512, 52], nan_ok=True)
    assert table["most_writers"].tolist() == [128, 128, 128, 128, 512, 128, 512, 128]
    assert wk.writers_knees_table(knees, None)[0]["knee_text"].iloc[4] == "above_range"      # no points: no bound
    wide = wk.pivot(table, lay)
    assert list(wide.columns) == ["interval_ms", "design", "s3", "gcp"]
    assert wide.values.tolist()[1] == ["10s", "log", "undecided (its 95 % CI is unbounded)",
                                       "below_range (< 1 writer)"]
    # a parameter that the provider and the design do not fix gets figures of its own
    more = pd.concat([knees.assign(**{"commit.max_retries": r}) for r in (1, 3)], ignore_index=True)
    assert wk.layout(more)["groups"] == ["commit.max_retries"]
    assert wk.layout(knees[knees["design"] == "file"].drop(columns="design"))["facet"] is None


def test_write_report_of_a_writers_knee_sweep(tmp_path):
    knees, points = make_writers_knees()
    knees.to_parquet(tmp_path / "knees.parquet", index=False)
    points.to_parquet(tmp_path / "knee_points.parquet", index=False)
    text = write_report(tmp_path).read_text()
    out = tmp_path / "report"
    assert re.findall(r'<h2 id="([^"]+)"', text) == ["writers-knee", "knees"]
    assert not (out / "tiers.csv").exists()                           # the load knee's picture needs offered_cps
    srcs = re.findall(r'<img src="([^"]+)"', text)
    assert srcs == ["figures/writers_knee.png"] and (out / srcs[0]).stat().st_size > 10_000
    md = (out / "writers_knees.md").read_text().splitlines()
    assert md[0] == "| interval_ms | design | s3 | gcp |" and len(md) == 2 + 4
    assert md[5] == "| 60s | log | above_range (> 512 writers) | 52 [51, 53] writers |"
    csv = pd.read_csv(out / "writers_knees.csv")
    assert len(csv) == 8 and csv["knee_status"].tolist().count("below_range") == 1
    for cell in ("below_range (&lt; 1 writer)", "above_range (&gt; 512 writers)",
                 "undecided (its 95 % CI is unbounded)", "81.9 [81.2, \u221e]", "0.70 [0.50, 0.90]"):
        assert cell in text


def test_writers_knee_report_shows_missed_intervals_and_lag_when_the_record_has_them(tmp_path):
    knees, points = make_writers_knees()
    write_report_dir = tmp_path / "plain"
    write_report_dir.mkdir()
    knees.to_parquet(write_report_dir / "knees.parquet", index=False)
    assert "missed intervals" not in write_report(write_report_dir).read_text()    # main's record has neither
    knees = knees.assign(missed_interval_share=0.031, commit_lag_mean_ms=2500.0)
    knees.to_parquet(tmp_path / "knees.parquet", index=False)
    text = write_report(tmp_path).read_text()
    assert "<th>missed intervals</th>" in text.replace(' class=""', "") and "3.1 %" in text and "2.50s" in text
    csv = pd.read_csv(tmp_path / "report" / "writers_knees.csv")
    assert csv["missed_interval_share"].eq(0.031).all() and "commit_lag_p99_ms" not in csv.columns


# --------------------------------------------------------------------------------------------
# one offered load per configuration (a sweep of other parameters: faults, designs): no knee to read

def test_write_report_of_one_load_per_configuration(tmp_path):
    """A sweep that runs one load per configuration has no success curve: its page opens on each configuration's
    results (means +- CI), writes no knee.csv and prints no knees line; the outcomes its clients were not told are
    columns only where a run has one."""
    from sim.report.knee_commands import unbounded_note
    d = tmp_path / "one_load"
    d.mkdir()
    df = make_results()
    df = df[(df.inter_arrival_ms == 100.0) & (df.status == "ok")].copy()
    df["unknown"] = np.where(df.provider == "s3", 3.0, 0.0)
    df["duplicated"] = 0.0
    df.to_parquet(d / "results.parquet", index=False)
    text = write_report(d).read_text()
    headings = re.findall(r'<h2 id="([^"]+)"', text)
    assert headings[0] == "results" and "knee" not in " ".join(headings)
    assert not (d / "report" / "knee.csv").exists() and unbounded_note(d) is None
    assert "so no knee is read" in text and ">unknown</th>" in text and ">duplicated</th>" not in text
    table = text[text.index('id="results"'):text.index("</table>", text.index('id="results"'))]
    assert table.count("<tr>") == 1 + df.config_hash.nunique()     # its head, then one row a configuration


def test_a_default_facet_the_given_axes_determine_is_left_out():
    """report: {cols: design}: the catalog latency each design comes with (and its backend) splits no cell."""
    from sim.report.aggregate import resolve_layout
    rows = [dict(design=dz, catalog_latency_ms=lat, backend=be, num_tables=1, inter_arrival_ms=100.0,
                 **{"faults.commit.lost_answer": r}, status="ok")
            for dz, lat, be in (("file", np.nan, "storage"), ("rest", 10.0, "service"), ("log", np.nan, "storage"))
            for r in (0.001, 0.01)]
    layout, _ = resolve_layout(pd.DataFrame(rows), {"rows": "faults.commit.lost_answer", "cols": "design"})
    assert layout["facets"] == []
