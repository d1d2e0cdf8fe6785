"""The report directory: figures, knee table, notes and ``index.html``.

``write_report(DIR)`` reads ``DIR/results.parquet`` (and ``DIR/per_table.parquet`` when
present) and writes ``DIR/report/``::

    index.html          open from disk; relative links only
    knee.csv            knee ("usable throughput") per group
    summary.csv         replication means and 95 % CI half-widths per configuration
    writers.csv, .md    a writers sweep's (``workload.writers.count`` varies): success/s, attempts/s and
                        failure share per provider x writers, means and 95 % CIs (sim.report.writers); such
                        a report has no heatmaps, curves nor knee.csv (no inter-arrival grid)
    writers_knees.csv, .md  a writers-knee sweep's (knees.parquet with `unit` writers): the knee [95 % CI] and
                        status per cell (sim.report.writers_knees), in place of the knee picture and tiers.csv
    figures/*.png       heatmaps, latency-throughput curves, per-rank heatmaps
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..knee.status import gain_text, knee_text
from ..results_io import atomic_write_csv, atomic_write_text, staged_dir
from . import designs as design_cmp
from . import plots
from . import writers as writers_cmp
from . import writers_knees as wknees
from .aggregate import (SUCCESS_THRESHOLD, _hashable, aggregate, format_value, knee_commits, knee_group_columns,
                        knee_picture_layout, ok_rows, parameter_columns, resolve_layout, tiers_table,
                        varying_parameters)
from .knee_commands import report_knees
from .labels import axis_label, fmt_duration, fmt_number, metric_title

#: heatmap metrics, in report order
HEATMAP_METRICS = ["success_rate", "commit_latency_p99_ms", "throughput_cps", "commit_latency_mean_ms"]
#: shown when they carry information
OPTIONAL_HEATMAP_METRICS = ["catalog_conflict_share", "unfinished_share"]

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1400px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; max-width: 75em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.8em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.5em 1em; margin: 1em 0; }
.muted { color: #666; font-size: 0.9em; }
nav ul { columns: 2; }
"""


# --------------------------------------------------------------------------------------------
# small HTML helpers
# --------------------------------------------------------------------------------------------

def _e(s) -> str:
    return html.escape(str(s))


def _table(df: pd.DataFrame, left: set[str] = frozenset()) -> str:
    head = "".join(f'<th class="{"l" if c in left else ""}">{_e(c)}</th>' for c in df.columns)
    body = []
    for _, r in df.iterrows():
        cells = "".join(f'<td class="{"l" if c in left else ""}">{_e(r[c])}</td>' for c in df.columns)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _figure(path: Path, caption: str, base: Path) -> str:
    rel = path.relative_to(base).as_posix()
    return (f'<figure><a href="{_e(rel)}"><img src="{_e(rel)}" alt="{_e(path.stem)}" '
            f'loading="lazy"></a><figcaption>{_e(caption)}</figcaption></figure>')


def _figures(figs: list[tuple[Path, str]], base: Path) -> str:
    return "".join(_figure(p, c, base) for p, c in figs)


def _num(v, f=fmt_number) -> str:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    return "\u2013" if not math.isfinite(v) else f(v)


def _val(v) -> str:
    return "\u2013" if isinstance(v, float) and math.isnan(v) else format_value(v)


def _pct(v) -> str:
    return _num(v, lambda x: f"{100 * x:.1f} %")


def _dur(v) -> str:
    return _num(v, fmt_duration)


# --------------------------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------------------------

