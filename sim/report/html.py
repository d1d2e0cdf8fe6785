"""The report directory: the page (``index.html``), its figures and tables.

``write_report(DIR)`` reads ``DIR/results.parquet`` (and ``DIR/per_table.parquet`` when
present) and writes ``DIR/report/``::

    index.html          open from disk; relative links only
    knee.csv            knee ("usable throughput") per group
    tiers.csv           per line and mix, the knee at the fewest and the most tables, and the gain
    summary.csv         replication means and 95 % CI half-widths per configuration
    writers.csv, .md    a writers sweep's (``workload.writers.count`` varies): success/s, attempts/s and
                        failure share per provider x writers, means and 95 % CIs (sim.report.writers); such
                        a report has no heatmaps, curves nor knee.csv (no inter-arrival grid)
    writers_knees.csv, .md  a writers-knee sweep's (knees.parquet with `unit` writers): the knee [95 % CI] and
                        status per cell (sim.report.writers_knees), in place of the knee picture and tiers.csv
    figures/*.png       the knee picture, latency-throughput curves (heatmaps are HTML tables in the page)

A grid sweep's page opens on its answer: the knee per line, mix and table count, the tiers, the knee picture. One
that runs one offered load per configuration has no knee: its page opens on each configuration's results.
Then its heatmaps and latency curves, one section per value of the first facet (the provider), then the full
knee table, the runs and layout, unfinished transactions and failed runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..results_io import atomic_write_csv, atomic_write_text, staged_dir
from . import designs as design_cmp
from . import headroom
from . import html_heatmaps as heat
from . import plots
from . import writers as writers_cmp
from . import writers_knees as wknees
from .aggregate import (_determines, _hashable, aggregate, format_value, knee_commits, knee_group_columns,
                        knee_picture_layout, ok_rows, parameter_columns, resolve_layout, tiers_table,
                        varying_parameters)
from .knee_commands import report_knees
from .knee_html import SHORT_NOTE, KneeNotes, knee_search_html, knee_summary, knee_table_html, tiers_html
from .labels import axis_label, order_key, slug
from .markup import dur as _dur
from .markup import e as _e
from .markup import figures as _figures
from .markup import num as _num
from .markup import pct as _pct
from .markup import table as _table
from .markup import val as _val
from .plots.canvas import facet_groups

#: heatmap metrics, in report order
HEATMAP_METRICS = ["success_rate", "commit_latency_p99_ms", "throughput_cps", "commit_latency_mean_ms"]
#: shown when they carry information
OPTIONAL_HEATMAP_METRICS = ["catalog_conflict_share", "unfinished_in_runtime_share", "unfinished_share"]

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.2em auto;
       max-width: 1400px; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { margin: 0 0 0.2em; font-size: 1.6em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { margin: 1.1em 0 0.2em; font-size: 1.05em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; max-width: 75em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
table.knees td { white-space: nowrap; font-variant-numeric: tabular-nums; }
table.knees td[title] { cursor: help; }
sup { line-height: 0; font-size: 0.75em; } sup a { text-decoration: none; padding-left: 0.1em; }
ol.notes { font-size: 0.8em; color: #444; columns: 2 36em; column-gap: 2em; margin: 0.3em 0; padding-left: 2em; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.5em 1em; margin: 1em 0; }
.muted, .cap { color: #555; font-size: 0.9em; margin: 0.2em 0; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.1em 1.4em; list-style: none; padding: 0; margin: 0.4em 0; }
""" + heat.CSS


# --------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------

def write_report(results_dir, spec_report: dict | None = None, out_dir=None, progress: bool = False) -> Path:
    """Write the report of a sweep's results directory and return the path of its index.html.

    ``results_dir`` holds ``results.parquet`` (and optionally ``per_table.parquet``);
    ``spec_report`` is the sweep file's optional ``report:`` section (keys ``rows``, ``cols``,
    ``facets``, optional ``title``). Output goes to ``results_dir/report/`` unless ``out_dir``.
    ``progress``: a progress line when stderr is a terminal (a 900-run report takes seconds; each step named).
    """
    results_dir = Path(results_dir)
    out = Path(out_dir) if out_dir is not None else results_dir / "report"
    with _Steps(progress) as steps, staged_dir(out, replace=True) as staging:
        _write_report_into(staging, results_dir, dict(spec_report or {}), steps)
    return out / "index.html"


