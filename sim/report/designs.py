"""The design comparison (MODEL.md 'Named designs'): knee per design x provider x tables x FA ratio.

A sweep with a `design` column taking more than one value is read as a comparison of catalog designs. The knee is
the report's (aggregate.knee_table: where success over the transactions that began to commit, and VO success for a
mix, crosses 95 %, by the knee search's binomial regression over the grid's runs near the crossing, with its CI; or
a status with its bound), found per design and configuration; beside it, what was happening at the knee (least
squares over the same runs): the share of window transactions still unfinished when the run stopped (GCS's 429
resend loops) and the throttled resends per commit. No plotting here (plots.design_knees).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..knee.status import knee_text
from .aggregate import _hashable, format_value, knee_table, parameter_columns, varying_parameters

#: the comparison's axes: figure x, hue, facet rows, facet columns
DESIGN_KEYS = ["design", "provider", "num_tables", "fast_append_ratio"]
#: what the headline table shows beside the knee, at the knee (least squares over the fit's runs)
AT_KNEE = ["unfinished_share", "throttled_per_commit", "commit_latency_mean_ms", "gets_per_commit"]
#: the order designs are shown in (others follow, sorted)
DESIGN_ORDER = ["file", "fs-table", "log", "rest"]
PROVIDER_ORDER = ["s3x", "s3", "azurex", "azure", "gcp", "instant"]
MIX_LABELS = {1.0: "FA", 0.9: "90/10", 0.5: "50/50"}


def is_design_sweep(df: pd.DataFrame) -> bool:
    """True when the results table compares catalog designs (a `design` column with several values)."""
    return "design" in df.columns and df["design"].nunique(dropna=True) > 1 \
        and set(DESIGN_KEYS) <= set(df.columns)


def ordered(values, order: list[str]) -> list:
    """`values` (unique) in `order`, unknown ones after, sorted."""
    vals = list(dict.fromkeys(values))
    return [v for v in order if v in vals] + sorted(v for v in vals if v not in order)


def design_group_columns(df: pd.DataFrame, load: str = "inter_arrival_ms") -> list[str]:
    """DESIGN_KEYS plus every other varying parameter that the design and provider do not determine (e.g. a
    service latency swept for rest alone is determined by the design; a swept throttle flag is not)."""
    sub = _hashable(df, parameter_columns(df))
    extra = []
    for c in varying_parameters(df):
        if c in DESIGN_KEYS or c == load or c.endswith("inter_arrival.mean_ms") or c.endswith("inter_arrival.median_ms"):
            continue
        if sub.groupby(DESIGN_KEYS, dropna=False)[c].nunique(dropna=False).max() <= 1:
            continue          # one value per comparison cell: a label of the design (its catalog, scope, ...)
        extra.append(c)
    return DESIGN_KEYS + extra


def design_knees(df: pd.DataFrame, load: str = "inter_arrival_ms") -> pd.DataFrame:
    """The knee per design group (aggregate.knee_table's columns: a knee with its CI, or a status with its bound)
    with AT_KNEE at the knee (`<metric>_at_knee`, `ok` rows). `df` is the raw results table (the fit's runs) or
    aggregate()'s output (each point's replications pooled)."""
    keys = design_group_columns(df, load)
    cols = [m for m in AT_KNEE if m in df.columns]
    knee = knee_table(df, keys, load, at_knee=cols)
    for m in AT_KNEE:
        if f"{m}_at_knee" not in knee.columns:
            knee[f"{m}_at_knee"] = np.nan
    return knee


def with_ratio_to(knee: pd.DataFrame, baseline: str = "file") -> pd.DataFrame:
    """`knee` with `ratio_to_<baseline>`: each design's knee over the baseline design's knee in the same
    provider / tables / FA ratio (and any other group key); NaN unless both are `ok`."""
    keys = [c for c in design_group_columns_of(knee) if c != "design"]
    base = knee[knee["design"] == baseline][keys + ["knee_throughput_cps"]].rename(
        columns={"knee_throughput_cps": "_base"})
    out = knee.merge(base, on=keys, how="left")
    out[f"ratio_to_{baseline}"] = out["knee_throughput_cps"] / out["_base"]
    return out.drop(columns="_base")


def knee_cell(r) -> str:
    """One headline cell: the knee as `sim.knee.status.knee_text` words it (c/s with its 95 % band, or a status
    with its bound), with the unfinished share and throttled resends per commit at the knee where they are not
    negligible."""
    s = knee_text(r)
    if r.get("knee_status") != "ok":
        return s
    notes = []
    u = r.get("unfinished_share_at_knee", np.nan)
    if isinstance(u, (int, float, np.floating)) and math.isfinite(u) and u >= 0.05:
        notes.append(f"unfinished {100 * u:.0f} %")
    t = r.get("throttled_per_commit_at_knee", np.nan)
    if isinstance(t, (int, float, np.floating)) and math.isfinite(t) and t >= 0.05:
        notes.append(f"{t:.2g} 429/commit")
    return s + (f" ({', '.join(notes)})" if notes else "")


def headline(knee: pd.DataFrame, tables=(1, 50), mixes=(1.0, 0.9)) -> pd.DataFrame:
    """The headline table: one row per (tables, mix, design) and one column per provider, cells `knee_cell`.
    Groups with extra keys (design_group_columns) keep them as leading columns."""
    k = knee[knee["num_tables"].isin(tables) & knee["fast_append_ratio"].isin(mixes)].copy()
    extra = [c for c in k.columns if c not in DESIGN_KEYS and c in design_group_columns_of(knee)]
    k["cell"] = [knee_cell(r) for _, r in k.iterrows()]
    k["mix"] = k["fast_append_ratio"].map(lambda f: MIX_LABELS.get(f, f"FA {format_value(f)}"))
    rows = []
    providers = ordered(k["provider"], PROVIDER_ORDER)
    designs = ordered(k["design"], DESIGN_ORDER)
    for t in tables:
        for f in mixes:
            for d in designs:
                part = k[(k.num_tables == t) & (k.fast_append_ratio == f) & (k.design == d)]
                for key, g in (part.groupby(extra, dropna=False) if extra else [((), part)]):
                    if g.empty:
                        continue
                    key = key if isinstance(key, tuple) else (key,)
                    row = {"tables": t, "mix": g["mix"].iloc[0], "design": d,
                           **{c: format_value(v) for c, v in zip(extra, key)}}
                    cells = dict(zip(g["provider"], g["cell"]))
                    row.update({p: cells.get(p, "") for p in providers})
                    rows.append(row)
    return pd.DataFrame(rows)


def design_group_columns_of(knee: pd.DataFrame) -> list[str]:
    """The group keys of a design_knees() table (the columns before `knee_status`)."""
    cols = list(knee.columns)
    return cols[:cols.index("knee_status")]


def headline_markdown(table: pd.DataFrame) -> str:
    """A headline() table as GitHub markdown."""
    head = "| " + " | ".join(map(str, table.columns)) + " |"
    sep = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(str(v) for v in r) + " |" for r in table.itertuples(index=False)]
    return "\n".join([head, sep, *body]) + "\n"