def _knee_html(knee: pd.DataFrame, keys: list[str], load: str) -> str:
    rows = []
    for _, r in knee.iterrows():
        d = {k: format_value(r[k]) for k in keys}
        d["knee (c/s) [95 % CI], or status"] = knee_text(r)
        d["offered (/s) [95 % CI]"] = (f"{_num(r['knee_offered_cps'])} [{_num(r['knee_offered_cps_low'])}, "
                                       f"{_num(r['knee_offered_cps_high'])}]" if r["knee_status"] == "ok" else "\u2013")
        d[f"at {axis_label(load)}"] = _val(r["knee_inter_arrival"])
        d["success"] = _pct(r["knee_success_rate"])
        d["VO success"] = _pct(r["knee_vo_success_rate"])
        d["FA mean"] = _dur(r["fa_latency_mean_ms"])
        d["VO mean"] = _dur(r["vo_latency_mean_ms"])
        d["FA P99"] = _dur(r["fa_p99_ms"])
        d["VO P99"] = _dur(r["vo_p99_ms"])
        d["max throughput (c/s)"] = _num(r["max_throughput_cps"])
        d[f"max at {axis_label(load)}"] = _val(r["max_throughput_inter_arrival"])
        rows.append(d)
    return _table(pd.DataFrame(rows), left=set(keys))


def _band(v, lo, hi) -> str:
    return f"{_num(v)} [{_num(lo)}, {_num(hi)}]" if v == v else "\u2013"


def _knee_first(knees: pd.DataFrame, out: Path, figdir: Path, what: str) -> list[tuple[str, str, str]]:
    """The report's first screen: the knee picture, then the tiers table generated from the same knees."""
    layout = knee_picture_layout(knees)
    k = knee_commits(knees)
    path, cap = plots.knee_picture(k, layout, figdir, what)
    tiers = tiers_table(knees, layout)
    rows = []
    for _, r in tiers.iterrows():
        d = {axis_label(c): format_value(r[c]) for c in (layout["hue"], layout["facet"]) if c}
        d[f"single-table knee (c/s) at {format_value(r['single_tables'])}"] = knee_text(r, "single_")
        d[f"multi-table knee (c/s) at {format_value(r['multi_tables'])}"] = knee_text(r, "multi_")
        d["gain"] = gain_text(r)
        rows.append(d)
    tiers.to_csv(out / "tiers.csv", index=False)
    body = ("<p>Tiers: per line and mix, the knee with one table and with the most tables, commits/s with "
            "the 95 % band in brackets (<a href=\"tiers.csv\">tiers.csv</a>).</p>" + _table(pd.DataFrame(rows)))
    return [("knee-picture", "Usable throughput", _figure(path, cap, out)), ("tiers", "Tiers", body)]


def _knee_search_html(knees: pd.DataFrame) -> str:
    """The long table of a knee sweep: one row per cell."""
    keys = [c for c in parameter_columns(knees) if c in knees.columns and _nunique_safe(knees[c]) > 1]
    rows = []
    for _, r in knees.iterrows():
        d = {axis_label(c): format_value(r[c]) for c in keys}
        d["search status"] = r["status"]
        d["knee (c/s) [95 % CI], or status"] = knee_text(r)
        d["offered (arrivals/s) [95 % CI]"] = _band(r["offered_cps"], r["offered_cps_low"], r["offered_cps_high"])
        d["CI half-width"] = _pct(r["ci95_halfwidth_rel"])
        d["success"] = _pct(r["success_rate"])
        d["VO success"] = _pct(r["vo_success_rate"])
        d["mean latency"] = _dur(r["commit_latency_mean_ms"])
        d["P99"] = _dur(r["commit_latency_p99_ms"])
        d["runs"] = int(r["runs"])
        rows.append(d)
    head = (f"<p>{_searches(knees)} (<a href=\"../knees.csv\">knees.csv</a>). The knee is the highest offered "
            "rate at which success (and VO success for a mix) is at least the threshold, estimated where the "
            "success curve crosses it by a binomial (logistic) regression of success on log rate over independent "
            "full-length runs around it, with a Fieller 95 % CI (over-dispersion estimated from the runs). "
            "Throughput and latencies are read off least-squares lines through the same runs, at the knee.</p>")
    return head + _table(pd.DataFrame(rows), left=set(axis_label(c) for c in keys))


def _searches(knees: pd.DataFrame) -> str:
    """What a knee sweep cost: its searches, runs and simulated hours."""
    hours = float(pd.to_numeric(knees["simulated_hours"], errors="coerce").sum())
    return f"{len(knees)} knee searches, {int(knees['runs'].sum())} runs, {hours:,.0f} simulated hours"


