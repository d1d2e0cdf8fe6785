"""The writers report (issue 19's conditional-write benchmark, cas-bench): successes/s, attempts/s and the failure
share of attempts against the number of writers (threads), one line per provider, means over replications with
their 95 % CIs.

A sweep is a writers sweep when `workload.writers.count` takes more than one value. Every other parameter that
varies and that the provider and the writer count do not determine (a design, a commit interval) splits the
lines into facets, so that no point pools different configurations. No plotting here (plots.writers_figures).
"""

from __future__ import annotations

import math

import pandas as pd

from .aggregate import _unplaced_parameters, aggregate, format_value, ok_rows
from .designs import PROVIDER_ORDER, ordered
from .labels import fmt_number

THREADS = "workload.writers.count"   # the swept column; else the standard `writers` column (the same count)
#: the report's metrics: results column -> table heading
WRITER_METRICS = {"throughput_cps": "success/s", "attempts_cps": "attempts/s",
                  "attempt_failure_share": "failure share"}


def threads_column(df: pd.DataFrame) -> str:
    """The writer count's column: the swept `workload.writers.count`, else the standard `writers` one."""
    return THREADS if THREADS in df.columns else "writers"


def is_writers_sweep(df: pd.DataFrame) -> bool:
    """True when the results table sweeps the number of writers."""
    col = threads_column(df)
    return col in df.columns and df[col].nunique(dropna=True) > 1


def provider_column(df: pd.DataFrame) -> str:
    """The swept `storage.provider` column, else the standard `provider` one."""
    return "storage.provider" if "storage.provider" in df.columns else "provider"


def writers_keys(df: pd.DataFrame) -> list[str]:
    """The grouping of the writers table: the provider, the facets, the writer count (last)."""
    placed = [provider_column(df), threads_column(df)]
    return [placed[0], *_unplaced_parameters(df, placed), placed[1]]


def writers_table(results: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Means over the finished replications and `<metric>_ci95` (Student t) of WRITER_METRICS per provider x
    facets x writers, providers in the report's order; and the grouping keys (`writers_keys`)."""
    ok = ok_rows(results)
    keys = writers_keys(ok)
    agg = aggregate(ok, keys, [m for m in WRITER_METRICS if m in ok.columns])
    prov = keys[0]
    rank = {p: i for i, p in enumerate(ordered(agg[prov].dropna().unique().tolist(), PROVIDER_ORDER))}
    agg = agg.assign(_o=agg[prov].map(rank)).sort_values(["_o", *keys[1:]], kind="stable")
    return agg.drop(columns="_o").reset_index(drop=True), keys


def _cell(mean, ci, share: bool) -> str:
    """'mean ± CI half-width' ('mean' alone with one replication; '–' when undefined)."""
    def f(v):
        return f"{100 * v:.1f} %" if share else fmt_number(v)
    if mean is None or not math.isfinite(float(mean)):
        return "\u2013"
    return f(mean) if ci is None or not math.isfinite(float(ci)) else f"{f(mean)} \u00b1 {f(ci)}"


def writers_cells(agg: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The table shown: per provider x facets x writers, each metric as 'mean ± 95 % CI half-width'."""
    rows = []
    for _, r in agg.iterrows():
        d = {("provider" if k == keys[0] else "writers" if k == keys[-1] else k): format_value(r[k]) for k in keys}
        for m, head in WRITER_METRICS.items():
            if m in agg.columns:
                d[head] = _cell(r[m], r.get(f"{m}_ci95"), m.endswith("_share"))
        d["replications"] = int(r["n_reps"])
        rows.append(d)
    return pd.DataFrame(rows)


def markdown(cells: pd.DataFrame) -> str:
    """A GitHub markdown table of `cells` (strings)."""
    cols = list(cells.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in cells.itertuples(index=False)]
    return "\n".join(lines) + "\n"
