"""The writers-knee figure: per cell the writers knee with its 95 % CI against the swept axis (a commit interval),
one line of markers per provider, one panel per design. A cell below range (not even one writer passes) sits at
0, one above range (the most writers tried still pass) at that count with an upward arrow; y is linear up to one
writer, log 2 above, so both show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

import seaborn as sns

from ..aggregate import format_value
from ..labels import facet_label, slug
from ..writers_knees import value_label
from .canvas import facet_groups, new_figure, save, suptitle

_BELOW, _ABOVE, _KNEE = "v", "^", "o"


def writers_knee_figures(table: pd.DataFrame, lay: dict, out_dir) -> list[tuple[Path, str]]:
    """One figure per combination of ``lay["groups"]``. ``table`` is
    :func:`sim.report.writers_knees.writers_knees_table`'s (rows in the report's order). Returns
    ``[(path, caption), ...]``."""
    x, hue, facet = lay["x"], lay["hue"], lay["facet"]
    panels = list(dict.fromkeys(table[facet])) if facet else [None]
    lines = list(dict.fromkeys(table[hue])) if hue else [None]
    colors = dict(zip(lines, sns.color_palette("tab10", n_colors=max(len(lines), 1))))
    xs = _x_positions(table, x)
    top = float(np.nanmax(table["plotted"].to_numpy(dtype=float), initial=1.0))
    out = []
    for parts, sub in facet_groups(table, lay["groups"]):
        fig = new_figure(3.0 * len(panels) + 3.4, 4.0)
        axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
        for ax, pv in zip(axes, panels):
            cell = sub if pv is None else sub[sub[facet] == pv]
            for i, lv in enumerate(lines):
                dodge = (i - (len(lines) - 1) / 2) * 0.6 / max(len(lines), 1)
                _line(ax, cell if lv is None else cell[cell[hue] == lv], x, xs, dodge, colors[lv])
            _axes(ax, x, xs, top)
            if pv is not None:
                ax.set_title(f"{facet} = {format_value(pv)}", loc="left", fontsize=10)
        axes[0].set_ylabel("writers knee (log 2 above 1)")
        fig.legend(handles=_legend(lines, colors, hue), loc="outside right upper", fontsize=8, frameon=False,
                   title=hue)
        label = facet_label(parts)
        suptitle(fig, "Writers knee: the most writers at the success threshold"
                 + (f" \u2014 {label}" if label else ""))
        path = save(fig, Path(out_dir) / f"writers_knee{slug(parts)}.png")
        out.append((path, _caption(x, hue, facet, label)))
    return out


def _x_positions(table: pd.DataFrame, x: str | None) -> dict:
    """The x axis is categorical: one slot per value of `x`, sorted."""
    if x is None:
        return {None: 0}
    vals = list(dict.fromkeys(table[x]))
    try:
        vals = sorted(vals)
    except TypeError:
        pass
    return {v: i for i, v in enumerate(vals)}


def _line(ax, line: pd.DataFrame, x: str | None, xs: dict, dodge: float, color) -> None:
    """One provider in one panel: knees with CI bars joined by a thin line; censored cells as triangles."""
    if line.empty:
        return
    pos = np.array([xs[v] for v in (line[x] if x else [None] * len(line))], dtype=float) + dodge
    y = line["plotted"].to_numpy(dtype=float)
    status = line["status"].astype(str).to_numpy()
    drawn = np.isfinite(y)
    knee = drawn & ~np.isin(status, ["below_range", "above_range"])
    idx = np.flatnonzero(drawn)
    for a, b in zip(idx[:-1], idx[1:]):      # dotted where a censored cell ends the segment
        ax.plot(pos[[a, b]], y[[a, b]], color=color, lw=0.9, alpha=0.6, ls="-" if knee[a] and knee[b] else ":")
    if knee.any():
        lo = line["writers_low"].to_numpy(dtype=float)[knee]
        high = line["writers_high"].to_numpy(dtype=float)[knee]
        hi = np.where(np.isinf(high), line["most_writers"].to_numpy(dtype=float)[knee], high)   # up to the most run
        hi = np.where(np.isfinite(hi), np.maximum(hi, y[knee]), y[knee])
        err = np.vstack([y[knee] - np.where(np.isfinite(lo), lo, y[knee]), hi - y[knee]])
        ax.errorbar(pos[knee], y[knee], yerr=np.maximum(err, 0), fmt=_KNEE, ms=4.5, color=color, capsize=2.5, lw=1.2)
        open_ = np.isinf(high)              # Fieller's interval without an upper end: the bar ends in an arrowhead
        ax.plot(pos[knee][open_], hi[open_], ls="", marker=_ABOVE, ms=5, color=color)
    for st, marker in (("below_range", _BELOW), ("above_range", _ABOVE)):
        m = drawn & (status == st)
        ax.plot(pos[m], y[m], ls="", marker=marker, ms=7, mfc="white", mec=color, mew=1.6)


def _axes(ax, x: str | None, xs: dict, top: float) -> None:
    """Categorical x; y 0 then log 2 (symlog, linear below one writer), ticks at powers of two."""
    ax.set_yscale("symlog", base=2, linthresh=1.0, linscale=0.6)
    ticks = [0.0] + [2.0 ** k for k in range(int(np.ceil(np.log2(max(top, 1.0)))) + 1)]
    ax.set_ylim(-0.3, max(top, 1.0) * 1.5)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xticks(list(xs.values()), [value_label(x, v) if x else "" for v in xs])
    ax.set_xlim(-0.5, len(xs) - 0.5)
    if x:
        ax.set_xlabel(x.split(".")[-1])
    ax.grid(True, axis="y", which="major", alpha=0.3)


def _legend(lines: list, colors: dict, hue: str | None) -> list:
    handles = [Line2D([], [], color=colors[lv], marker=_KNEE, ms=4.5, label=format_value(lv))
               for lv in lines if lv is not None]
    grey = dict(ls="", ms=7, mfc="white", mec="0.3", mew=1.6)
    return handles + [Line2D([], [], marker=_BELOW, label="below range (at 0)", **grey),
                      Line2D([], [], marker=_ABOVE, label="above range (at the most tried)", **grey)]


def _caption(x: str | None, hue: str | None, facet: str | None, label: str) -> str:
    return ("The writers knee (the most writers at which success, counted per tick for periodic writers, is at "
            "least the threshold: floor of the fitted crossing) with its 95 % CI as error bars"
            + (f", against {x.split('.')[-1]}" if x else "") + (f", one line per {hue}" if hue else "")
            + (f", one panel per {facet}" if facet else "") + ". Open triangles: censored searches, a downward "
            "one at 0 when not even one writer meets the threshold (below_range), an upward one at the most "
            "writers the search tried when even those pass (above_range: the knee is higher); an error bar ending in a "
            "small filled arrowhead: a CI without an upper end; dotted: a segment "
            "to a censored cell. Failed searches are left out (see the table). y is linear from 0 to 1 writer, "
            "log 2 above." + (f" {label}." if label else ""))