def _nunique_safe(s: pd.Series) -> int:
    return int(s.astype(str).nunique())


def _config_label(row, cols: list[str]) -> str:
    return ", ".join(f"{c}={format_value(row[c])}" for c in cols if c in row.index) or "(single configuration)"


def _unfinished_html(ok: pd.DataFrame, agg: pd.DataFrame, varying: list[str]) -> str:
    if ok.empty or "unfinished" not in ok.columns or "arrived" not in ok.columns:
        return "<p>No unfinished-transaction counts in the results table.</p>"
    arrived = pd.to_numeric(ok["arrived"], errors="coerce").sum()
    unfinished = pd.to_numeric(ok["unfinished"], errors="coerce").sum()
    share = unfinished / arrived if arrived > 0 else float("nan")
    per = pd.to_numeric(agg.get("unfinished_share", pd.Series(dtype=float)), errors="coerce")
    parts = [
        "<p>Transactions arriving in the measurement window that had not ended when the run's drain "
        "limit (<code>drain_limit_ms</code>) expired are <em>unfinished</em>: they are counted, but "
        "left out of the success rate and the commit latencies. Over all successful runs, "
        f"<strong>{int(unfinished):,} of {int(arrived):,} window transactions "
        f"({_pct(share)}) were unfinished</strong>.</p>"]
    if per.notna().any():
        parts.append(f"<p>Per configuration (mean over replications): median {_pct(per.median())}, "
                     f"maximum {_pct(per.max())}; {int((per > 0.01).sum())} of {int(per.notna().sum())} "
                     "configurations above 1 %.</p>")
        top = agg.assign(_u=per).sort_values("_u", ascending=False)
        top = top[top["_u"] > 0].head(10)
        if len(top):
            t = pd.DataFrame({
                "configuration": [_config_label(r, varying) for _, r in top.iterrows()],
                "unfinished share": [_pct(v) for v in top["_u"]],
                "success rate": [_pct(v) for v in top.get("success_rate", pd.Series(np.nan, index=top.index))],
            })
            parts.append("<p>Configurations with the largest unfinished share:</p>"
                         + _table(t, left={"configuration"}))
    return "".join(parts)


def _failed_html(results: pd.DataFrame, ok: pd.DataFrame, varying: list[str]) -> str:
    if "status" not in results.columns:
        return "<p>No status column: all rows treated as successful.</p>"
    failed = results[results["status"].astype(str) != "ok"]
    if failed.empty:
        return "<p>No failed runs: every configuration and replication finished.</p>"
    key = "config_hash" if "config_hash" in results.columns else None
    rows = []
    groups = failed.groupby(key, sort=False) if key else [(None, failed)]
    ok_hashes = set(ok[key]) if key else set()
    for h, g in groups:
        r = g.iloc[0]
        err = str(r.get("error", "") or "").strip().splitlines()
        err = err[-1] if err else ""
        rows.append({
            "configuration": _config_label(r, varying),
            "config_hash": "" if h is None else str(h)[:12],
            "failed replications": ", ".join(str(x) for x in sorted(g["replication"].tolist()))
            if "replication" in g.columns else str(len(g)),
            "in figures": "yes (other replications)" if h in ok_hashes else "no (missing cells)",
            "error": err[:300],
        })
    n_cfg = results[key].nunique() if key else 1
    head = (f"<p>{len(failed)} of {len(results)} runs failed, in {len(rows)} of {n_cfg} "
            "configurations. Failed runs are left out of every figure and table; a configuration "
            "without any successful replication shows as an 'n/a' cell.</p>")
    return head + _table(pd.DataFrame(rows), left={"configuration", "config_hash", "error"})


