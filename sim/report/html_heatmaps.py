"""The report's heatmaps as HTML tables: one coloured, labelled cell per configuration, the cells that fail the
success threshold hatched, one colour bar per metric.

Why tables and not images: a 900-run report drew 90 annotated PNGs, about a second each and most of the report's
time, and their cell labels were ~7 px high at 1400 px. A table's labels are the page's text at any width, can
be searched and copied, and cost nothing to draw. The colours and marks are the matplotlib heatmap's
(``plots.heat_scale``), so a notebook's :func:`sim.report.heatmap` and the report agree.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.ticker import LogLocator, MaxNLocator

from .aggregate import SUCCESS_THRESHOLD, _hashable, format_value, has_vo
from .labels import axis_label, cell_formatter, fmt_tick, kind, lower_first, metric_description, \
    metric_title, order_key, value_unit_note
from .plots.canvas import facet_groups, panel_metrics
from .plots.heat_scale import ColorScale, cell_means, color_limits, color_scale, mark_column, marked_cells, \
    rank_groups

CSS = """
.panels { display: flex; flex-wrap: wrap; gap: 0.6em 1.6em; align-items: flex-start; }
figure.hm { margin: 0.3em 0; } figure.hm figcaption { font-weight: 600; margin-bottom: 0.15em; }
table.hm { border-collapse: collapse; font-size: 0.75em; margin: 0; }
table.hm td { border: 1px solid #fff; padding: 0.1em 0.15em; min-width: 2.9em; height: 1.5em; text-align: center;
              font-variant-numeric: tabular-nums; }
