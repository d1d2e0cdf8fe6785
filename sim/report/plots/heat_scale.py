"""What a heatmap shows, apart from how it is drawn: the grid of cell means, the cells that fail the success
threshold, and the colour scale of the metric's kind. Shared by the matplotlib heatmap (``annotated_heatmap``,
for notebooks) and the report's HTML heatmaps (``sim.report.html_heatmaps``), so both colour and mark alike."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm, Normalize, TwoSlopeNorm

from ..aggregate import qualifies
from ..labels import kind
from .canvas import facet_groups

CMAPS = {"rate": "RdYlGn", "share": "Purples", "latency": "YlOrRd", "number": "viridis"}


@dataclass(frozen=True)
class ColorScale:
    cmap: str
    norm: Normalize
    vmin: float
    vmax: float
    plot_values: np.ndarray       # the values coloured (latency: non-positive ones left blank)
    rate_center: float | None     # the diverging scale's centre (a rate's threshold), else None


def cell_means(keys: pd.DataFrame, col: str, rows: str, cols: str) -> pd.DataFrame:
    """Mean of ``col`` per (row, col) cell over its defined values (NaN where none), rows and columns ascending
    (NaN last)."""
    return _cells(keys, pd.to_numeric(keys[col], errors="coerce").to_numpy(dtype=float), rows, cols, np.add)


def _cells(keys: pd.DataFrame, v: np.ndarray, rows: str, cols: str, ufunc) -> pd.DataFrame:
    """``v`` reduced per (row, col) cell by ``ufunc`` (np.add: the mean; np.maximum: the largest) over its defined
    values. By codes rather than a groupby: a report draws 120 panels, and a groupby and unstack per panel was
    most of their time."""
    ri, row_values = pd.factorize(keys[rows], sort=True, use_na_sentinel=False)
    ci, col_values = pd.factorize(keys[cols], sort=True, use_na_sentinel=False)
    shape, ok = (len(row_values), len(col_values)), np.isfinite(v)
    acc = np.full(shape, 0.0 if ufunc is np.add else -np.inf)
    ufunc.at(acc, (ri[ok], ci[ok]), v[ok])
    n = np.zeros(shape)
    np.add.at(n, (ri[ok], ci[ok]), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(n > 0, acc / n if ufunc is np.add else acc, np.nan)
    return pd.DataFrame(out, index=pd.Index(row_values, name=rows), columns=pd.Index(col_values, name=cols))


def mark_column(metric: str, data: pd.DataFrame) -> str:
    """The success rate a metric's cells are marked by: its operation's (fa_ / vo_), else "knee"."""
    op = metric[:3]
    if op in ("fa_", "vo_") and f"{op}success_rate" in data.columns:
        return f"{op}success_rate"
    return "knee"


def marked_cells(keys: pd.DataFrame, grid: pd.DataFrame, rows: str, cols: str, thr: float | None,
                 mark_col: str) -> np.ndarray:
    """Cells whose success (``mark_col``; "knee": success and, where VO exists, VO success) is at or below thr."""
    if thr is not None and mark_col == "knee" and "success_rate" in keys.columns:
        defined = pd.to_numeric(keys["success_rate"], errors="coerce").notna()
        bad = (~qualifies(keys, thr) & defined).astype(float).where(defined).to_numpy(dtype=float)
        m = _cells(keys, bad, rows, cols, np.maximum)
        m = m.reindex(index=grid.index, columns=grid.columns).to_numpy(dtype=float)
        return np.isfinite(m) & (m > 0)
    if thr is not None and mark_col in keys.columns:
        m = cell_means(keys, mark_col, rows, cols)
        m = m.reindex(index=grid.index, columns=grid.columns).to_numpy(dtype=float)
        return np.isfinite(m) & ~(m > thr)
    return np.zeros(grid.shape, dtype=bool)


def color_scale(values: np.ndarray, k: str, thr: float | None, vmin: float | None = None,
                vmax: float | None = None, cmap: str | None = None) -> ColorScale:
    """Limits and norm: rates 0..1 (diverging at the threshold), shares 0..their largest value (an unfinished share
    of 0.3-2.6 % on 0-100 % is all white), latencies on a log scale, anything else linear over its finite values."""
    finite = values[np.isfinite(values)]
    if k == "rate":
        vmin = 0.0 if vmin is None else vmin
        vmax = 1.0 if vmax is None else vmax
    elif k == "share":
        vmin = 0.0 if vmin is None else vmin
        vmax = share_top(finite) if vmax is None else vmax
    if k == "latency":
        finite = finite[finite > 0]
    if vmin is None:
        vmin = float(finite.min()) if finite.size else (1.0 if k == "latency" else 0.0)
    if vmax is None:
        vmax = float(finite.max()) if finite.size else vmin + 1.0
    if vmax <= vmin:
        vmin, vmax = (vmin / 2, vmax * 2) if k == "latency" and vmin > 0 else (vmin - 0.5, vmax + 0.5)
    cmap = cmap or CMAPS[k]
    if k == "latency":
        vmin = max(vmin, 1e-3)
        return ColorScale(cmap, LogNorm(vmin=vmin, vmax=vmax), vmin, vmax, np.where(values > 0, values, np.nan), None)
    if k == "rate" and thr is not None and vmin < thr < vmax:
        # diverging scale centred on the knee threshold: the 80..100 % range stays readable
        return ColorScale(cmap, TwoSlopeNorm(vcenter=thr, vmin=vmin, vmax=vmax), vmin, vmax, values, thr)
    return ColorScale(cmap, Normalize(vmin=vmin, vmax=vmax), vmin, vmax, values, None)


def share_top(values) -> float:
    """The top of a share's colour scale: its largest value (1 when none is positive)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(min(v.max(), 1.0)) if v.size and v.max() > 0 else 1.0


def color_limits(agg: pd.DataFrame, metrics: list[str]) -> tuple[float | None, float | None]:
    """Shared colour limits for a family of panels: rates 0..1, shares 0..their largest value, else the range of
    the finite values (latency: positive ones)."""
    k = kind(metrics[0])
    vals = pd.concat([pd.to_numeric(agg[m], errors="coerce") for m in metrics if m in agg.columns]
                     or [pd.Series(dtype=float)])
    vals = vals[np.isfinite(vals)]
    if k == "rate":
        return 0.0, 1.0
    if k == "share":
        return 0.0, share_top(vals)
    if k == "latency":
        vals = vals[vals > 0]
    if vals.empty:
        return None, None
    lo, hi = float(vals.min()), float(vals.max())
    if k == "latency" and hi <= lo:
        lo, hi = lo / 2, hi * 2
    return lo, hi


def rank_groups(per_table_agg: pd.DataFrame, layout: dict, max_ranks: int) -> tuple[pd.DataFrame, list]:
    """The Zipf runs of an aggregated per-table table, and per combination of the facets and ``layout["rows"]``
    that has two ranks or more: ``(values, its rows up to max_ranks, its number of ranks)``."""
    df = per_table_agg
    if "table_selection" in df.columns:
        df = df[df["table_selection"].astype(str) == "zipf"]
    if df.empty or "table_rank" not in df.columns:
        return df, []
    rows = layout["rows"]
    keys = [c for c in layout.get("facets", []) if c in df.columns and c != "table_selection"]
    if rows in df.columns and rows != "table_rank":
        keys.append(rows)
    return df, [(parts, sub[sub["table_rank"] <= max_ranks], int(sub["table_rank"].max()))
                for parts, sub in facet_groups(df, keys) if sub["table_rank"].nunique() >= 2]
