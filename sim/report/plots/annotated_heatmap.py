"""One annotated heatmap on a matplotlib Axes: the grid of means, the cells marked as failing the success
threshold, the colour scale of the metric's kind, and the drawing (seaborn) with its labels and legend."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator, PercentFormatter

import seaborn as sns

from ..aggregate import SUCCESS_THRESHOLD, _hashable, format_value, has_vo
from ..labels import axis_label, cell_formatter, fmt_tick, kind, metric_title
from .canvas import HATCH, new_figure
from .heat_scale import ColorScale, cell_means, color_scale, mark_column, marked_cells

MARK_COLOR = (0.1, 0.1, 0.1, 0.6)
NAN_COLOR = "#e6e6e6"


@dataclass(frozen=True)
class HeatmapStyle:
    """How :func:`heatmap` marks, labels and colours its cells; every field's None means the metric's default.

    ``mark_below``: success threshold of the hatched cells (None or True: 95 %, the knee's; False: no marking).
    ``mark_col``: the success rate tested (None: the metric's operation's, else ``"knee"``; see heatmap()).
    ``fmt``: format spec or callable of the cell labels. ``vmin`` / ``vmax`` / ``cmap``: the colour scale.
    ``title``: the Axes title (None: the metric's). ``cbar`` / ``legend``: draw the colour bar / the legend.
    """

    mark_below: float | bool | None = None
    mark_col: str | None = None
    fmt: str | Callable[[float], str] | None = None
    vmin: float | None = None
    vmax: float | None = None
    cmap: str | None = None
    title: str | None = None
    cbar: bool = True
    legend: bool = True

    def threshold(self) -> float | None:
        """The marking threshold, None when marking is off."""
        if self.mark_below is False:
            return None
        return SUCCESS_THRESHOLD if self.mark_below is None or self.mark_below is True else self.mark_below


def heatmap(agg: pd.DataFrame, metric: str, rows: str = "num_tables", cols: str = "inter_arrival_ms",
            ax=None, style: HeatmapStyle | None = None, **options):
    """One annotated heatmap of ``metric``: ``rows`` on y (ascending downwards), ``cols`` on x
    ascending (for inter-arrival: load falls left to right).

    ``options`` are :class:`HeatmapStyle` fields (``mark_below=0.9``, ``vmin=...``), overriding ``style``.
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
    style = replace(style or HeatmapStyle(), **options)
    if ax is None:
        ax = new_figure(*panel_size(agg, rows, cols)).add_subplot()
    data = agg if metric in agg.columns else agg.assign(**{metric: np.nan})
    keys = _hashable(data, [rows, cols])
    grid = cell_means(keys, metric, rows, cols)
    values = grid.to_numpy(dtype=float)
    thr = style.threshold()
    mark_col = style.mark_col or mark_column(metric, data)
    marked = marked_cells(keys, grid, rows, cols, thr, mark_col)
    scale = color_scale(values, kind(metric), thr, style.vmin, style.vmax, style.cmap)
    fontsize = 9 if values.shape[1] <= 12 else 8
    ax.set_facecolor(NAN_COLOR)
    _draw_cells(ax, grid, values, scale, metric, style, fontsize)
    _mark_cells(ax, values, marked, fontsize)
    _label_axes(ax, grid, rows, cols)
    _title_and_legend(ax, metric, style, thr, mark_col, vo=bool(has_vo(data).any()))
    return ax


def panel_size(agg: pd.DataFrame, rows: str, cols: str) -> tuple[float, float]:
    """(width, height) in inches of one heatmap panel: room for its rows and columns of labels."""
    nc = agg[cols].nunique(dropna=False) if cols in agg.columns else 1
    nr = agg[rows].nunique(dropna=False) if rows in agg.columns else 1
    return max(4.5, 0.72 * nc + 2.4), max(2.8, 0.42 * nr + 1.9)


# --------------------------------------------------------------------------------------------
# drawing
# --------------------------------------------------------------------------------------------

def _draw_cells(ax, grid: pd.DataFrame, values: np.ndarray, scale: ColorScale, metric: str,
                style: HeatmapStyle, fontsize: int) -> None:
    """The coloured, labelled cells (seaborn) and the colour bar; undefined cells stay blank."""
    nrows, ncols = values.shape
    if not (nrows and ncols):
        return
    label = cell_formatter(metric, style.fmt)
    annot = np.array([[label(v) if np.isfinite(v) else "" for v in row] for row in values], dtype=object)
    frame = pd.DataFrame(scale.plot_values, index=grid.index, columns=grid.columns)
    sns.heatmap(frame, ax=ax, annot=annot, fmt="", cmap=scale.cmap, norm=scale.norm, cbar=style.cbar,
                cbar_kws=_colorbar_options(metric), mask=~np.isfinite(scale.plot_values), linewidths=0.6,
                linecolor="white", annot_kws={"fontsize": fontsize}, square=False)
    cb = ax.collections[0].colorbar if style.cbar and ax.collections else None
    if cb is not None:
        _colorbar_ticks(cb, kind(metric), scale)


def _colorbar_options(metric: str) -> dict:
    k = kind(metric)
    opts = {"label": metric_title(metric), "shrink": 0.9}
    if k in ("rate", "share"):
        opts["format"] = PercentFormatter(xmax=1, decimals=0 if k == "rate" else None)   # a share may span 0-3 %
    elif k == "latency":
        opts["label"] = metric_title(metric) + " (log scale)"
    return opts


def _colorbar_ticks(cb, k: str, scale: ColorScale) -> None:
    """Latency: 1-2-5 ticks as durations; a diverging rate: quarters plus the threshold."""
    if k == "latency":
        cb.ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        cb.ax.yaxis.set_minor_locator(NullLocator())
        cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_tick(v)))
    elif scale.rate_center is not None:
        ticks = [t for t in (0.0, 0.25, 0.5, 0.75, scale.rate_center, 1.0) if scale.vmin <= t <= scale.vmax]
        cb.ax.yaxis.set_major_locator(FixedLocator(sorted(set(ticks))))
        cb.ax.yaxis.set_minor_locator(NullLocator())


