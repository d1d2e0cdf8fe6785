"""Figures of the report: heatmaps, latency-throughput curves, per-rank heatmaps.

All figures are drawn on :class:`matplotlib.figure.Figure` objects (Agg canvas when saved),
never through pyplot's global state, so this works headless and does not change the backend
of a notebook that imports it.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm, Normalize, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator, PercentFormatter

import seaborn as sns

from ..results_io import atomic_write_with
from .aggregate import SUCCESS_THRESHOLD, _hashable, format_value, has_vo, qualifies

DPI = 110
HATCH = "////"
MARK_COLOR = (0.1, 0.1, 0.1, 0.6)
NAN_COLOR = "#e6e6e6"

#: metrics that get FA / VO panels side by side for a mix
PER_OP_METRICS = {"success_rate"} | {f"commit_latency_{s}_ms" for s in ("mean", "p50", "p95", "p99")}

_DESCRIPTIONS = {
    "success_rate": "Success rate = committed / (committed + aborted) (unfinished transactions left out)",
    "throughput_cps": "Throughput = commits per second over the measurement window",
    "offered_cps": "Offered rate = arrivals per second",
    "commit_latency_mean_ms": "Mean commit latency (runtime end to successful CAS; committed transactions only)",
    "commit_latency_p50_ms": "Median commit latency (runtime end to successful CAS; committed transactions only)",
    "commit_latency_p95_ms": "P95 commit latency (runtime end to successful CAS; committed transactions only)",
    "commit_latency_p99_ms": "P99 commit latency (runtime end to successful CAS; committed transactions only)",
    "catalog_conflict_share": "Share of conflicts that were catalog conflicts = catalog / (catalog + table)",
    "unfinished_share": "Share of window transactions still unfinished when the drain limit ended the run",
}

_TITLES = {
    "success_rate": "Success rate",
    "throughput_cps": "Throughput (commits/s)",
    "offered_cps": "Offered rate (arrivals/s)",
    "commit_latency_mean_ms": "Mean commit latency",
    "commit_latency_p50_ms": "P50 commit latency",
    "commit_latency_p95_ms": "P95 commit latency",
    "commit_latency_p99_ms": "P99 commit latency",
    "catalog_conflict_share": "Catalog share of conflicts",
    "unfinished_share": "Unfinished share",
}

_AXIS_LABELS = {
    "inter_arrival_ms": "inter-arrival (ms)",
    "num_tables": "tables",
    "table_rank": "table rank",
    "catalog_latency_ms": "catalog CAS latency (ms)",
    "fast_append_ratio": "FA ratio",
}


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

def _base_metric(metric: str) -> str:
    for p in ("fa_", "vo_"):
        if metric.startswith(p):
            return metric[len(p):]
    return metric


def _op_of(metric: str) -> str:
    return {"fa_": "FA", "vo_": "VO"}.get(metric[:3], "")


def _lower_first(t: str) -> str:
    return t[0].lower() + t[1:] if len(t) > 1 and t[1].islower() else t


def metric_title(metric: str) -> str:
    op = _op_of(metric)
    t = _TITLES.get(_base_metric(metric), _base_metric(metric).replace("_", " "))
    if op and len(t) > 1 and t[1].islower():
        t = t[0].lower() + t[1:]
    return f"{op} {t}" if op else t


def metric_description(metric: str) -> str:
    op = _op_of(metric)
    d = _DESCRIPTIONS.get(_base_metric(metric), metric_title(metric))
    return f"{d}, {op} transactions only" if op else d


def axis_label(col: str) -> str:
    return _AXIS_LABELS.get(col, col)


def _kind(metric: str) -> str:
    m = _base_metric(metric)
    if m.endswith("success_rate"):
        return "rate"
    if "latency" in m and m.endswith("_ms"):
        return "latency"
    if m.endswith("_share"):
        return "share"
    return "number"


def fmt_percent(v: float) -> str:
    if v >= 0.9995:
        return "100"
    return f"{100 * v:.1f}"


def fmt_duration(ms: float) -> str:
    if ms < 1000:
        return f"{ms:.0f}ms"
    s = ms / 1000
    if s < 10:
        return f"{s:.2f}s"
    if s < 100:
        return f"{s:.1f}s"
    return f"{s:.0f}s"


def fmt_tick(ms: float) -> str:
    """Axis tick label of a duration in ms: 200ms, 1.5s, 20s."""
    return f"{ms:g}ms" if ms < 1000 else f"{ms / 1000:g}s"


def fmt_number(v: float) -> str:
    a = abs(v)
    if a < 10:
        return f"{v:.2f}"
    if a < 100:
        return f"{v:.1f}"
    return f"{v:.0f}"


_DEFAULT_FMT = {"rate": fmt_percent, "share": fmt_percent, "latency": fmt_duration, "number": fmt_number}


def _formatter(metric: str, fmt) -> Callable[[float], str]:
    if fmt is None:
        return _DEFAULT_FMT[_kind(metric)]
    if callable(fmt):
        return fmt
    return lambda v: format(v, fmt)


def _value_unit_note(metric: str) -> str:
    k = _kind(metric)
    if k in ("rate", "share"):
        return "values in %"
    if k == "latency":
        return "values in ms below 1 s, else s"
    return ""


def color_limits(agg: pd.DataFrame, metrics: list[str]) -> tuple[float | None, float | None]:
    """Shared colour limits for a family of panels (fixed 0..1 for rates and shares)."""
    k = _kind(metrics[0])
    if k in ("rate", "share"):
        return 0.0, 1.0
    vals = pd.concat([pd.to_numeric(agg[m], errors="coerce") for m in metrics if m in agg.columns])
    vals = vals[np.isfinite(vals)]
    if k == "latency":
        vals = vals[vals > 0]
    if vals.empty:
        return None, None
    lo, hi = float(vals.min()), float(vals.max())
    if k == "latency" and hi <= lo:
        lo, hi = lo / 2, hi * 2
    return lo, hi


def slug(parts: dict) -> str:
    """File-name fragment for a facet combination."""
    if not parts:
        return ""
    s = "_".join(f"{k.split('.')[-1]}-{format_value(v)}" for k, v in parts.items())
    return "__" + re.sub(r"[^A-Za-z0-9.\-_]+", "-", s)


def facet_label(parts: dict) -> str:
    return ", ".join(f"{k} = {format_value(v)}" for k, v in parts.items())


def _groups(df: pd.DataFrame, keys: list[str]):
    """(dict of key values, sub-frame) per combination of ``keys`` (NaN is a value)."""
    if not keys:
        yield {}, df
        return
    df = _hashable(df, keys)
    for key, sub in df.groupby(keys, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(keys, key)), sub


def _ops_for(sub: pd.DataFrame, metric: str, per_op: bool) -> list[str]:
    """Panel metrics: FA and VO side by side for a mix, VO alone for an all-VO workload."""
    if not per_op or metric not in PER_OP_METRICS or "fast_append_ratio" not in sub.columns:
        return [metric]
    r = pd.to_numeric(sub["fast_append_ratio"], errors="coerce").dropna().unique()
    if len(r) == 0 or np.all(r >= 1):
        return [metric]
    if np.all(r <= 0):
        return ["vo_" + metric]
    return ["fa_" + metric, "vo_" + metric]


def _mark_column(metric: str, data: pd.DataFrame) -> str:
    op = metric[:3]
    if op in ("fa_", "vo_") and f"{op}success_rate" in data.columns:
        return f"{op}success_rate"
    return "knee"


def _mark_phrase(mark_col: str, thr: float, vo: bool = False) -> str:
    if mark_col == "knee":
        return (f"success or VO success \u2264 {thr:.0%}" if vo else f"success rate \u2264 {thr:.0%}")
    who = {"fa_success_rate": "FA success rate", "vo_success_rate": "VO success rate"}.get(
        mark_col, mark_col.replace("_", " "))
    return f"{who} \u2264 {thr:.0%}"


def _suptitle(fig: Figure, text: str) -> None:
    width = int(fig.get_figwidth() * 10.5)
    fig.suptitle(textwrap.fill(text, width=max(width, 30)), fontsize=11)


def _save(fig: Figure, path: Path) -> Path:
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, dpi=DPI, format=path.suffix.lstrip(".") or "png"))
    return path


def _reps_note(sub: pd.DataFrame, what: str = "cell") -> str:
    if "n_reps" not in sub.columns or sub.empty:
        return ""
    lo, hi = int(sub["n_reps"].min()), int(sub["n_reps"].max())
    n = f"{lo}" if lo == hi else f"{lo}\u2013{hi}"
    return f" Each {what} is the mean of {n} replication(s)."


# --------------------------------------------------------------------------------------------
# heatmap
# --------------------------------------------------------------------------------------------

def heatmap(agg: pd.DataFrame, metric: str, rows: str = "num_tables",
            cols: str = "inter_arrival_ms", ax=None, mark_below: float | bool | None = None,
            fmt: str | Callable[[float], str] | None = None, mark_col: str | None = None,
            vmin: float | None = None, vmax: float | None = None, cmap: str | None = None,
            title: str | None = None, cbar: bool = True, legend: bool = True):
    """One annotated heatmap of ``metric``: ``rows`` on y (ascending downwards), ``cols`` on x
    ascending (for inter-arrival: load falls left to right).

    Cells at or below the success threshold ``mark_below`` (default 0.95, the knee threshold;
    ``False`` disables) are hatched and framed, explained in a legend above the axes. Which
    success rate is tested is ``mark_col``: by default the metric's own operation
    (``vo_success_rate`` for ``vo_*`` metrics, ``fa_success_rate`` for ``fa_*``), else
    ``"knee"``: success rate, and VO success rate where VO transactions exist, i.e. cells not
    usable for the knee. Any column name can be given (e.g. ``"success_rate"``). Undefined
    cells (NaN, e.g. latency with no commits) are grey with "n/a". Rates are shown in %
    (diverging colours centred on the threshold), latencies in ms/s on a log colour scale.
    ``fmt``: a format spec (``".2f"``) or callable for the cell labels. Duplicate (row, col)
    points are averaged. Returns the Axes (a new Figure's when ``ax`` is None).
    """
    if ax is None:
        fig = Figure(figsize=_panel_size(agg, rows, cols))
        fig.set_layout_engine("constrained")
        ax = fig.add_subplot()
    kind = _kind(metric)
    data = agg
    if metric not in data.columns:
        data = data.assign(**{metric: np.nan})
    keys = _hashable(data, [rows, cols])
    grid = (keys.assign(_v=pd.to_numeric(keys[metric], errors="coerce"))
            .groupby([rows, cols], dropna=False)["_v"].mean().unstack(cols))
    grid = grid.sort_index(axis=0).sort_index(axis=1)
    values = grid.to_numpy(dtype=float)

    thr = SUCCESS_THRESHOLD if mark_below is None or mark_below is True else mark_below
    mark_col = mark_col or _mark_column(metric, data)
    marked = np.zeros_like(values, dtype=bool)
    vo = bool(has_vo(data).any())
    if thr is not False and mark_col == "knee" and "success_rate" in data.columns:
        # not usable for the knee: success (and, where VO exists, VO success) at or below thr
        defined = pd.to_numeric(keys["success_rate"], errors="coerce").notna()
        bad = (~qualifies(keys, thr) & defined).astype(float)
        m = (keys.assign(_m=bad.where(defined)).groupby([rows, cols], dropna=False)["_m"]
             .max().unstack(cols))
        m = m.reindex(index=grid.index, columns=grid.columns).to_numpy(dtype=float)
        marked = np.isfinite(m) & (m > 0)
    elif thr is not False and mark_col in data.columns:
        m = (keys.assign(_m=pd.to_numeric(keys[mark_col], errors="coerce"))
             .groupby([rows, cols], dropna=False)["_m"].mean().unstack(cols))
        m = m.reindex(index=grid.index, columns=grid.columns).to_numpy(dtype=float)
        marked = np.isfinite(m) & ~(m > thr)

    if cmap is None:
        cmap = {"rate": "RdYlGn", "share": "Purples", "latency": "YlOrRd", "number": "viridis"}[kind]
    if kind in ("rate", "share"):
        vmin = 0.0 if vmin is None else vmin
        vmax = 1.0 if vmax is None else vmax
    finite = values[np.isfinite(values)]
    if kind == "latency":
        finite = finite[finite > 0]
    if vmin is None:
        vmin = float(finite.min()) if finite.size else (1.0 if kind == "latency" else 0.0)
    if vmax is None:
        vmax = float(finite.max()) if finite.size else vmin + 1.0
    if vmax <= vmin:
        vmin, vmax = (vmin / 2, vmax * 2) if kind == "latency" and vmin > 0 else (vmin - 0.5, vmax + 0.5)
    rate_center = None
    if kind == "latency":
        vmin = max(vmin, 1e-3)
        norm = LogNorm(vmin=vmin, vmax=vmax)
        plot_values = np.where(values > 0, values, np.nan)
    elif kind == "rate" and thr is not False and vmin < thr < vmax:
        # diverging scale centred on the knee threshold: the 80..100 % range stays readable
        rate_center = thr
        norm = TwoSlopeNorm(vcenter=thr, vmin=vmin, vmax=vmax)
        plot_values = values
    else:
        norm = Normalize(vmin=vmin, vmax=vmax)
        plot_values = values
    label = _formatter(metric, fmt)
    annot = np.array([[label(v) if np.isfinite(v) else "" for v in row] for row in values],
                     dtype=object)
    nrows, ncols = values.shape
    fontsize = 8 if ncols <= 12 else 7

    ax.set_facecolor(NAN_COLOR)
    cbar_kws = {"label": metric_title(metric), "shrink": 0.9}
    if kind in ("rate", "share"):
        cbar_kws["format"] = PercentFormatter(xmax=1, decimals=0)
    elif kind == "latency":
        cbar_kws["label"] = metric_title(metric) + " (log scale)"
    frame = pd.DataFrame(plot_values, index=grid.index, columns=grid.columns)
    if nrows and ncols:
        sns.heatmap(frame, ax=ax, annot=annot, fmt="", cmap=cmap, norm=norm, cbar=cbar,
                    cbar_kws=cbar_kws, mask=~np.isfinite(plot_values), linewidths=0.6,
                    linecolor="white", annot_kws={"fontsize": fontsize}, square=False)
        cb = ax.collections[0].colorbar if cbar and ax.collections else None
        if cb is not None and kind == "latency":
            cb.ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            cb.ax.yaxis.set_minor_locator(NullLocator())
            cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_tick(v)))
        elif cb is not None and rate_center is not None:
            ticks = [t for t in (0.0, 0.25, 0.5, 0.75, rate_center, 1.0) if vmin <= t <= vmax]
            cb.ax.yaxis.set_major_locator(FixedLocator(sorted(set(ticks))))
            cb.ax.yaxis.set_minor_locator(NullLocator())
    for i in range(nrows):
        for j in range(ncols):
            if not np.isfinite(values[i, j]):
                ax.text(j + 0.5, i + 0.5, "n/a", ha="center", va="center", fontsize=fontsize - 1,
                        color="#888888")
            if marked[i, j]:
                ax.add_patch(Rectangle((j + 0.06, i + 0.06), 0.88, 0.88, fill=False,
                                       hatch=HATCH, edgecolor=MARK_COLOR, linewidth=1.2,
                                       zorder=2))
    for t in ax.texts:
        t.set_zorder(3)
        x, y = t.get_position()
        i, j = int(y), int(x)
        if 0 <= i < nrows and 0 <= j < ncols and marked[i, j] and t.get_text():
            # keep the label readable over the hatching
            t.set_bbox(dict(boxstyle="round,pad=0.15", facecolor="white", alpha=0.75,
                            edgecolor="none"))
            t.set_color("black")
    ax.set_xticks(np.arange(ncols) + 0.5)
    ax.set_xticklabels([format_value(c) for c in grid.columns], rotation=0)
    ax.set_yticks(np.arange(nrows) + 0.5)
    ax.set_yticklabels([format_value(r) for r in grid.index], rotation=0)
    xl = axis_label(cols)
    if "inter_arrival" in cols:
        xl += "  \u2192 load falls"
    ax.set_xlabel(xl)
    ax.set_ylabel(axis_label(rows))
    ax.set_xlim(0, max(ncols, 1))
    ax.set_ylim(max(nrows, 1), 0)
    show_legend = legend and thr is not False
    # with a legend, the title sits above it (pad) so the two never collide on narrow panels
    ax.set_title(title if title is not None else metric_title(metric), loc="left", fontsize=10,
                 pad=17 if show_legend else 6)
    if show_legend:
        ax.legend(handles=[Patch(facecolor="white", edgecolor=MARK_COLOR, hatch=HATCH,
                                 label=_mark_phrase(mark_col, thr, vo))],
                  loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8,
                  borderaxespad=0.1, handlelength=1.6, handleheight=1.2)
    return ax


def _panel_size(agg: pd.DataFrame, rows: str, cols: str) -> tuple[float, float]:
    nc = agg[cols].nunique(dropna=False) if cols in agg.columns else 1
    nr = agg[rows].nunique(dropna=False) if rows in agg.columns else 1
    return max(4.5, 0.72 * nc + 2.4), max(2.8, 0.42 * nr + 1.9)


# --------------------------------------------------------------------------------------------
# faceted heatmaps
# --------------------------------------------------------------------------------------------

def facet_heatmaps(agg: pd.DataFrame, metric: str, layout: dict, out_dir, per_op: bool = True,
                   mark_below: float | None = None, prefix: str | None = None,
                   ) -> list[tuple[Path, str]]:
    """One PNG per combination of ``layout["facets"]``: a heatmap of ``metric`` with
    ``layout["rows"]`` x ``layout["cols"]``; for a mix (fast_append_ratio < 1) success-rate and
    latency metrics get FA and VO panels side by side. Colour scales are shared by all
    figures of the metric. Returns ``[(path, caption), ...]``."""
    out_dir = Path(out_dir)
    rows, cols, facets = layout["rows"], layout["cols"], list(layout.get("facets", []))
    thr = SUCCESS_THRESHOLD if mark_below is None else mark_below
    # shared colour scales across facets: overall and FA panels share one, VO panels another
    scale = {metric: color_limits(agg, [metric, "fa_" + metric])}
    scale["fa_" + metric] = scale[metric]
    scale["vo_" + metric] = color_limits(agg, ["vo_" + metric])
    out = []
    for parts, sub in _groups(agg, facets):
        panels = [m for m in _ops_for(sub, metric, per_op)]
        w, h = _panel_size(sub, rows, cols)
        fig = Figure(figsize=(w * len(panels), h + 0.3))
        fig.set_layout_engine("constrained")
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        for ax, m in zip(axes, panels):
            heatmap(sub, m, rows, cols, ax=ax, mark_below=thr, vmin=scale[m][0], vmax=scale[m][1])
        label = facet_label(parts)
        _suptitle(fig, metric_title(metric) + (f" \u2014 {label}" if label else ""))
        path = _save(fig, out_dir / f"{prefix or metric}{slug(parts)}.png")
        out.append((path, _heatmap_caption(metric, panels, rows, cols, label, thr, sub)))
    return out


def _heatmap_caption(metric, panels, rows, cols, label, thr, sub) -> str:
    where = f" for {label}" if label else ""
    load = "; load falls from left to right" if "inter_arrival" in cols else ""
    s = (f"{metric_description(metric)}{where}, by {axis_label(rows)} (rows) and "
         f"{axis_label(cols)} (columns{load}).")
    if len(panels) > 1:
        s += " Left: FastAppend (FA) transactions; right: ValidatedOverwrite (VO) transactions."
    elif panels[0].startswith("vo_"):
        s += " All transactions are ValidatedOverwrite (VO)."
    unit = _value_unit_note(metric)
    if unit:
        s += f" Cell labels: {unit}."
    if _kind(metric) == "latency":
        s += " Colour scale is logarithmic."
    elif _kind(metric) == "rate" and thr is not False:
        s += f" Colours diverge at {thr:.0%}: green above, yellow to red below."
    if thr is not False:
        if len(panels) > 1:
            s += (f" Hatched, framed cells: the success rate of the panel's operation is at or "
                  f"below {thr:.0%}.")
        elif panels[0].startswith("vo_"):
            s += f" Hatched, framed cells: VO success rate at or below {thr:.0%}."
        elif bool(has_vo(sub).any()):
            s += (f" Hatched, framed cells: success rate or VO success rate at or below {thr:.0%}, "
                  "i.e. not usable for the knee.")
        else:
            s += f" Hatched, framed cells: success rate at or below {thr:.0%} (not usable for the knee)."
    s += " Grey 'n/a' cells: undefined (e.g. no commits) or not run."
    s += _reps_note(sub)
    return s


# --------------------------------------------------------------------------------------------
# latency-throughput curves
# --------------------------------------------------------------------------------------------

def latency_throughput_curves(agg: pd.DataFrame, layout: dict, out_dir,
                              threshold: float = SUCCESS_THRESHOLD) -> list[tuple[Path, str]]:
    """One PNG per facet combination (provider / catalog latency / mix ...): x throughput
    (commits/s), y mean (solid) and P99 (dashed) commit latency on a log scale, one line per
    ``layout["rows"]`` value (num_tables), points in load order. For a mix, FA and VO panels
    side by side. Filled markers: the point qualifies for the knee (success > threshold, and
    VO success for a mix); hollow: it does not. Returns ``[(path, caption), ...]``."""
    out_dir = Path(out_dir)
    rows, cols, facets = layout["rows"], layout["cols"], list(layout.get("facets", []))
    out = []
    line_vals = sorted(_hashable(agg, [rows])[rows].dropna().unique().tolist())
    palette = sns.color_palette("viridis", n_colors=max(len(line_vals), 1))
    colors = {v: palette[i] for i, v in enumerate(line_vals)}
    for parts, sub in _groups(agg, facets):
        sub = _hashable(sub, [rows, cols])
        base_panels = _ops_for(sub, "commit_latency_mean_ms", True)
        fig = Figure(figsize=(5.6 * len(base_panels) + 1.6, 4.4))
        fig.set_layout_engine("constrained")
        axes = fig.subplots(1, len(base_panels), squeeze=False)[0]
        q = qualifies(sub, threshold)
        desc = "inter_arrival" in cols
        for ax, mean_col in zip(axes, base_panels):
            p99_col = mean_col.replace("_mean_ms", "_p99_ms")
            for v, line in sub.assign(_q=q).groupby(rows, dropna=False, sort=True):
                line = line.sort_values(cols, ascending=not desc)
                x = pd.to_numeric(line["throughput_cps"], errors="coerce").to_numpy()
                c = colors.get(v, "k")
                for col, ls in ((mean_col, "-"), (p99_col, "--")):
                    if col not in line.columns:
                        continue
                    y = pd.to_numeric(line[col], errors="coerce").to_numpy() / 1000.0
                    ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
                    if not ok.any():
                        continue
                    ax.plot(x[ok], y[ok], ls=ls, color=c, lw=1.4, alpha=0.9)
                    qq = line["_q"].to_numpy()[ok]
                    ax.scatter(x[ok][qq], y[ok][qq], color=c, s=22, zorder=3)
                    ax.scatter(x[ok][~qq], y[ok][~qq], facecolors="white", edgecolors=[c], s=22,
                               zorder=3)
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_locator(NullLocator())
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_tick(v * 1000)))
            ax.set_xlabel("throughput (commits/s)")
            ax.set_ylabel("commit latency (log scale)")
            op = _op_of(mean_col)
            ax.set_title(f"{op} transactions" if op else "all transactions", loc="left", fontsize=10)
            ax.grid(True, which="major", alpha=0.3)
        handles = [Line2D([], [], color=colors[v], lw=2, label=f"{axis_label(rows)} = {format_value(v)}")
                   for v in line_vals if v in set(sub[rows].tolist())]
        handles += [Line2D([], [], color="k", ls="-", label="mean"),
                    Line2D([], [], color="k", ls="--", label="P99"),
                    Line2D([], [], color="k", marker="o", ls="", label=f"success > {threshold:.0%}"),
                    Line2D([], [], color="k", marker="o", ls="", markerfacecolor="white",
                           label=f"success \u2264 {threshold:.0%}")]
        fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
        label = facet_label(parts)
        _suptitle(fig, "Commit latency vs throughput" + (f" \u2014 {label}" if label else ""))
        path = _save(fig, out_dir / f"curves{slug(parts)}.png")
        cap = (f"Commit latency against throughput{(' for ' + label) if label else ''}: one line "
               f"per {axis_label(rows)} value, following the {axis_label(cols)} sweep"
               f"{' from low to high load' if desc else ''}; solid = mean, dashed = P99 commit "
               "latency (log scale, committed transactions only). Filled markers: success rate "
               f"above {threshold:.0%} (and, for a mix, VO success too), i.e. usable for the knee; "
               "hollow markers: not.")
        if len(base_panels) > 1:
            cap += " Left: FA transactions; right: VO transactions (x is total throughput)."
        out.append((path, cap + _reps_note(sub, "point")))
    return out


# --------------------------------------------------------------------------------------------
# per-rank heatmaps (Zipf)
# --------------------------------------------------------------------------------------------

def per_rank_heatmaps(per_table_agg: pd.DataFrame, layout: dict, out_dir,
                      metrics: tuple[str, ...] = ("success_rate", "commit_latency_p99_ms"),
                      max_ranks: int = 20, mark_below: float | None = None,
                      ) -> list[tuple[Path, str]]:
    """Zipf runs (table_selection == "zipf") of the aggregated per-table table: one PNG per
    combination of the facets and ``layout["rows"]`` (num_tables > 1), panels for ``metrics``
    (default success rate and P99 latency) by table rank (y; 1 = most popular) x
    ``layout["cols"]``. Cells are marked where that rank's success rate is at or below the
    threshold. Ranks beyond ``max_ranks`` are left out. Returns ``[(path, caption), ...]``."""
    out_dir = Path(out_dir)
    df = per_table_agg
    if "table_selection" in df.columns:
        df = df[df["table_selection"].astype(str) == "zipf"]
    if df.empty or "table_rank" not in df.columns:
        return []
    rows, cols = layout["rows"], layout["cols"]
    keys = [c for c in layout.get("facets", []) if c in df.columns and c != "table_selection"]
    if rows in df.columns and rows != "table_rank":
        keys.append(rows)
    thr = SUCCESS_THRESHOLD if mark_below is None else mark_below
    metrics = [m for m in metrics if m in df.columns]
    lims = {m: color_limits(df, [m]) for m in metrics}
    out = []
    for parts, sub in _groups(df, keys):
        if sub["table_rank"].nunique() < 2:
            continue
        n_ranks = int(sub["table_rank"].max())
        sub = sub[sub["table_rank"] <= max_ranks]
        w, h = _panel_size(sub, "table_rank", cols)
        fig = Figure(figsize=(w * len(metrics), h + 0.3))
        fig.set_layout_engine("constrained")
        axes = fig.subplots(1, len(metrics), squeeze=False)[0]
        for ax, m in zip(axes, metrics):
            heatmap(sub, m, "table_rank", cols, ax=ax, mark_below=thr, mark_col="success_rate",
                    vmin=lims[m][0], vmax=lims[m][1])
        label = facet_label(parts)
        _suptitle(fig, "Per table rank (Zipf)" + (f" \u2014 {label}" if label else ""))
        path = _save(fig, out_dir / f"per_rank{slug(parts)}.png")
        alpha = ""
        if "zipf_alpha" in sub.columns and sub["zipf_alpha"].notna().any():
            alpha = f" (alpha = {', '.join(format_value(a) for a in sorted(sub['zipf_alpha'].dropna().unique()))})"
        cap = (f"Zipf table selection{alpha}{(', ' + label) if label else ''}: per-table "
               f"{' and '.join(_lower_first(metric_title(m)) for m in metrics)} by table popularity "
               f"rank (rows; 1 = most popular) and {axis_label(cols)} (columns"
               f"{'; load falls from left to right' if 'inter_arrival' in cols else ''}). "
               f"Hatched, framed cells: that table's success rate is at or below {thr:.0%}. "
               "Grey 'n/a': no decided (or no committed) transactions on that table.")
        if n_ranks > max_ranks:
            cap += f" Ranks {max_ranks + 1}\u2013{n_ranks} are not shown."
        out.append((path, cap + _reps_note(sub)))
    return out


# --------------------------------------------------------------------------------------------
# the knee picture (first screen of the report)
# --------------------------------------------------------------------------------------------

def knee_picture(knees: pd.DataFrame, layout: dict, out_dir, what: str) -> tuple[Path, str]:
    """Knee commits/s against tables, one line per ``layout["hue"]`` value, one panel per
    ``layout["facet"]`` value, 95 % bands shaded. ``knees`` has ``knee_cps`` and ``knee_cps_low/high``
    (:func:`sim.report.aggregate.knee_commits`); ``what`` says where the knees come from (caption)."""
    x, hue, facet = layout["x"], layout["hue"], layout["facet"]
    panels = sorted(knees[facet].dropna().unique().tolist(), reverse=True) if facet else [None]
    lines = sorted(knees[hue].dropna().unique().tolist(), key=str) if hue else [None]
    palette = sns.color_palette("tab10", n_colors=max(len(lines), 1))
    fig = Figure(figsize=(4.2 * len(panels) + 1.8, 4.0))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    for ax, pv in zip(axes, panels):
        sub = knees if pv is None else knees[knees[facet] == pv]
        for color, lv in zip(palette, lines):
            line = (sub if lv is None else sub[sub[hue] == lv]).sort_values(x)
            xs = pd.to_numeric(line[x], errors="coerce").to_numpy()
            ys = pd.to_numeric(line["knee_cps"], errors="coerce").to_numpy()
            lo = pd.to_numeric(line["knee_cps_low"], errors="coerce").to_numpy()
            hi = pd.to_numeric(line["knee_cps_high"], errors="coerce").to_numpy()
            ok = np.isfinite(xs) & np.isfinite(ys) & (ys > 0)
            ax.plot(xs[ok], ys[ok], marker="o", ms=4, lw=1.6, color=color,
                    label=format_value(lv) if lv is not None else "knee")
            band = ok & np.isfinite(lo) & np.isfinite(hi)
            if band.any():
                ax.fill_between(xs[band], np.maximum(lo[band], 1e-9), hi[band], color=color, alpha=0.2, lw=0)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ticks = sorted(pd.to_numeric(knees[x], errors="coerce").dropna().unique().tolist())
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel(axis_label(x))
        ax.grid(True, which="major", alpha=0.3)
        if pv is not None:
            ax.set_title(f"{axis_label(facet)} = {format_value(pv)}", loc="left", fontsize=10)
    axes[0].set_ylabel("knee throughput (commits/s, log)")
    if hue:
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper", fontsize=8, frameon=False,
                   title=axis_label(hue))
    _suptitle(fig, "Usable throughput: the knee")
    path = _save(fig, Path(out_dir) / "knee.png")
    cap = (f"Commits/s at the knee (the highest load at which success, and VO success for a mix, is at least "
           f"{SUCCESS_THRESHOLD:.0%}) against {axis_label(x)}"
           + (f", one line per {axis_label(hue)}" if hue else "")
           + (f", one panel per {axis_label(facet)}" if facet else "") + f"; shaded: 95 % bands. {what}")
    return path, cap


# design comparison
# --------------------------------------------------------------------------------------------

def design_knees(knee: pd.DataFrame, out_dir, extra: list[str] | None = None) -> list[tuple[Path, str]]:
    """The knee per design per provider in one figure (one per combination of ``extra`` group keys): facets
    rows = tables, columns = FA ratio; x = provider, one bar per design (log scale). Hatched bars: the knee is
    the highest load run, so a lower bound; an 'x' at the bottom: no load point qualified. ``knee`` is
    designs.design_knees()'s table. Returns ``[(path, caption), ...]``."""
    from .designs import DESIGN_ORDER, MIX_LABELS, PROVIDER_ORDER, ordered
    out_dir = Path(out_dir)
    out = []
    tables = sorted(knee["num_tables"].unique())
    mixes = sorted(knee["fast_append_ratio"].unique(), reverse=True)
    designs = ordered(knee["design"], DESIGN_ORDER)
    providers = ordered(knee["provider"], PROVIDER_ORDER)
    colors = dict(zip(designs, sns.color_palette("tab10", n_colors=max(len(designs), 1))))
    tp = pd.to_numeric(knee["knee_throughput_cps"], errors="coerce")
    lo = float(tp[tp > 0].min()) / 2 if (tp > 0).any() else 0.1
    hi = float(tp.max()) * 2 if tp.notna().any() else 10.0
    width = 0.8 / max(len(designs), 1)
    for parts, sub in _groups(knee, list(extra or [])):
        fig = Figure(figsize=(1.1 * len(providers) * len(mixes) + 2.5, 2.6 * len(tables) + 0.8))
        fig.set_layout_engine("constrained")
        axes = fig.subplots(len(tables), len(mixes), squeeze=False, sharey=True)
        for i, t in enumerate(tables):
            for j, f in enumerate(mixes):
                ax = axes[i][j]
                cell = sub[(sub["num_tables"] == t) & (sub["fast_append_ratio"] == f)]
                for k, d in enumerate(designs):
                    rows = cell[cell["design"] == d].set_index("provider")
                    for x, p in enumerate(providers):
                        xpos = x - 0.4 + width * (k + 0.5)
                        if p not in rows.index:
                            continue
                        r = rows.loc[p]
                        v = r["knee_throughput_cps"]
                        if not np.isfinite(v):
                            ax.plot(xpos, lo * 1.15, marker="x", color=colors[d], ms=6)
                            continue
                        ax.bar(xpos, v, width=width, color=colors[d], edgecolor="k", lw=0.4,
                               hatch=HATCH if bool(r.get("knee_at_edge", False)) else None)
                ax.set_yscale("log")
                ax.set_ylim(lo, hi)
                ax.set_xticks(range(len(providers)), providers)
                ax.grid(True, axis="y", which="major", alpha=0.3)
                ax.set_title(f"{t} table{'s' if t != 1 else ''}, {MIX_LABELS.get(f, f'FA {format_value(f)}')}",
                             loc="left", fontsize=10)
                if j == 0:
                    ax.set_ylabel("knee (commits/s, log)")
        handles = [Patch(facecolor=colors[d], edgecolor="k", label=d) for d in designs]
        handles += [Patch(facecolor="white", edgecolor="k", hatch=HATCH, label="knee at the highest load run"),
                    Line2D([], [], color="k", marker="x", ls="", label="no knee (no load qualified)")]
        fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
        label = facet_label(parts)
        _suptitle(fig, "Knee per catalog design and provider" + (f" \u2014 {label}" if label else ""))
        path = _save(fig, out_dir / f"design_knees{slug(parts)}.png")
        cap = ("Knee (\"usable throughput\": the highest throughput among load points whose success rate, and for "
               f"a mix VO success rate, exceeds {SUCCESS_THRESHOLD:.0%}) of each catalog design (bar colour) per "
               "provider (x), by table count (rows) and FA ratio (columns); log scale. Hatched: the knee is the "
               "highest load the sweep ran for that design, so the true knee may be higher. 'x': no load point "
               "qualified." + (f" {label}." if label else ""))
        out.append((path, cap))
    return out