def _per_table_agg(results_dir: Path, results: pd.DataFrame) -> pd.DataFrame | None:
    p = results_dir / "per_table.parquet"
    if not p.exists():
        return None
    pt = pd.read_parquet(p)
    if pt.empty or "table_rank" not in pt.columns:
        return None
    if {"config_hash", "replication"} <= set(pt.columns) and "config_hash" in results.columns:
        if "status" in results.columns and "replication" in results.columns:
            st = results[["config_hash", "replication", "status"]].drop_duplicates(
                ["config_hash", "replication"])
            pt = pt.merge(st, on=["config_hash", "replication"], how="left")
            pt = pt[pt["status"].isna() | (pt["status"].astype(str) == "ok")].drop(columns="status")
        missing = [c for c in parameter_columns(results) if c not in pt.columns]
        if missing:
            pt = pt.merge(results[["config_hash"] + missing].drop_duplicates("config_hash"),
                          on="config_hash", how="left")
    by = parameter_columns(pt) + [c for c in ("config_hash", "table_rank") if c in pt.columns]
    return aggregate(pt, by)


# --------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------

def write_report(results_dir, spec_report: dict | None = None, out_dir=None) -> Path:
    """Write the report of a sweep's results directory and return the path of its index.html.

    ``results_dir`` holds ``results.parquet`` (and optionally ``per_table.parquet``);
    ``spec_report`` is the sweep file's optional ``report:`` section (keys ``rows``, ``cols``,
    ``facets``, optional ``title``). Output goes to ``results_dir/report/`` unless ``out_dir``.
    """
    results_dir = Path(results_dir)
    out = Path(out_dir) if out_dir is not None else results_dir / "report"
    with staged_dir(out, replace=True) as staging:
        _write_report_into(staging, results_dir, dict(spec_report or {}))
    return out / "index.html"


@dataclass(frozen=True)
class _Sweep:
    """What the sections of a grid sweep's report are written from, and where to."""

    out: Path                  # the (staging) report directory
    results_dir: Path
    results: pd.DataFrame      # every run
    ok: pd.DataFrame           # the finished runs
    layout: dict               # rows / cols / facets of the heatmaps
    varying: list[str]         # the parameters that take more than one value

    @property
    def figdir(self) -> Path:
        return self.out / "figures"


def _write_report_into(out: Path, results_dir: Path, spec_report: dict) -> Path:
    """The report, written into a fresh directory `out` (a staging directory that replaces the old report whole
    only once every file is written, so a full disk leaves the old report, not half a new one)."""
    title = spec_report.get("title") or f"Sweep report: {results_dir.resolve().name}"
    if (results_dir / "knees.parquet").is_file():      # a knee sweep: its knees are the report
        knees = pd.read_parquet(results_dir / "knees.parquet")
        if wknees.is_writers_knees(knees):
            return _write_index(out, title, _writers_knee_sections(knees, results_dir, out))
        sections = _knee_first(knees, out, out / "figures", "Knees measured by knee search (docs/knee.md).")
        sections.append(("knees", "Knees per cell", _knee_search_html(knees)))
        return _write_index(out, title, sections)
    results = pd.read_parquet(results_dir / "results.parquet")
    ok = ok_rows(results)
    layout, notes = resolve_layout(ok if len(ok) else results, spec_report)
    sweep = _Sweep(out, results_dir, results, ok, layout, varying_parameters(results))
    writers = writers_cmp.is_writers_sweep(ok)
    overview = _overview_html(sweep, [] if writers else notes, heatmaps=not writers)
    failed = ("failed", "Failed configurations", _failed_html(results, ok, sweep.varying))
    if ok.empty:
        return _write_index(out, title, [("overview", "Overview", overview), failed])
    agg = aggregate(ok)
    atomic_write_csv(out / "summary.csv", agg)
    unfinished = ("unfinished", "Unfinished transactions", _unfinished_html(ok, agg, sweep.varying))
    if writers:     # the writer count is the load: no inter-arrival grid to read heatmaps and knees off
        overview += '<p class="muted">Files: <a href="summary.csv">summary.csv</a>.</p>'
        return _write_index(out, title, [("writers", "Writers", _writers_html(sweep)),
                                         ("overview", "Overview", overview), unfinished, failed])
    overview += ('<p class="muted">Files: <a href="summary.csv">summary.csv</a>, '
                 '<a href="knee.csv">knee.csv</a>.</p>')
    first, knee = _knee_sections(sweep, agg)
    sections = [*first, ("overview", "Overview", overview), knee, *_figure_sections(sweep, agg),
                unfinished, failed]
    return _write_index(out, title, sections)


