"""Knee figures: the knee picture (knee commits/s against tables, the report's first screen) and the design
comparison (the knee per catalog design and provider, bars)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

import seaborn as sns

from ..aggregate import SUCCESS_THRESHOLD, format_value
from ..designs import DESIGN_ORDER, MIX_LABELS, PROVIDER_ORDER, ordered
from ..labels import axis_label, facet_label, order_key, slug
from .canvas import HATCH, facet_groups, new_figure, save, suptitle

# --------------------------------------------------------------------------------------------
# the knee picture (first screen of the report)
# --------------------------------------------------------------------------------------------


def knee_picture(knees: pd.DataFrame, layout: dict, out_dir, what: str) -> tuple[Path, str]:
    """Knee commits/s against tables, one line per ``layout["hue"]`` value, one panel per
    ``layout["facet"]`` value, 95 % bands shaded. ``knees`` has ``knee_cps`` and ``knee_cps_low/high``
    (:func:`sim.report.aggregate.knee_commits`); ``what`` says where the knees come from (caption)."""
    x, hue, facet = layout["x"], layout["hue"], layout["facet"]
    panels = sorted(knees[facet].dropna().unique().tolist(), reverse=True) if facet else [None]
    lines = sorted(knees[hue].dropna().unique().tolist(), key=lambda v: order_key(hue, v)) if hue else [None]
    palette = sns.color_palette("tab10", n_colors=max(len(lines), 1))
    fig = new_figure(4.2 * len(panels) + 1.8, 4.0)
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    ticks = sorted(pd.to_numeric(knees[x], errors="coerce").dropna().unique().tolist())
    for ax, pv in zip(axes, panels):
        sub = knees if pv is None else knees[knees[facet] == pv]
        for color, lv in zip(palette, lines):
            _knee_line(ax, (sub if lv is None else sub[sub[hue] == lv]).sort_values(x), x, color,
                       format_value(lv) if lv is not None else "knee")
        _knee_axes(ax, x, ticks)
        if pv is not None:
            ax.set_title(f"{axis_label(facet)} = {format_value(pv)}", loc="left", fontsize=10)
    axes[0].set_ylabel("knee throughput (commits/s, log)")
    bounded = [st for st in _BOUND_MARKERS if "knee_bound_cps" in knees.columns
               and (knees[_status_column(knees)].astype(str) == st).any()]
    handles, labels = axes[0].get_legend_handles_labels()
    for st in bounded:
        handles.append(Line2D([], [], ls="", marker=_BOUND_MARKERS[st], ms=7, mfc="white", mec="0.3", mew=1.6))
        labels.append(f"{st} (knee {'<' if st == 'below_range' else '>'} the marker)")
    if hue or bounded:
        fig.legend(handles, labels, loc="outside right upper", fontsize=8, frameon=False,
                   title=axis_label(hue) if hue else None)
    suptitle(fig, "Usable throughput: the knee")
    path = save(fig, Path(out_dir) / "knee.png")
    cap = (f"Commits/s at the knee (where success, and VO success for a mix, crosses {SUCCESS_THRESHOLD:.0%}) "
           f"against {axis_label(x)}" + (f", one line per {axis_label(hue)}" if hue else "")
           + (f", one panel per {axis_label(facet)}" if facet else "") + "; shaded: 95 % bands where both ends "
           "are finite and positive. " + ("Open triangles: a status's bound, the knee below (\u25bd) or above "
                                          "(\u25b3) it. " if bounded else "")
           + "A cell without a knee value is left out; the tables above give its status. " + what)
    return path, cap


def _knee_line(ax, line: pd.DataFrame, x: str, color, label: str) -> None:
    """Knee commits/s against ``x``, its 95 % band shaded where both ends are positive and finite (a band reaching
    0 would stretch the log axis to nothing), and the statuses with a bound as open triangles at it."""
    xs, ys, lo, hi = (pd.to_numeric(line[c], errors="coerce").to_numpy(dtype=float)
                      for c in (x, "knee_cps", "knee_cps_low", "knee_cps_high"))
    ok = np.isfinite(xs) & np.isfinite(ys) & (ys > 0)
    ax.plot(xs[ok], ys[ok], marker="o", ms=4, lw=1.6, color=color, label=label)
    band = ok & np.isfinite(lo) & np.isfinite(hi) & (lo > 0)
    if band.any():
        ax.fill_between(xs[ok], np.where(band, lo, np.nan)[ok], np.where(band, hi, np.nan)[ok], color=color,
                        alpha=0.2, lw=0)
    status = line[_status_column(line)].astype(str).to_numpy()
    bound = pd.to_numeric(line.get("knee_bound_cps", pd.Series(np.nan, index=line.index)),
                          errors="coerce").to_numpy(dtype=float)
    for st, marker in _BOUND_MARKERS.items():
        m = (status == st) & np.isfinite(xs) & np.isfinite(bound) & (bound > 0)
        ax.plot(xs[m], bound[m], ls="", marker=marker, ms=7, mfc="white", mec=color, mew=1.6)


#: a status with a bound, and its marker: the knee lies below (v) or above (^) the bound
_BOUND_MARKERS = {"below_range": "v", "above_range": "^"}


def _status_column(knees: pd.DataFrame) -> str:
    return "knee_status" if "knee_status" in knees.columns else "status"


def _knee_axes(ax, x: str, ticks: list) -> None:
    """Log-log axes, x ticks at the table counts run."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel(axis_label(x))
    ax.grid(True, which="major", alpha=0.3)