class _Steps:
    """The progress line on a terminal's stderr: the report's steps, each named as it starts (the one before it is
    then done). Not on a pipe or a file, whose reader wants the error line alone; cleared if the report fails."""

    def __init__(self, enabled: bool):
        from tqdm.auto import tqdm
        self.bar = tqdm(total=None, unit="step", desc="report", disable=None if enabled else True,
                        dynamic_ncols=True)
        self.started = False

    def plan(self, n: int) -> None:
        """The number of steps, once the layout is known."""
        self.bar.total = n
        self.bar.refresh()

    def __call__(self, what: str) -> None:
        if self.started:
            self.bar.update()
        self.started = True
        self.bar.set_postfix_str(what)

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        if kind is None and self.started:
            self.bar.update()
        self.bar.leave = kind is None
        self.bar.close()
        return False


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


def _write_report_into(out: Path, results_dir: Path, spec_report: dict, steps: _Steps) -> Path:
    """The report, written into a fresh directory `out` (a staging directory that replaces the old report whole
    only once every file is written, so a full disk leaves the old report, not half a new one)."""
    title = spec_report.get("title") or f"Sweep report: {results_dir.resolve().name}"
    steps("reading")
    if (results_dir / "knees.parquet").is_file():      # a knee sweep: its knees are the report
        knees = pd.read_parquet(results_dir / "knees.parquet")
        if wknees.is_writers_knees(knees):
            return _write_index(out, title, _writers_knee_sections(knees, results_dir, out))
        keys = varying_parameters(knees)     # a swept path that mirrors a standard column is no key of its own
        sections = (headroom.headroom_sections(knees, results_dir, out) if headroom.is_headroom(knees)   # a trace's
                    else _answer(knees, keys, out, "Knees measured by knee search (docs/knee.md)."))
        sections.append(("knees", "Knees per cell", knee_search_html(knees, _searches(knees))))
        return _write_index(out, title, sections, _searches(knees) + ".")
    results = pd.read_parquet(results_dir / "results.parquet")
    ok = ok_rows(results)
    layout, notes = resolve_layout(ok if len(ok) else results, spec_report)
    sweep = _Sweep(out, results_dir, results, ok, layout, varying_parameters(results))
    writers = writers_cmp.is_writers_sweep(ok)
    overview = _overview_html(sweep, [] if writers else notes, heatmaps=not writers)
    failed = ("failed", "Failed runs", _failed_html(results, ok, sweep.varying))
    if ok.empty:
        return _write_index(out, title, [("overview", "Runs and layout", overview), failed], _lede(sweep))
    steps("aggregating")
    agg = aggregate(ok)
    atomic_write_csv(out / "summary.csv", agg)
    unfinished = ("unfinished", "Unfinished transactions", _unfinished_html(ok, agg, sweep.varying))
    if writers:     # the writer count is the load: no inter-arrival grid to read heatmaps and knees off
        overview += '<p class="muted">Files: <a href="summary.csv">summary.csv</a>.</p>'
        return _write_index(out, title, [("writers", "Writers", _writers_html(sweep)),
                                         ("overview", "Runs and layout", overview), unfinished, failed],
                            _lede(sweep))
    groups = _heat_groups(agg, layout)
    files = '<a href="summary.csv">summary.csv</a>'
    if _has_load_axis(ok):
        files += ', <a href="knee.csv">knee.csv</a>'
        sections = _knee_sections(sweep, agg, groups, steps)
    else:           # one offered load per configuration: no success curve to read a knee off
        steps.plan(4 + len(groups))
        sections = [("results", "Results per configuration", _results_html(sweep, agg))]
        sections += _heat_sections(sweep, agg, groups, steps)
        steps("page")
    overview += f'<p class="muted">Files: {files}.</p>'
    sections += [("overview", "Runs and layout", overview), unfinished, failed]
    return _write_index(out, title, sections, _lede(sweep))


def _knee_sections(sweep: _Sweep, agg: pd.DataFrame, groups: list, steps: _Steps) -> list[tuple[str, str, str]]:
    """A grid sweep's sections from its answer to its full knee table: the knee per group (knee.csv written), the
    designs' knees where it compares designs, the tiers and knee picture, the heatmaps, the per-rank figures."""
    ok, out, layout = sweep.ok, sweep.out, sweep.layout
    steps.plan(6 + len(groups))
    steps("knee table")
    keys, load = knee_group_columns(layout), layout["cols"]
    knee = report_knees(sweep.results_dir, out, ok, keys, load)
    atomic_write_csv(out / "knee.csv", knee)
    steps("knee picture")
    sections = []
    if design_cmp.is_design_sweep(ok):
        sections.append(("designs", "Catalog designs", _designs_html(ok, load, out, sweep.figdir)))
    searched = int((knee["knee_source"] == "search").sum())
    sections += _answer(knee, keys, out, f"Knees read off the {load} grid (where success crosses the threshold, "
                        "by the knee search's binomial regression over the grid's runs near the crossing; bands: its "
                        "95 % CI)" + (f", but {searched} of {len(knee)} from knee searches of the cells the grid did "
                                      "not bound within +-5 % (knee.csv's knee_source)." if searched else
                                      ". `sim knee` and `knee:` sweeps place their runs for it instead."))
    sections += _heat_sections(sweep, agg, groups, steps)
    steps("per table rank")
    sections += _per_rank_sections(sweep)
    steps("page")
    return sections + [("knee-table", "Knee table, all columns", knee_table_html(knee, keys, load))]