def _overview_html(sweep: _Sweep, notes: list[str], heatmaps: bool = True) -> str:
    """Runs, configurations and replications; the swept parameters and their values; the heatmap layout (if
    the report has heatmaps)."""
    results, layout = sweep.results, sweep.layout
    n_cfg = results["config_hash"].nunique() if "config_hash" in results.columns else len(results)
    reps = ""
    if "config_hash" in results.columns:
        per = results.groupby("config_hash").size()
        lo, hi = int(per.min()), int(per.max())
        span = str(lo) if lo == hi else f"{lo}\u2013{hi}"
        reps = f", {span} replication(s) each"
    ov = [f"<p>{len(results)} runs ({n_cfg} configurations{reps}); {len(sweep.ok)} finished, "
          f"{len(results) - len(sweep.ok)} failed.</p>"]
    if sweep.varying:
        ov.append("<p>Swept parameters:</p>" + _table(_swept_values(results, sweep.varying),
                                                       left={"parameter", "values"}))
    if heatmaps:
        ov.append(f"<p>Heatmap layout: rows = <code>{_e(layout['rows'])}</code>, columns = "
                  f"<code>{_e(layout['cols'])}</code>, one figure per combination of "
                  f"<code>{_e(', '.join(layout['facets']) or '(none)')}</code>. Every figure and table "
                  "shows means over the finished replications; <code>summary.csv</code> has the means "
                  "with 95 % confidence-interval half-widths (Student t) per configuration.</p>")
    else:
        ov.append("<p>Every figure and table shows means over the finished replications; "
                  "<code>summary.csv</code> has the means with 95 % confidence-interval half-widths (Student t) "
                  "per configuration.</p>")
    ov.extend(f'<p class="note">{_e(n)}</p>' for n in notes)
    return "".join(ov)


def _swept_values(results: pd.DataFrame, varying: list[str]) -> pd.DataFrame:
    """One row per swept parameter: its values, sorted where they sort."""
    vals = []
    for c in varying:
        u = _hashable(results, [c])[c].drop_duplicates().tolist()
        try:
            u = sorted(u)
        except TypeError:
            pass
        vals.append({"parameter": c, "values": ", ".join(format_value(v) for v in u)})
    return pd.DataFrame(vals)


def _knee_sections(sweep: _Sweep, agg: pd.DataFrame) -> tuple[list[tuple[str, str, str]], tuple[str, str, str]]:
    """knee.csv and its section; and the sections that come before the overview: the design comparison (the
    comparison the sweep was run for), then the knee picture with its tiers."""
    keys = knee_group_columns(sweep.layout)
    load = sweep.layout["cols"]
    knee = report_knees(sweep.results_dir, sweep.out, sweep.ok, keys, load)
    atomic_write_csv(sweep.out / "knee.csv", knee)
    first = []
    if "num_tables" in knee.columns and knee["knee_throughput_cps"].notna().any():
        first = _knee_first(knee, sweep.out, sweep.figdir, f"Knees read off the {load} "
                            "grid (where success crosses the threshold, by the knee search's binomial regression over "
                            "the grid's runs near the crossing; bands: its 95 % CI). `python -m sim knee` and "
                            "`knee:` sweeps place their runs for it instead.")
    if design_cmp.is_design_sweep(sweep.ok):
        first.insert(0, ("designs", "Catalog designs", _designs_html(sweep.ok, load, sweep.out, sweep.figdir)))
    n_none = int(knee["knee_throughput_cps"].isna().sum())
    kh = [f"<p>The knee (\"usable throughput\") of each {_e(', '.join(keys))} combination is where success "
          f"(committed / window arrivals: an unfinished transaction is not a success; for a mix, VO success too) "
          f"crosses {SUCCESS_THRESHOLD:.0%} over the <code>{_e(load)}</code> sweep: the binomial (logistic) "
          "regression of the knee search (<code>sim knee</code>) over the runs of the grid points near the "
          "crossing, interpolated, with its 95 % CI. Throughput, success and latencies are at the knee by least "
          "squares over the same runs; \u00b1 is the 95 % CI half-width of the knee throughput there. "
          "The last columns give the highest throughput seen regardless of success.</p>"]
    if n_none:
        kh.append(f'<p class="note">{n_none} of {len(knee)} groups have no knee in the grid (below range: '
                  "the lightest load already fails; above range: the heaviest still passes; shown as "
                  "\u2013).</p>")
    kh.append(_knee_html(knee, keys, load))
    return first, ("knee", "Knee: usable throughput", "".join(kh))


