"""What every figure of the report shares: a constrained-layout Figure, its wrapped title, its atomic save, the
facet groups it is drawn for, the FA / VO panels of a mix and the replication note of its caption.

Figures are :class:`matplotlib.figure.Figure` objects (Agg canvas when saved), never pyplot's global state, so
this works headless and does not change the backend of a notebook that imports it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...results_io import atomic_write_with
from ..aggregate import _hashable

DPI = 110
HATCH = "////"

#: metrics that get FA / VO panels side by side for a mix
PER_OP_METRICS = {"success_rate"} | {f"commit_latency_{s}_ms" for s in ("mean", "p50", "p95", "p99")}


def new_figure(width_in: float, height_in: float) -> Figure:
    """A Figure whose constrained layout keeps titles, legends and colour bars apart."""
    fig = Figure(figsize=(width_in, height_in))
    fig.set_layout_engine("constrained")
    return fig


def suptitle(fig: Figure, text: str) -> None:
    """The figure's title, wrapped to its width."""
    width = int(fig.get_figwidth() * 10.5)
    fig.suptitle(textwrap.fill(text, width=max(width, 30)), fontsize=11)


def save(fig: Figure, path: Path) -> Path:
    atomic_write_with(path, lambda tmp: fig.savefig(tmp, dpi=DPI, format=path.suffix.lstrip(".") or "png"))
    return path


def facet_groups(df: pd.DataFrame, keys: list[str]):
    """(dict of key values, sub-frame) per combination of ``keys`` (NaN is a value)."""
    if not keys:
        yield {}, df
        return
    df = _hashable(df, keys)
    for key, sub in df.groupby(keys, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(keys, key)), sub


def panel_metrics(sub: pd.DataFrame, metric: str, per_op: bool) -> list[str]:
    """Panel metrics: FA and VO side by side for a mix, VO alone for an all-VO workload."""
    if not per_op or metric not in PER_OP_METRICS or "fast_append_ratio" not in sub.columns:
        return [metric]
    r = pd.to_numeric(sub["fast_append_ratio"], errors="coerce").dropna().unique()
    if len(r) == 0 or np.all(r >= 1):
        return [metric]
    if np.all(r <= 0):
        return ["vo_" + metric]
    return ["fa_" + metric, "vo_" + metric]


def reps_note(sub: pd.DataFrame, what: str = "cell") -> str:
    """Caption sentence: how many replications each cell (or point) averages."""
    if "n_reps" not in sub.columns or sub.empty:
        return ""
    lo, hi = int(sub["n_reps"].min()), int(sub["n_reps"].max())
    n = f"{lo}" if lo == hi else f"{lo}\u2013{hi}"
    return f" Each {what} is the mean of {n} replication(s)."