# --------------------------------------------------------------------------------------------
# a sweep of one load per configuration: its results, no knee
# --------------------------------------------------------------------------------------------

#: the results table's metrics (mean +- 95 % CI half-width), and the outcomes a client was not told (shown where any
#: configuration has one: `faults`, Iceberg's reference server over several tables)
RESULT_METRICS = (("success_rate", "success", _pct), ("throughput_cps", "commits/s", _num),
                  ("commit_latency_p50_ms", "latency p50 ms", _num), ("commit_latency_p99_ms", "latency p99 ms", _num),
                  ("mean_attempts", "attempts", _num))
TOLD_METRICS = (("faults", "faulted requests"), ("unknown", "unknown"), ("unknown_landed", "... landed"),
                ("duplicated", "duplicated"), ("partial", "partial"), ("orphaned_gib", "orphaned GiB"))


def _has_load_axis(ok: pd.DataFrame) -> bool:
    """Whether the sweep runs several offered loads (a knee is read where success crosses its threshold as the load
    grows): with one, a configuration's success is a point, not a curve."""
    return "inter_arrival_ms" in ok.columns and ok["inter_arrival_ms"].nunique() > 1


def _results_html(sweep: _Sweep, agg: pd.DataFrame) -> str:
    """Per configuration (its swept parameters), the replications' means with their 95 % CI half-widths: success,
    throughput, latency, attempts, and, where any run has one, the outcomes its clients were not told (window
    transactions per run)."""
    keys = [c for c in sweep.varying if c in agg.columns]
    keys = [c for i, c in enumerate(keys) if not any(_determines(agg, k, c) for k in keys[:i])]   # (a design's)
    rows = agg.sort_values(keys, key=lambda c: c.map(lambda v: order_key(c.name, v))) if keys else agg
    table = pd.DataFrame({axis_label(k): [format_value(v) for v in rows[k]] for k in keys})
    if "orphaned_bytes" in rows.columns:
        rows = rows.assign(orphaned_gib=rows["orphaned_bytes"] / 2**30, orphaned_gib_ci95=rows.get(
            "orphaned_bytes_ci95", pd.Series(float("nan"), index=rows.index)) / 2**30)
    told = [(m, name) for m, name in TOLD_METRICS if m in rows.columns and pd.to_numeric(rows[m]).gt(0).any()]
    for m, name, fmt in RESULT_METRICS:
        if m in rows.columns:
            table[name] = [_with_ci(fmt, v, h) for v, h in zip(rows[m], rows.get(f"{m}_ci95", [None] * len(rows)))]
    for m, name in told:
        table[name] = [_with_ci(_num, v, h) for v, h in zip(rows[m], rows.get(f"{m}_ci95", [None] * len(rows)))]
    n = int(rows["n_reps"].max()) if "n_reps" in rows.columns else 1
    note = ("" if not told else " Faulted requests, unknown (of which landed), duplicated and partial outcomes "
            "and orphaned GiB are per run, over its window (docs/model/unknown-outcomes.md).")
    return (_table(table, left=set(table.columns[:len(keys)])) +
            f'<p class="cap">Each configuration runs one offered load, so no knee is read (a knee needs the load '
            f"swept: docs/knee.md). Means over up to {n} replications with their 95 % CI half-widths; success is "
            f"committed / window transactions that began to commit.{note}</p>")


def _with_ci(fmt, v, h) -> str:
    """`v +- h` in `fmt`, or `v` alone without a half-width."""
    text = fmt(v)
    return text if h is None or pd.isna(h) else f"{text} +- {fmt(h)}"


# --------------------------------------------------------------------------------------------
# the answer: knees, tiers, knee picture
# --------------------------------------------------------------------------------------------