def _figure_sections(sweep: _Sweep, agg: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Heatmaps per metric, latency-throughput curves, per-rank heatmaps of Zipf runs."""
    out, figdir = sweep.out, sweep.figdir
    sections = []
    for m in _heatmap_metrics(agg):
        figs = plots.facet_heatmaps(agg, m, sweep.layout, figdir)
        sections.append((f"heat-{m}", f"Heatmaps: {metric_title(m)}", _figures(figs, out)))
    if {"throughput_cps", "commit_latency_mean_ms"} <= set(agg.columns):
        figs = plots.latency_throughput_curves(agg, sweep.layout, figdir)
        sections.append(("curves", "Latency vs throughput", _figures(figs, out)))
    pta = _per_table_agg(sweep.results_dir, sweep.results)
    if pta is not None and len(pta):
        figs = plots.per_rank_heatmaps(pta, sweep.layout, figdir)
        if figs:
            sections.append(("per-rank", "Per table rank (Zipf)", _figures(figs, out)))
    return sections


def _heatmap_metrics(agg: pd.DataFrame) -> list[str]:
    """HEATMAP_METRICS present, then the optional ones that are positive somewhere."""
    metrics = [m for m in HEATMAP_METRICS if m in agg.columns]
    for m in OPTIONAL_HEATMAP_METRICS:
        if m in agg.columns and pd.to_numeric(agg[m], errors="coerce").fillna(0).gt(0).any():
            metrics.append(m)
    return metrics


def _designs_html(agg: pd.DataFrame, load: str, out: Path, figdir: Path) -> str:
    """The design comparison: one figure of knees, then the headline table (1 and 50 tables, FA and 90/10)."""
    knee = design_cmp.design_knees(agg, load)
    atomic_write_csv(out / "design_knees.csv", knee)
    keys = design_cmp.design_group_columns_of(knee)
    extra = [c for c in keys if c not in design_cmp.DESIGN_KEYS]
    figs = plots.design_knees(knee, figdir, extra)
    parts = [_figures(figs, out)]
    tables = [t for t in (1, 50) if t in set(knee["num_tables"])] or sorted(set(knee["num_tables"]))[:2]
    mixes = [f for f in (1.0, 0.9) if f in set(knee["fast_append_ratio"])] or \
        sorted(set(knee["fast_append_ratio"]), reverse=True)[:2]
    head = design_cmp.headline(knee, tables, mixes)
    parts.append(f"<p>Knee (commits/s) per design and provider at {', '.join(map(str, tables))} table(s). "
                 "Square brackets: the knee's 95 % band (where the fit bounds it). '&ge;': every load run for that "
                 "design passes (above range): its highest throughput, a lower bound; 'below range': the lightest "
                 "load already fails. In parentheses, at the knee: the share of window transactions still "
                 "unfinished when the run stopped (5 % or more) and the throttled (429) resends per commit. "
                 "All knees: "
                 '<a href="design_knees.csv">design_knees.csv</a>.</p>')
    parts.append(_table(head, left={"mix", "design", *extra}))
    return "".join(parts)


def _writers_html(sweep: _Sweep) -> str:
    """The writers comparison (cas-bench): a figure per metric against the writer count, then the table of
    means and 95 % CIs per provider x writers (writers.csv: the numbers; writers.md: the table as shown)."""
    agg, keys = writers_cmp.writers_table(sweep.results)
    atomic_write_csv(sweep.out / "writers.csv", agg)
    cells = writers_cmp.writers_cells(agg, keys)
    atomic_write_text(sweep.out / "writers.md", writers_cmp.markdown(cells))
    figs = plots.writers_figures(agg, keys, sweep.figdir)
    return (_figures(figs, sweep.out) + "<p>Per provider and number of writers: the mean over replications "
            "± the half-width of its 95 % confidence interval (Student t). Files: "
            '<a href="writers.csv">writers.csv</a>, <a href="writers.md">writers.md</a>.</p>'
            + _table(cells, left={"provider"}))


def _writers_knee_sections(knees: pd.DataFrame, results_dir: Path, out: Path) -> list[tuple[str, str, str]]:
    """A writers-knee sweep's report: the figure and the table of knees as read (writers_knees.csv, .md), then
    the long table of every cell."""
    p = results_dir / "knee_points.parquet"
    table, lay = wknees.writers_knees_table(knees, pd.read_parquet(p) if p.is_file() else None)
    atomic_write_csv(out / "writers_knees.csv", table)
    wide = wknees.pivot(table, lay)
    atomic_write_text(out / "writers_knees.md", writers_cmp.markdown(wide))
    figs = plots.writers_knee_figures(table, lay, out / "figures")
    head = ("<p>The writers knee of each cell, the most writers at the success threshold, with its 95 % CI "
            "[floor(lo), floor(hi)] (docs/knee.md#writers-knee); <code>below_range</code>: not even one writer "
            "passes (0); <code>above_range</code>: the most writers tried still pass (&gt; that count). Files: "
            '<a href="writers_knees.csv">writers_knees.csv</a>, <a href="writers_knees.md">writers_knees.md</a>, '
            '<a href="../knees.csv">knees.csv</a>.</p>')
    body = _figures(figs, out) + head + _table(wide, left={c.split(".")[-1] for c in wknees.key_columns(lay)})
    cells = _writers_cells_html(table, wknees.key_columns(lay), knees)
    return [("writers-knee", "Writers knee", body), ("knees", "Knees per cell", cells)]


def _writers_cells_html(table: pd.DataFrame, keys: list[str], knees: pd.DataFrame) -> str:
    """Every cell's search: status, knee and crossing with their CIs, the metrics at the knee, its cost."""
    rows = []
    for _, r in table.iterrows():
        d = {c.split(".")[-1]: wknees.value_label(c, r[c]) for c in keys}
        d["search status"] = r["status"]
        d["writers knee [95 % CI]"] = r["knee_text"]
        d["crossing N* [95 % CI]"] = wknees.crossing_label(r["writers_crossing"], r["writers_crossing_low"],
                                                           r["writers_crossing_high"])
        d["most writers run"] = _val(r["most_writers"])
        for m, title in wknees.AT_KNEE.items():
            if m in table.columns:
                d[title] = (_pct if m.endswith(("_rate", "_share")) else _dur if m.endswith("_ms") else _num)(r[m])
        d["runs"] = int(r["runs"])
        d["hours"] = _num(r["simulated_hours"])
        rows.append(d)
    head = (f"<p>{_searches(knees)}. "
            "The crossing N* is where the binomial regression of success on log writers meets the threshold, "
            "with its Fieller 95 % interval; the knee is its floor. Metrics are read off least-squares lines "
            "through the fit's runs at the knee (arrivals/s: the rate its writers offered there).</p>")
    return head + _table(pd.DataFrame(rows), left={c.split(".")[-1] for c in keys} | {"status"})


def _write_index(out: Path, title: str, sections) -> Path:
    nav = "".join(f'<li><a href="#{a}">{_e(h)}</a></li>' for a, h, _ in sections)
    body = "".join(f'<h2 id="{a}">{_e(h)}</h2>{s}' for a, h, s in sections)
    doc = (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{_e(title)}</title>'
           f"<style>{_CSS}</style></head><body><h1>{_e(title)}</h1>"
           f"<nav><ul>{nav}</ul></nav>{body}</body></html>")
    index = out / "index.html"
    atomic_write_text(index, doc)
    return index
