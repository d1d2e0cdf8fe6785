"""The report of a writers-knee sweep (a `knee:` sweep whose knees are writer counts, docs/knee.md#writers-knee):
per cell the writers knee floor(N*) with its CI [floor(lo), floor(hi)], or its status with its bound, worded as
every knee is (sim.knee.status.knee_text): a cell whose search found not even one writer passing is
`below_range (< 1 writer)`; one whose most writers tried still passed `above_range (> N writers)` (N read off the
record, or the cell's points, `knee_points.parquet`); one whose search did not bound it `undecided (why)`.

Layout: x the swept axis (a commit interval first), one line per provider, one panel per design; any other
parameter the three do not determine makes a figure (and table block) of its own. No plotting here
(plots.writers_knee_figures).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..knee.status import knee_text
from .aggregate import _hashable, format_value, parameter_columns, varying_parameters
from .designs import DESIGN_ORDER, PROVIDER_ORDER, ordered
from .labels import fmt_number, fmt_tick

#: x axis candidates, in order of preference (the first that varies and the line and panel keys do not fix)
X_PREFERRED = ["interval_ms", "workload.writers.interval_ms", "think_ms", "workload.writers.think_ms",
               "num_tables", "workload.num_tables", "max_retries", "commit.max_retries"]
#: metrics at the knee shown beside it when the knee record carries them (least squares at the knee)
AT_KNEE = {"success_rate": "success", "knee_throughput_cps": "throughput (c/s)",
           "measured_offered_cps": "arrivals/s", "commit_latency_mean_ms": "mean latency",
           "commit_latency_p99_ms": "P99", "missed_interval_share": "missed intervals",
           "commit_lag_mean_ms": "mean commit lag", "commit_lag_p99_ms": "P99 commit lag"}
#: the record's columns that are knee fields, not parameters (`writers` is also a standard parameter column)
_RECORD = {"writers", "writers_low", "writers_high"}


def is_writers_knees(knees: pd.DataFrame) -> bool:
    """True when every knee of a knee sweep is a writers knee (the record's `unit` is `writers`)."""
    return "unit" in knees.columns and len(knees) > 0 and bool(knees["unit"].astype(str).eq("writers").all())


def params_of(knees: pd.DataFrame) -> list[str]:
    """The parameters that vary over the cells (the knee's own `writers` column left out)."""
    return varying_parameters(knees.drop(columns=[c for c in _RECORD if c in knees.columns]))


def _varies(df: pd.DataFrame, c: str) -> bool:
    return c in df.columns and df[c].astype(str).nunique() > 1


def _fixed_by(df: pd.DataFrame, keys: list[str], c: str) -> bool:
    """True when the `keys` columns determine column c (a design fixes its scope, retries, protocol)."""
    if not keys:
        return df[c].nunique(dropna=False) <= 1
    return bool(df.groupby(keys, dropna=False)[c].nunique(dropna=False).max() <= 1)


def layout(knees: pd.DataFrame) -> dict:
    """``x`` (the swept axis), ``hue`` (provider), ``facet`` (design) and ``groups`` (every other parameter
    that they do not determine: one figure each); None where nothing varies for that role."""
    params = params_of(knees)
    sub = _hashable(knees, params)
    hue = next((c for c in ("provider", "storage.provider") if _varies(knees, c)), None)
    facet = "design" if _varies(knees, "design") else None
    placed = [c for c in (hue, facet) if c]
    free = [c for c in params if c not in placed and not _fixed_by(sub, placed, c)]
    x = next((c for c in X_PREFERRED if c in free), free[0] if free else None)
    groups: list[str] = []
    for c in free:
        if c != x and not _fixed_by(sub, placed + [x] + groups if x else placed + groups, c):
            groups.append(c)
    return {"x": x, "hue": hue, "facet": facet, "groups": groups}


def most_writers(knees: pd.DataFrame, points: pd.DataFrame | None) -> pd.Series:
    """Per cell the most writers its search ran (NaN without its points): where an `above_range` knee lies
    beyond."""
    keys = [c for c in parameter_columns(knees) if c not in _RECORD and points is not None and c in points.columns]
    if points is None or "writers" not in points.columns or not keys:
        return pd.Series(np.nan, index=knees.index)
    pts = _hashable(points, keys)
    most = pts.groupby(keys, dropna=False)["writers"].max().rename("_most").reset_index()
    cells = _hashable(knees, keys)[keys].reset_index()
    return cells.merge(most, on=keys, how="left").set_index("index")["_most"].reindex(knees.index)


def crossing_label(v: float, low: float, high: float) -> str:
    """The continuous crossing N* with its interval: '32.8 [30.8, 33.9]' (an unbounded side: ∞)."""
    def f(x):
        return "\u221e" if x == math.inf else "\u2013" if not math.isfinite(x) else fmt_number(x)
    return f"{f(v)} [{f(low)}, {f(high)}]" if math.isfinite(v) else "\u2013"


def plotted(knee_status: str, writers: float, bound: float) -> float:
    """Where the figure draws a cell: its knee; 0 below range; the bound (the most writers run) above range;
    nowhere (NaN) when undecided."""
    return {"ok": writers, "below_range": 0.0, "above_range": bound}.get(knee_status, math.nan)


def writers_knees_table(knees: pd.DataFrame, points: pd.DataFrame | None) -> tuple[pd.DataFrame, dict]:
    """One row per cell: the layout's keys, the search's `status`, the knee as reported (`knee_status`,
    `knee_reason`, `knee_bound_writers`: the most writers run above range, read off the cell's points when the
    record has no bound) and `knee_text` (sim.knee.status.knee_text), the writers knee and its CI, the crossing N*
    and its interval, `most_writers`, `plotted` (the figure's value), the AT_KNEE metrics the record carries, runs
    and simulated hours; rows in the report's order. And the layout."""
    lay = layout(knees)
    keys = key_columns(lay)
    num = {c: pd.to_numeric(knees[c], errors="coerce") if c in knees.columns else pd.Series(np.nan, index=knees.index)
           for c in ("writers", "writers_low", "writers_high", "writers_crossing", "writers_crossing_low",
                     "writers_crossing_high", "knee_bound_writers")}
    most = most_writers(knees, points)
    out = knees[keys].copy() if keys else pd.DataFrame(index=knees.index)
    out["status"] = knees["status"].astype(str)
    out["knee_status"] = knees["knee_status"].astype(str)
    out["knee_reason"] = knees["knee_reason"].fillna("").astype(str) if "knee_reason" in knees.columns else ""
    for c, v in num.items():
        out[c] = v
    above = out["knee_status"].eq("above_range") & out["knee_bound_writers"].isna()
    out.loc[above, "knee_bound_writers"] = most[above]
    out["unit"] = "writers"
    out["knee_text"] = [knee_text(r) for _, r in out.iterrows()]
    out = out.drop(columns="unit")
    out["most_writers"] = most
    out["plotted"] = [plotted(s, w, b) for s, w, b in zip(out["knee_status"], num["writers"],
                                                          out["knee_bound_writers"])]
    for c in [m for m in AT_KNEE if m in knees.columns] + ["runs", "full_runs", "simulated_hours"]:
        if c in knees.columns:
            out[c] = knees[c]
    return _ordered_rows(out, lay), lay


def key_columns(lay: dict) -> list[str]:
    """The table's keys, outermost first: the figure groups, the x axis, the panel, the line."""
    return [c for c in (*lay["groups"], lay["x"], lay["facet"], lay["hue"]) if c]


def _ordered_rows(table: pd.DataFrame, lay: dict) -> pd.DataFrame:
    """Rows sorted by the keys: designs and providers in the report's order, numbers ascending."""
    keys = key_columns(lay)
    if not keys:
        return table.reset_index(drop=True)
    rank = {}
    for c, order in ((lay["facet"], DESIGN_ORDER), (lay["hue"], PROVIDER_ORDER)):
        if c:
            rank[c] = {v: i for i, v in enumerate(ordered(table[c].dropna().unique().tolist(), order))}
    sort = _hashable(table, keys).assign(**{f"_o{i}": table[c].map(rank[c]) if c in rank else table[c]
                                            for i, c in enumerate(keys)})
    sort = sort.sort_values([f"_o{i}" for i in range(len(keys))], kind="stable")
    return table.loc[sort.index].reset_index(drop=True)


def value_label(col: str, v) -> str:
    """A key's value as shown: durations in ms as '10s', others as format_value."""
    if col.endswith("_ms") and isinstance(v, (int, float, np.number)) and math.isfinite(v):
        return fmt_tick(float(v))
    return format_value(v)


def pivot(table: pd.DataFrame, lay: dict) -> pd.DataFrame:
    """The knees as read (`knee_text`), one row per groups x x x facet, one column per line (provider): the shape
    of docs/knee.md's measured table."""
    rows_keys = [c for c in (*lay["groups"], lay["x"], lay["facet"]) if c]
    hue = lay["hue"]
    lines = list(dict.fromkeys(table[hue])) if hue else [None]
    rows = []
    for _, g in (table.groupby(rows_keys, sort=False, dropna=False) if rows_keys else [((), table)]):
        r = g.iloc[0]
        d = {c.split(".")[-1]: value_label(c, r[c]) for c in rows_keys}
        for lv in lines:
            cell = g if lv is None else g[g[hue] == lv]
            d["writers knee" if lv is None else format_value(lv)] = (cell["knee_text"].iloc[0] if len(cell)
                                                                      else "\u2013")
        rows.append(d)
    return pd.DataFrame(rows)