def _answer(knees: pd.DataFrame, keys: list[str], out: Path, what: str) -> list[tuple[str, str, str]]:
    """The page's first screen: the knee per line, mix and table count (a value with its band, or a status with its
    bound), the tiers read off the same knees, and the knee picture. ``what``: where the knees come from."""
    k = knee_commits(knees)
    x = "num_tables" if "num_tables" in keys else (keys[-1] if keys else None)
    if x is None:
        return []
    notes = KneeNotes()
    summary = knee_summary(k, keys, x, notes)
    anchor, name = ("knee-table", "knee table") if "knee_command" in knees.columns else ("knees", "knees per cell")
    all_columns = f' All columns: <a href="#{anchor}">{name}</a>.'
    sections = [("knee", "Usable throughput: the knee", summary + notes.html()
                 + f'<p class="cap">{SHORT_NOTE}{all_columns}</p>')]
    if x != "num_tables" or k["num_tables"].nunique() < 2:
        return sections
    layout = knee_picture_layout(knees)
    tiers = tiers_table(knees, layout)
    atomic_write_csv(out / "tiers.csv", tiers)
    sections.append(("tiers", "Tiers", tiers_html(tiers, k, layout, notes) + '<p class="cap">Per line and mix, the '
                     "knee with the fewest and with the most tables (notes as above), and the multi-table gain "
                     '(their ratio) where both are values (<a href="tiers.csv">tiers.csv</a>).</p>'))
    if pd.to_numeric(k["knee_cps"], errors="coerce").gt(0).any():
        path, cap = plots.knee_picture(k, layout, out / "figures", what)
        sections.append(("knee-picture", "Knee against tables", _figures([(path, cap)], out)))
    return sections


def _searches(knees: pd.DataFrame) -> str:
    """What a knee sweep cost: its searches, runs and simulated hours."""
    hours = float(pd.to_numeric(knees["simulated_hours"], errors="coerce").sum())
    return f"{len(knees)} knee searches, {int(knees['runs'].sum())} runs, {hours:,.0f} simulated hours"


def _lede(sweep: _Sweep) -> str:
    """The sentence under the title: what ran, and what success means on this page."""
    results = sweep.results
    n_cfg = results["config_hash"].nunique() if "config_hash" in results.columns else len(results)
    return (f"{len(results)} runs of {n_cfg} configurations: {len(sweep.ok)} finished, "
            f"{len(results) - len(sweep.ok)} failed. Success = committed / window transactions that began to "
            "commit; one still in its runtime when the drain ended is left out and reported as its own share "
            "(unfinished transactions, below).")


# --------------------------------------------------------------------------------------------
# heatmaps and curves, one section per value of the first facet
# --------------------------------------------------------------------------------------------

def _heat_groups(agg: pd.DataFrame, layout: dict) -> list[tuple[dict, pd.DataFrame]]:
    """(values, rows) per value of the first facet (the provider), in page order; all rows when no facet."""
    facets = list(layout.get("facets", []))
    if not facets:
        return [({}, agg)]
    return sorted(facet_groups(agg, facets[:1]), key=lambda g: order_key(facets[0], g[0][facets[0]]))


def _heat_sections(sweep: _Sweep, agg: pd.DataFrame, groups: list, steps: _Steps) -> list[tuple[str, str, str]]:
    """Per group: a heatmap per metric (a panel per value of the other facets; FA and VO panels for a mix), then
    the latency-throughput curves. Colour scales are shared by every group's panels of a metric."""
    layout = sweep.layout
    rows, cols, inner = layout["rows"], layout["cols"], list(layout.get("facets", []))[1:]
    metrics = _heatmap_metrics(agg)
    lims = {m: heat.family_limits(agg, m) for m in metrics}
    lines = sorted(_hashable(agg, [rows])[rows].dropna().unique().tolist())
    curves = {"throughput_cps", "commit_latency_mean_ms"} <= set(agg.columns)
    sections = []
    for parts, sub in groups:
        label = ", ".join(f"{axis_label(c)} {format_value(v)}" for c, v in parts.items())
        steps(f"heatmaps {label}".strip())
        load = ", load falling from left to right" if "inter_arrival" in cols else ""
        body = [f'<p class="cap">Rows: {_e(axis_label(rows))}; columns: {_e(axis_label(cols))}{load}. '
                f"{heat.marking_note(sub)} {_e(heat.NA_NOTE)}{_e(plots.canvas.reps_note(sub))}</p>"]
        body += [heat.metric_block(sub, m, rows, cols, inner, lims[m]) for m in metrics]
        if curves:
            figs = plots.latency_throughput_curves(sub, layout, sweep.figdir, line_values=lines)
            body.append("<h3>Latency vs throughput</h3>" + _figures(figs, sweep.out))
        sections.append((f"heat{slug(parts)}", f"Heatmaps: {label}" if label else "Heatmaps", "".join(body)))
    return sections