# --------------------------------------------------------------------------------------------
# design comparison
# --------------------------------------------------------------------------------------------

def design_knees(knee: pd.DataFrame, out_dir, extra: list[str] | None = None) -> list[tuple[Path, str]]:
    """The knee per design per provider in one figure (one per combination of ``extra`` group keys): facets
    rows = tables, columns = FA ratio; x = provider, one bar per design (log scale). Hatched bars: every load
    run passes (above range), the bar the highest throughput run, a lower bound; an 'x' at the bottom: no knee
    (the lightest load already fails, or no fit). ``knee`` is
    designs.design_knees()'s table. Returns ``[(path, caption), ...]``."""
    tables = sorted(knee["num_tables"].unique())
    mixes = sorted(knee["fast_append_ratio"].unique(), reverse=True)
    designs = ordered(knee["design"], DESIGN_ORDER)
    providers = ordered(knee["provider"], PROVIDER_ORDER)
    colors = dict(zip(designs, sns.color_palette("tab10", n_colors=max(len(designs), 1))))
    ylim = _design_ylim(knee)
    out = []
    for parts, sub in facet_groups(knee, list(extra or [])):
        fig = new_figure(1.1 * len(providers) * len(mixes) + 2.5, 2.6 * len(tables) + 0.8)
        axes = fig.subplots(len(tables), len(mixes), squeeze=False, sharey=True)
        for i, t in enumerate(tables):
            for j, f in enumerate(mixes):
                cell = sub[(sub["num_tables"] == t) & (sub["fast_append_ratio"] == f)]
                _design_bars(axes[i][j], cell, designs, providers, colors, ylim)
                axes[i][j].set_title(f"{t} table{'s' if t != 1 else ''}, "
                                     f"{MIX_LABELS.get(f, f'FA {format_value(f)}')}", loc="left", fontsize=10)
            axes[i][0].set_ylabel("knee (commits/s, log)")
        fig.legend(handles=_design_legend(designs, colors), loc="outside lower center", ncols=2, fontsize=8,
                   frameon=False)   # (beside the axes it met the title on a narrow figure)
        label = facet_label(parts)
        suptitle(fig, "Knee per catalog design and provider" + (f" \u2014 {label}" if label else ""))
        path = save(fig, Path(out_dir) / f"design_knees{slug(parts)}.png")
        out.append((path, _design_caption(label)))
    return out


def _design_ylim(knee: pd.DataFrame) -> tuple[float, float]:
    """Shared log y range: a factor 2 beyond the smallest and largest knee."""
    tp = pd.to_numeric(knee["knee_throughput_cps"], errors="coerce")
    if "knee_at_edge" in knee.columns:
        tp = tp.where(~knee["knee_at_edge"].astype(bool), pd.to_numeric(knee["max_throughput_cps"], errors="coerce"))
    lo = float(tp[tp > 0].min()) / 2 if (tp > 0).any() else 0.1
    hi = float(tp.max()) * 2 if tp.notna().any() else 10.0
    return lo, hi


def _design_bars(ax, cell: pd.DataFrame, designs: list, providers: list, colors: dict,
                 ylim: tuple[float, float]) -> None:
    """One panel: per provider a group of bars, one per design; hatched at the edge, 'x' for no knee."""
    width = 0.8 / max(len(designs), 1)
    for k, d in enumerate(designs):
        rows = cell[cell["design"] == d].set_index("provider")
        for x, p in enumerate(providers):
            if p not in rows.index:
                continue
            xpos = x - 0.4 + width * (k + 0.5)
            r = rows.loc[p]
            edge = bool(r.get("knee_at_edge", False))
            v = r["max_throughput_cps"] if edge else r["knee_throughput_cps"]
            if not np.isfinite(v):
                ax.plot(xpos, ylim[0] * 1.15, marker="x", color=colors[d], ms=6)
                continue
            ax.bar(xpos, v, width=width, color=colors[d], edgecolor="k", lw=0.4,
                   hatch=HATCH if edge else None)
    ax.set_yscale("log")
    ax.set_ylim(*ylim)
    ax.set_xticks(range(len(providers)), providers)
    ax.grid(True, axis="y", which="major", alpha=0.3)


def _design_legend(designs: list, colors: dict) -> list:
    handles = [Patch(facecolor=colors[d], edgecolor="k", label=d) for d in designs]
    return handles + [Patch(facecolor="white", edgecolor="k", hatch=HATCH, label="above range (a lower bound)"),
                      Line2D([], [], color="k", marker="x", ls="", label="no knee (below range)")]


def _design_caption(label: str) -> str:
    return ("Knee (\"usable throughput\": commits/s where success (committed / window transactions that began "
            f"to commit), and for a mix VO success, crosses {SUCCESS_THRESHOLD:.0%}, by the knee search's binomial "
            "regression over the grid's runs near the crossing) of each catalog design (bar colour) per provider "
            "(x), by table count (rows) and FA ratio (columns); log scale. Hatched: every load the sweep ran for "
            "that design passes (above range), the bar its highest throughput, so the true knee is higher. 'x': no "
            "knee (the lightest load already fails, or the fitted success does not fall with load)."
            + (f" {label}." if label else ""))
