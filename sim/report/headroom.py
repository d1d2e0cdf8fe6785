"""A trace's headroom as the reader meets it (docs/knee.md, "Headroom"): how many times its load the history takes
before success falls below the threshold, which table breaks first and at what k, per table.

`headroom_lines` is `sim knee`'s first screen (from its knee.json document); `headroom_sections` the first
screen of a headroom sweep's report (a `knee:` sweep of `workload.trace.rate_scale`: its knees table and
`knee_tables.parquet`), with the figure of every table's k (`plots.headroom`)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..knee.headroom import MIN_TABLE_COMMITS, WHOLE, k_text
from ..knee.param import SCALE_PARAM
from ..results_io import atomic_write_csv
from .aggregate import varying_parameters
from .markup import e as _e
from .markup import figures as _figures
from .markup import table as _table

#: tables listed on `sim knee`'s first screen (the rest are in knee.json)
SHOWN = 12


def is_headroom(knees: pd.DataFrame) -> bool:
    """Whether a knees table is a headroom sweep's (every search moved a trace's rate_scale)."""
    return "param" in knees.columns and len(knees) > 0 and (knees["param"] == SCALE_PARAM).all()


def headline(rec: dict, threshold: float) -> str:
    """`this history takes up to 2.41x its load [2.30, 2.52] ...`, from a knee record (or knee.json's `knee`)."""
    status, thr = rec.get("knee_status", "undecided"), f"{100 * threshold:g} %"
    if status == "ok":
        lo, hi = rec.get("rate_scale_ci95") or (rec.get("rate_scale_low"), rec.get("rate_scale_high"))
        where = rec.get("binding_table") or ""
        first = f"; the first table to break: {where}" if where else ""
        return (f"this history takes up to {_k(rec['rate_scale'])}x its load [{_k(lo)}, {_k(hi)}] (95 % CI) before "
                f"success falls below {thr}{first}")
    reason = rec.get("knee_reason") or ""
    if status == "above_range":
        return f"this history takes more than its load run (above_range): no table fell below {thr}"
    if status == "below_range":
        return f"success falls below {thr} at the least load run (below_range){': ' + reason if reason else ''}"
    return f"undecided: {reason or 'the search bounded no crossing'}"


def headroom_lines(doc: dict) -> list[str]:
    """`sim knee`'s first screen for a trace: the headline, then each table's k (the first `SHOWN`)."""
    tables = doc["tables"]
    lines = [f"headroom: {headline(doc['knee'], doc['threshold'])}",
             f"per table: k times the history's load where its success falls below {100 * doc['threshold']:g} % "
             "[95 % CI]; its commits in a run's window at 1x"]
    width = max(len(str(t["table"])) for t in tables[:SHOWN + 1])
    for t in tables[:SHOWN + 1]:
        lines.append(f"  {str(t['table']):<{width}}  {_row_text(t):<26}  {t['window_commits']:>9,.0f}")
    if len(tables) > SHOWN + 1:
        lines.append(f"  ... {len(tables) - SHOWN - 1} more tables in knee.json")
    return lines


def _row_text(t: dict) -> str:
    if not t["checked"]:
        return f"not checked (< {MIN_TABLE_COMMITS} commits)"
    return k_text(t)


def _k(v) -> str:
    return "\u2013" if v is None or not math.isfinite(v) else f"{v:.3g}"


def headroom_sections(knees: pd.DataFrame, results_dir: Path, out: Path) -> list[tuple[str, str, str]]:
    """A headroom sweep's first screen: per cell the headroom and the table that breaks first; every table's k
    per cell (`headroom.csv`) and its figure."""
    from . import plots
    keys = [k for k in varying_parameters(knees) if k in knees.columns]
    cells = pd.DataFrame({k: knees[k].astype(str) for k in keys})
    thr = float(knees["threshold"].iloc[0])
    cells["headroom (k [95 % CI])"] = [headline(r, thr) for r in knees.to_dict("records")]
    path = results_dir / "knee_tables.parquet"
    tables = pd.read_parquet(path) if path.is_file() else pd.DataFrame()
    body = _table(cells, left=set(keys) | {"headroom (k [95 % CI])"})
    if len(tables):
        tables = tables.assign(k_text=[("not checked" if not r["checked"] else k_text(r))
                                       for r in tables.to_dict("records")])
        atomic_write_csv(out / "headroom.csv", tables)
        figs = plots.headroom_figures(tables, keys, out / "figures")
        body += _figures(figs, out) + _table(_wide(tables, keys), left=set(keys) | {"table"})
    cap = (f'<p class="cap">k: times the history\'s load (its gaps divided by k; docs/knee.md, "Headroom") where '
           f"a table's success, or the whole history's ({_e(WHOLE)}), falls below {100 * thr:g} %. A table with "
           f"fewer than {MIN_TABLE_COMMITS} commits in a full run's window at 1x is not checked. Files: "
           '<a href="headroom.csv">headroom.csv</a>, <a href="../knees.csv">knees.csv</a>.</p>')
    return [("headroom", "Headroom: how many times its load the history takes", body + cap)]


def _wide(tables: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per table, one column per cell: its k as read."""
    if not keys:
        return tables[["table", "k_text"]].rename(columns={"k_text": "k"})
    label = tables[keys].astype(str).agg(", ".join, axis=1)
    wide = tables.assign(cell=label).pivot_table(index=["table_rank", "table"], columns="cell", values="k_text",
                                                 aggfunc="first", sort=False)
    return wide.reset_index().drop(columns="table_rank")