table.hm th { background: none; border: none; padding: 0.1em 0.3em; font-weight: normal; color: #444; }
table.hm th.ax { text-align: left; font-size: 0.95em; vertical-align: bottom; }
table.hm td.na { background: #e6e6e6; color: #777; }
table.hm td.x { background-image: repeating-linear-gradient(135deg, rgba(0,0,0,.55) 0 1.5px, transparent 1.5px 6px);
                outline: 2px solid rgba(25,25,25,.6); outline-offset: -2px; }
table.hm td.x span { background: rgba(255,255,255,.8); color: #000; border-radius: 2px; padding: 0 0.15em; }
.cbar { display: inline-block; vertical-align: middle; margin: 0.2em 0.8em 1.3em 0.4em; }
.cbar .bar { position: relative; width: 22em; height: 0.8em; border: 1px solid #bbb; }
.cbar .bar span { position: absolute; top: 1em; transform: translateX(-50%); font-size: 0.75em; color: #444;
                  white-space: nowrap; }
.hatch { display: inline-block; width: 1.6em; height: 0.9em; vertical-align: middle; border: 2px solid #555;
         background: repeating-linear-gradient(135deg, rgba(0,0,0,.55) 0 1.5px, #fff 1.5px 6px); }
"""

#: the sentences that say what a marked and an n/a cell are (the page states them once per heatmap group)
NA_NOTE = "n/a: undefined (no commits, so no latency) or not run."


def _e(s) -> str:
    return html.escape(str(s))


def family_limits(agg: pd.DataFrame, metric: str) -> dict[str, tuple]:
    """Colour limits of a metric shared by all its panels: the overall and FA panels share one, VO panels another
    (a VO latency is ten times an FA one)."""
    lims = {metric: color_limits(agg, [metric, "fa_" + metric])}
    lims["fa_" + metric] = lims[metric]
    lims["vo_" + metric] = color_limits(agg, ["vo_" + metric])
    return lims


def metric_block(agg: pd.DataFrame, metric: str, rows: str, cols: str, facets: list[str], lims: dict,
                 thr: float = SUCCESS_THRESHOLD) -> str:
    """One metric of one heatmap group: its title, what it is, its colour bar, then a panel per combination of
    ``facets`` (FA and VO panels for a mix's success and latencies)."""
    panels, shown = [], set()
    groups = sorted(facet_groups(agg, facets), key=lambda g: tuple(order_key(c, v) for c, v in g[0].items()))
    for parts, sub in groups:
        for m in panel_metrics(sub, metric, True):
            label = ", ".join(f"{axis_label(k)} {format_value(v)}" for k, v in parts.items())
            op = {"fa_": "FA", "vo_": "VO"}.get(m[:3], "")
            title = " \u00b7 ".join(t for t in (label, f"{op} transactions" if op else "") if t) or metric_title(m)
            panels.append(heat_table(sub, m, rows, cols, lims[m], thr, title))
            shown.add(m[:3] if op else "")
    k = kind(metric)
    unit = value_unit_note(metric)
    vo_apart = "vo_" in shown and lims["vo_" + metric] != lims[metric]
    bars = [color_bar(metric, lims[metric], thr, "FA and all: " if vo_apart else "")]
    if vo_apart:
        bars.append(color_bar("vo_" + metric, lims["vo_" + metric], thr, "VO: "))
    return (f'<h3>{_e(metric_title(metric))}</h3><p class="cap">{_e(metric_description(metric))}.'
            f'{" Cell labels: " + _e(unit) + "." if unit else ""}{" Log colour scale." if k == "latency" else ""}'
            f'</p><div>{"".join(bars)}</div><div class="panels">{"".join(panels)}</div>')


def heat_table(data: pd.DataFrame, metric: str, rows: str, cols: str, lims: tuple, thr: float | None,
               title: str, mark_col: str | None = None) -> str:
    """One panel: ``metric``'s mean per (``rows``, ``cols``) cell, coloured on ``lims``, hatched where the success
    rate (``mark_col``, else the metric's operation's, else success and VO success) is at or below ``thr``."""
    data = data if metric in data.columns else data.assign(**{metric: np.nan})
    keys = _hashable(data, [rows, cols])
    grid = cell_means(keys, metric, rows, cols)
    values = grid.to_numpy(dtype=float)
    marked = marked_cells(keys, grid, rows, cols, thr, mark_col or mark_column(metric, data))
    scale = color_scale(values, kind(metric), thr, lims[0], lims[1])
    label = cell_formatter(metric, None)
    colours = _hex(scale, scale.plot_values)
    head = "".join(f"<th>{_e(format_value(c))}</th>" for c in grid.columns)
    load = " \u2192 load falls" if "inter_arrival" in cols else ""
    body = []
    for i, r in enumerate(grid.index):
        cells = []
        for j in range(values.shape[1]):
            v = values[i, j]
            if not np.isfinite(v):
                cells.append('<td class="na">n/a</td>')
                continue
            bg, fg = colours[i][j]
            style = f' style="background-color:{bg};color:{fg}"' if bg else ""
            text = _e(label(v))
            cells.append(f'<td class="x"{style}><span>{text}</span></td>' if marked[i, j]
                         else f"<td{style}>{text}</td>")
        body.append(f"<tr><th>{_e(format_value(r))}</th>{''.join(cells)}</tr>")
    return (f'<figure class="hm"><figcaption>{_e(title)}</figcaption><table class="hm"><thead>'
            f'<tr><th class="ax" rowspan="2">{_e(axis_label(rows))}</th><th class="ax" colspan="{len(grid.columns)}">'
            f'{_e(axis_label(cols) + load)}</th></tr><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            "</table></figure>")


def _hex(scale: ColorScale, values: np.ndarray) -> list[list[tuple[str, str]]]:
    """Per cell its background and a text colour that reads on it ('' where the value is not coloured)."""
    cmap = colormaps[scale.cmap]
    with np.errstate(invalid="ignore"):
        normed = np.ma.masked_invalid(np.asarray(scale.norm(np.ma.masked_invalid(values)), dtype=float))
    rgba = cmap(np.clip(normed.filled(0.0), 0.0, 1.0))
    out = []
    for i in range(values.shape[0]):
        row = []
        for j in range(values.shape[1]):
            if not np.isfinite(values[i, j]):
                row.append(("", ""))
                continue
            r, g, b = rgba[i, j, :3]
            row.append((f"#{int(round(r * 255)):02x}{int(round(g * 255)):02x}{int(round(b * 255)):02x}",
                        "#fff" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "#000"))
        out.append(row)
    return out


def color_bar(metric: str, lims: tuple, thr: float | None, prefix: str = "") -> str:
    """A horizontal colour bar for ``metric`` on ``lims``: the colour map as a gradient, ticks at nice values."""
    k = kind(metric)
    if lims[0] is None or lims[1] is None:
        return ""
    scale = color_scale(np.asarray(lims, dtype=float), k, thr, lims[0], lims[1])
    cmap = colormaps[scale.cmap]
    stops = ", ".join(f"rgb({r * 255:.0f},{g * 255:.0f},{b * 255:.0f}) {100 * p:.0f}%"
                      for p, (r, g, b, _) in ((p, cmap(p)) for p in np.linspace(0, 1, 11)))
    ticks = "".join(f'<span style="left:{100 * float(scale.norm(t)):.1f}%">{_e(_tick_label(k, t, scale))}</span>'
                    for t in _ticks(k, scale))
    return (f'<span class="cbar" title="{_e(metric_title(metric))}">{_e(prefix)}<span class="bar" '
            f'style="display:inline-block;vertical-align:middle;background:linear-gradient(to right, {stops})">'
            f"{ticks}</span></span>")


def _ticks(k: str, scale: ColorScale) -> list[float]:
    lo, hi = scale.vmin, scale.vmax
    if k == "latency":      # 1-2-5 while they fit the bar's width, else decades
        ticks = [t for t in LogLocator(subs=(1.0, 2.0, 5.0)).tick_values(lo, hi) if lo <= t <= hi]
        if len(ticks) > 7:
            ticks = LogLocator(subs=(1.0,)).tick_values(lo, hi)
    elif scale.rate_center is not None:
        ticks = [0.0, 0.25, 0.5, 0.75, scale.rate_center, 1.0]
    else:
        ticks = MaxNLocator(nbins=5).tick_values(lo, hi)
    return sorted({float(t) for t in ticks if lo - 1e-12 <= t <= hi + 1e-12})


def _tick_label(k: str, t: float, scale: ColorScale) -> str:
    if k == "latency":
        return fmt_tick(t)
    if k in ("rate", "share"):
        return f"{100 * t:.{1 if scale.vmax - scale.vmin < 0.1 else 0}f} %"
    return f"{t:g}"


def marking_note(data: pd.DataFrame, thr: float = SUCCESS_THRESHOLD) -> str:
    """What a hatched cell means in a group's heatmaps."""
    vo = bool(has_vo(data).any())
    what = "success (and, where there are VO transactions, VO success)" if vo else "success"
    return (f'<span class="hatch"></span> hatched, framed cells: {what} at or below {thr:.0%}, i.e. not usable '
            "for the knee; FA and VO panels are hatched by their own operation's success.")


def per_rank_blocks(pta: pd.DataFrame, layout: dict, metrics=("success_rate", "commit_latency_p99_ms"),
                    max_ranks: int = 20, thr: float = SUCCESS_THRESHOLD) -> str:
    """Zipf runs: per combination of the facets and ``layout["rows"]`` (num_tables > 1), a panel per metric by
    table rank (rows; 1 = most popular) x ``layout["cols"]``, hatched where that table's success fails."""
    df, groups = rank_groups(pta, layout, max_ranks)
    cols = layout["cols"]
    metrics = [m for m in metrics if m in df.columns]
    lims = {m: color_limits(df, [m]) for m in metrics}
    blocks = []
    for parts, sub, n_ranks in groups:
        label = ", ".join(f"{axis_label(k)} {format_value(v)}" for k, v in parts.items())
        more = f" (ranks {max_ranks + 1}\u2013{n_ranks} not shown)" if n_ranks > max_ranks else ""
        panels = [heat_table(sub, m, "table_rank", cols, lims[m], thr, metric_title(m), mark_col="success_rate")
                  for m in metrics]
        blocks.append(f"<h3>{_e(label or 'Per table rank')}{_e(more)}</h3><div class=\"panels\">{''.join(panels)}"
                      "</div>")
    if not blocks:
        return ""
    bars = "".join(color_bar(m, lims[m], thr, metric_title(m) + ": ") for m in metrics)
    what = " and ".join(lower_first(metric_title(m)) for m in metrics)
    return (f"<p>Zipf table selection: per-table {what} by table popularity rank (rows; 1 = most popular) and "
            f"{_e(axis_label(cols))} (columns). Hatched, framed cells: that table's success rate is at or below "
            f"{thr:.0%}. {_e(NA_NOTE)}</p><div>{bars}</div>"
            + "".join(blocks))