def _mark_cells(ax, values: np.ndarray, marked: np.ndarray, fontsize: int) -> None:
    """'n/a' on undefined cells, hatched frames on marked ones, their labels kept readable over the hatching."""
    nrows, ncols = values.shape
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
            t.set_bbox(dict(boxstyle="round,pad=0.15", facecolor="white", alpha=0.75,
                            edgecolor="none"))
            t.set_color("black")


def _label_axes(ax, grid: pd.DataFrame, rows: str, cols: str) -> None:
    nrows, ncols = grid.shape
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


def _title_and_legend(ax, metric: str, style: HeatmapStyle, thr: float | None, mark_col: str,
                      vo: bool) -> None:
    show_legend = style.legend and thr is not None
    # with a legend, the title sits above it (pad) so the two never collide on narrow panels
    ax.set_title(style.title if style.title is not None else metric_title(metric), loc="left", fontsize=10,
                 pad=17 if show_legend else 6)
    if show_legend:
        ax.legend(handles=[Patch(facecolor="white", edgecolor=MARK_COLOR, hatch=HATCH,
                                 label=_mark_phrase(mark_col, thr, vo))],
                  loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8,
                  borderaxespad=0.1, handlelength=1.6, handleheight=1.2)


def _mark_phrase(mark_col: str, thr: float, vo: bool = False) -> str:
    if mark_col == "knee":
        return (f"success or VO success \u2264 {thr:.0%}" if vo else f"success rate \u2264 {thr:.0%}")
    who = {"fa_success_rate": "FA success rate", "vo_success_rate": "VO success rate"}.get(
        mark_col, mark_col.replace("_", " "))
    return f"{who} \u2264 {thr:.0%}"
