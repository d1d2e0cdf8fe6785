"""Latency against throughput: per facet combination, one line per ``layout["rows"]`` value following the load
sweep, mean and P99 commit latency, markers filled where the point qualifies for the knee."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

import seaborn as sns

from ..aggregate import SUCCESS_THRESHOLD, _hashable, format_value, qualifies
from ..labels import axis_label, facet_label, fmt_tick, op_of, slug
from .canvas import facet_groups, panel_metrics, reps_note, save, suptitle


def latency_throughput_curves(agg: pd.DataFrame, layout: dict, out_dir, threshold: float = SUCCESS_THRESHOLD,
                              line_values: list | None = None) -> list[tuple[Path, str]]:
    """One PNG per facet combination (provider / catalog latency / mix ...): x throughput
    (commits/s), y mean (solid) and P99 (dashed) commit latency on a log scale, one line per
    ``layout["rows"]`` value (num_tables), points in load order. For a mix, FA and VO panels
    side by side. Filled markers: the point qualifies for the knee (success > threshold, and
    VO success for a mix); hollow: it does not. ``line_values``: the ``rows`` values to colour (default: those in
    ``agg``), so figures drawn from parts of a table colour alike. Returns ``[(path, caption), ...]``."""
    rows, cols, facets = layout["rows"], layout["cols"], list(layout.get("facets", []))
    line_vals = line_values or sorted(_hashable(agg, [rows])[rows].dropna().unique().tolist())
    palette = sns.color_palette("viridis", n_colors=max(len(line_vals), 1))
    colors = {v: palette[i] for i, v in enumerate(line_vals)}
    out = []
    for parts, sub in facet_groups(agg, facets):
        sub = _hashable(sub, [rows, cols])
        panels = panel_metrics(sub, "commit_latency_mean_ms", True)
        fig, axes = _figure(len(panels))
        points = sub.assign(_q=qualifies(sub, threshold))
        for ax, mean_col in zip(axes, panels):
            _draw_panel(ax, points, mean_col, rows, cols, colors)
        handles = _legend_handles(colors, [v for v in line_vals if v in set(sub[rows].tolist())], rows, threshold)
        fig.legend(handles=handles, loc="upper right", bbox_to_anchor=(1.0, 1 - _TOP_IN / _HEIGHT_IN), fontsize=8,
                   frameon=False)
        label = facet_label(parts)
        suptitle(fig, "Commit latency vs throughput" + (f" \u2014 {label}" if label else ""))
        path = save(fig, Path(out_dir) / f"curves{slug(parts)}.png")
        out.append((path, _caption(label, rows, cols, threshold, len(panels)) + reps_note(sub, "point")))
    return out


#: the figure's height and fixed margins (inches): y labels, legend, title, x labels
_HEIGHT_IN, _LEFT_IN, _RIGHT_IN, _TOP_IN, _BOTTOM_IN = 4.4, 0.85, 1.75, 0.65, 0.55


def _figure(n_panels: int):
    """A Figure of ``n_panels`` side by side and its Axes, with fixed margins: a constrained layout measured every
    label twice, a third of the report's 15 curve figures' time."""
    width = 5.0 * n_panels + _LEFT_IN + _RIGHT_IN
    fig = Figure(figsize=(width, _HEIGHT_IN))
    fig.subplots_adjust(left=_LEFT_IN / width, right=1 - _RIGHT_IN / width, top=1 - _TOP_IN / _HEIGHT_IN,
                        bottom=_BOTTOM_IN / _HEIGHT_IN, wspace=0.22)
    return fig, fig.subplots(1, n_panels, squeeze=False)[0]


def _draw_panel(ax, points: pd.DataFrame, mean_col: str, rows: str, cols: str, colors: dict) -> None:
    """One panel: per line, mean (solid) and P99 (dashed) latency in s against throughput, in load order."""
    desc = "inter_arrival" in cols
    for v, line in points.groupby(rows, dropna=False, sort=True):
        line = line.sort_values(cols, ascending=not desc)
        for col, ls in ((mean_col, "-"), (mean_col.replace("_mean_ms", "_p99_ms"), "--")):
            if col in line.columns:
                _draw_line(ax, line, col, ls, colors.get(v, "k"))
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_tick(v * 1000)))
    ax.set_xlabel("throughput (commits/s)")
    ax.set_ylabel("commit latency (log scale)")
    op = op_of(mean_col)
    ax.set_title(f"{op} transactions" if op else "all transactions", loc="left", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)


def _draw_line(ax, line: pd.DataFrame, col: str, ls: str, color) -> None:
    """The line of ``col``, markers filled where the point qualifies (``_q``), hollow where not."""
    x = pd.to_numeric(line["throughput_cps"], errors="coerce").to_numpy()
    y = pd.to_numeric(line[col], errors="coerce").to_numpy() / 1000.0
    ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
    if not ok.any():
        return
    ax.plot(x[ok], y[ok], ls=ls, color=color, lw=1.4, alpha=0.9)
    qq = line["_q"].to_numpy()[ok]
    # markers as lines without a line: a scatter's collection took a third of a curves figure's time
    ax.plot(x[ok][qq], y[ok][qq], ls="", marker="o", ms=4.7, color=color, zorder=3)
    ax.plot(x[ok][~qq], y[ok][~qq], ls="", marker="o", ms=4.7, mfc="white", mec=color, zorder=3)


def _legend_handles(colors: dict, shown: list, rows: str, threshold: float) -> list:
    handles = [Line2D([], [], color=colors[v], lw=2, label=f"{axis_label(rows)} = {format_value(v)}")
               for v in shown]
    return handles + [Line2D([], [], color="k", ls="-", label="mean"),
                      Line2D([], [], color="k", ls="--", label="P99"),
                      Line2D([], [], color="k", marker="o", ls="", label=f"success > {threshold:.0%}"),
                      Line2D([], [], color="k", marker="o", ls="", markerfacecolor="white",
                             label=f"success \u2264 {threshold:.0%}")]


def _caption(label: str, rows: str, cols: str, threshold: float, n_panels: int) -> str:
    desc = "inter_arrival" in cols
    cap = (f"Commit latency against throughput{(' for ' + label) if label else ''}: one line "
           f"per {axis_label(rows)} value, following the {axis_label(cols)} sweep"
           f"{' from low to high load' if desc else ''}; solid = mean, dashed = P99 commit "
           "latency (log scale, committed transactions only). Filled markers: success rate "
           f"above {threshold:.0%} (and, for a mix, VO success too), i.e. usable for the knee; "
           "hollow markers: not.")
    if n_panels > 1:
        cap += " Left: FA transactions; right: VO transactions (x is total throughput)."
    return cap