def _heatmap_metrics(agg: pd.DataFrame) -> list[str]:
    """HEATMAP_METRICS present, then the optional ones that are positive somewhere."""
    metrics = [m for m in HEATMAP_METRICS if m in agg.columns]
    for m in OPTIONAL_HEATMAP_METRICS:
        if m in agg.columns and pd.to_numeric(agg[m], errors="coerce").fillna(0).gt(0).any():
            metrics.append(m)
    return metrics


def _per_rank_sections(sweep: _Sweep) -> list[tuple[str, str, str]]:
    """Zipf runs' per-table heatmaps, when the sweep wrote per_table.parquet."""
    pta = _per_table_agg(sweep.results_dir, sweep.results)
    body = heat.per_rank_blocks(pta, sweep.layout) if pta is not None and len(pta) else ""
    return [("per-rank", "Per table rank (Zipf)", body)] if body else []


# --------------------------------------------------------------------------------------------
# runs, unfinished transactions, failures
# --------------------------------------------------------------------------------------------

def _config_label(row, cols: list[str]) -> str:
    return ", ".join(f"{c}={format_value(row[c])}" for c in cols if c in row.index) or "(single configuration)"


def _unfinished_html(ok: pd.DataFrame, agg: pd.DataFrame, varying: list[str]) -> str:
    """How many window transactions had not ended when the drain limit stopped the run, and how many of those were
    still in their runtime (left out of the success rate) rather than in their commit (failures)."""
    if ok.empty or "unfinished" not in ok.columns or "arrived" not in ok.columns:
        return "<p>No unfinished-transaction counts in the results table.</p>"
    arrived = pd.to_numeric(ok["arrived"], errors="coerce").sum()
    unfinished = pd.to_numeric(ok["unfinished"], errors="coerce").sum()
    share = unfinished / arrived if arrived > 0 else float("nan")
    parts = [
        "<p>A window transaction that had not ended when the run's drain limit (<code>drain_limit_ms</code>) "
        "expired is <em>unfinished</em>. One still in its runtime (it never began to commit) is no outcome of "
        "contention: it is left out of the success rate (committed / window transactions that began to commit) and "
        "reported here as its own share. One that began to commit and had not ended is a failure. Latencies are "
        "of committed transactions. Over all finished runs, "
        f"<strong>{int(unfinished):,} of {int(arrived):,} window transactions ({_pct(share)}) were "
        "unfinished</strong>"]
    if "unfinished_in_runtime" in ok.columns:
        runtime = pd.to_numeric(ok["unfinished_in_runtime"], errors="coerce").sum()
        parts.append(f", {int(runtime):,} of them ({_pct(runtime / arrived if arrived > 0 else float('nan'))} of "
                     "the window) still in their runtime")
    parts.append(".</p>")
    share_col = next((c for c in ("unfinished_in_runtime_share", "unfinished_share") if c in agg.columns), None)
    per = pd.to_numeric(agg[share_col], errors="coerce") if share_col else pd.Series(dtype=float)
    if per.notna().any():
        what = "still in their runtime" if share_col == "unfinished_in_runtime_share" else "unfinished"
        parts.append(f"<p>Share {what}, per configuration (mean over replications): median {_pct(per.median())}, "
                     f"maximum {_pct(per.max())}; {int((per > 0.01).sum())} of {int(per.notna().sum())} "
                     "configurations above 1 %.</p>")
        top = agg.assign(_u=per).sort_values("_u", ascending=False)
        top = top[top["_u"] > 0].head(10)
        if len(top):
            t = pd.DataFrame({
                "configuration": [_config_label(r, varying) for _, r in top.iterrows()],
                f"share {what}": [_pct(v) for v in top["_u"]],
                "success rate": [_pct(v) for v in top.get("success_rate", pd.Series(float("nan"), index=top.index))],
            })
            parts.append("<p>Configurations with the largest share:</p>" + _table(t, left={"configuration"}))
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


def _write_index(out: Path, title: str, sections, lede: str = "") -> Path:
    """index.html: the title, a sentence on what ran, the table of contents, the sections."""
    nav = "".join(f'<li><a href="#{a}">{_e(h)}</a></li>' for a, h, _ in sections)
    body = "".join(f'<h2 id="{a}">{_e(h)}</h2>{s}' for a, h, s in sections)
    doc = (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{_e(title)}</title>'
           f"<style>{_CSS}</style></head><body><h1>{_e(title)}</h1>"
           + (f'<p class="muted">{_e(lede)}</p>' if lede else "")
           + f'<nav aria-label="contents"><ul>{nav}</ul></nav>{body}</body></html>')
    index = out / "index.html"
    atomic_write_text(index, doc)
    return index
