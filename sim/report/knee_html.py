"""The report's knee tables: the summary the page opens on (one row per line and mix, one column per table
count), the tiers, the grid's full knee table and a knee sweep's table of searches. The first screen's cells (the
summary, the tiers) are short (`KneeNotes`: a value with its 95 % band, or a bound, or `undecided`; the why in
their hover and footnotes); the long tables' are ``labels.knee_cell``'s, a value or a status with its bound."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..knee.status import gain_text, knee_short_text, knee_text
from .aggregate import SUCCESS_THRESHOLD, format_value, knee_commits, varying_parameters
from .labels import axis_label, knee_cell, order_key
from .markup import DASH, Cell, dur, e, num, pct, table, val

#: what a status means, said under every table that shows one
STATUS_NOTE = ("A knee reads <em>value [95 % band] c/s</em>: commits/s where success (committed / window "
               "transactions that began to commit; for a mix, VO success too) crosses "
               f"{SUCCESS_THRESHOLD:.0%}. Otherwise its status: <code>below_range</code>, the knee lies below its "
               "bound (the lightest load run already fails, or the knee's CI starts below it); "
               "<code>above_range</code>, above its bound (the heaviest load run still passes, or the CI ends past "
               "it); <code>undecided</code>, the runs bound it on neither side. "
               "<code>sim knee CONFIG</code> searches one cell's knee by placing its own runs.")
#: the first screen's wording of the same (`knee_short_text`)
SHORT_NOTE = ("A knee reads <em>value [95 % band] c/s</em>: commits/s where success (committed / window "
              "transactions that began to commit; for a mix, VO success too) crosses "
              f"{SUCCESS_THRESHOLD:.0%}. <em>&lt; x c/s</em>: below range, the knee lies below x (the lightest load "
              "run already fails, or the knee's CI starts below it); <em>&gt; x c/s</em>: above range, the knee "
              "lies above x (the heaviest load run still passes, or the CI ends past it); <em>undecided</em>: the "
              "runs bound it on neither side. Hover a cell for its full reading (and the <code>sim knee</code> "
              "command that bounds it); a numbered note says why a knee is not a value.")


#: where a grid report's knee came from (`knee_commands.with_searched`), said in its cell's hover
_SOURCES = {"search": " (from a knee search)", "grid": " (read off the grid)"}


class KneeNotes:
    """The first screen's knee cells (`knee_short_text`), each with its full reading as its hover (`knee_text`,
    where it came from, the command that bounds it) and, where the short text leaves out why it is no value
    (`knee_reason`), the mark of a numbered note saying why; cells with the same why share one note (4c's grid
    leaves 20 cells with an unbounded CI)."""

    def __init__(self):
        self.notes: dict[str, int] = {}     # a note's text -> its number, in the order cells first show it

    def cell(self, row) -> Cell:
        """``row``'s knee (a knee table's row) as a cell."""
        source = _SOURCES.get(str(row.get("knee_source")), "")
        command = row.get("knee_command", "")
        title = knee_text(row.drop(labels="knee_command", errors="ignore")) + source + (
            f"; to bound it: {command}" if isinstance(command, str) and command else "")
        why = str(row.get("knee_reason", "") or "") if str(row.get("knee_status")) != "ok" else ""
        if not why:
            return Cell(knee_short_text(row), title)
        n = self.notes.setdefault(why + (source if row.get("knee_source") == "search" else ""), len(self.notes) + 1)
        return Cell(knee_short_text(row), title, f"knee-note-{n}", str(n))

    def html(self) -> str:
        """The numbered notes, in the order their cells first appear."""
        if not self.notes:
            return ""
        items = "".join(f'<li id="knee-note-{n}" value="{n}">{e(text)}</li>' for text, n in self.notes.items())
        return f'<ol class="notes">{items}</ol>'


def sorted_rows(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``df``'s rows in page order of ``keys`` (providers as the experiments list them, mixes from FA only)."""
    if df.empty or not keys:
        return df
    order = sorted(range(len(df)), key=lambda i: tuple(order_key(k, df[k].iloc[i]) for k in keys))
    return df.iloc[order]


def knee_summary(k: pd.DataFrame, keys: list[str], x: str, notes: KneeNotes) -> str:
    """The page's first table: a row per combination of ``keys`` other than ``x``, a column per ``x`` value
    (tables), each cell the knee or its bound, short (`KneeNotes.cell`). ``k``: `aggregate.knee_commits`' table."""
    rest = [c for c in keys if c != x]
    xs = sorted(k[x].dropna().unique().tolist(), key=lambda v: order_key(x, v))
    head = {v: _x_label(x, v) for v in xs}
    rows = []
    groups = k.groupby(rest, dropna=False, sort=False) if rest else [((), k)]
    for key, g in sorted(groups, key=lambda kg: tuple(order_key(c, v) for c, v in zip(rest, _tuple(kg[0])))):
        key = _tuple(key)
        cells = {v: notes.cell(r) for v, (_, r) in zip(g[x], g.iterrows())}
        rows.append({**{axis_label(c): format_value(v) for c, v in zip(rest, key)},
                     **{head[v]: cells.get(v, "not run") for v in xs}})
    return table(pd.DataFrame(rows), left={axis_label(c) for c in rest}, cls="knees")


def _tuple(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _x_label(x: str, v) -> str:
    if x == "num_tables":
        return f"{format_value(v)} table{'' if v == 1 else 's'}"
    return f"{axis_label(x)} {format_value(v)}"


def tiers_html(tiers: pd.DataFrame, k: pd.DataFrame, layout: dict, notes: KneeNotes) -> str:
    """The tiers: per line and mix, the knee at the fewest and at the most tables (the same cells as the summary,
    looked up by the tiers table's table counts) and the gain, or why there is none."""
    keys = [c for c in (layout["hue"], layout["facet"]) if c]
    x = layout["x"]
    cells = {tuple(format_value(r[c]) for c in keys + [x]): r for _, r in k.iterrows()}
    one_single, one_multi = (tiers[f"{t}_tables"].nunique() == 1 for t in ("single", "multi"))
    rows = []
    for _, t in sorted_rows(tiers, keys).iterrows():
        d = {axis_label(c): format_value(t[c]) for c in keys}
        ends = {}
        for tag, one in (("single", one_single), ("multi", one_multi)):
            n = t[f"{tag}_tables"]
            r = cells.get(tuple(format_value(t[c]) for c in keys) + (format_value(n),))
            ends[tag] = r
            cell = notes.cell(r) if r is not None else Cell("not run")
            head = f"knee at {_x_label(x, tiers[f'{tag}_tables'].iloc[0])}" if one else f"{tag}-table knee"
            d[head] = cell if one else Cell(f"{_x_label(x, n)}: {cell.text}", cell.title, cell.note, cell.mark)
        d["gain"] = _gain(t, ends, x)
        rows.append(d)
    return table(pd.DataFrame(rows), left={axis_label(c) for c in keys}, cls="knees")


def _gain(t: pd.Series, ends: dict, x: str) -> str:
    """The multi-table knee over the single-table one, or which end has no value."""
    if "gain_status" in t.index:   # the tiers table's own gain, with its band or bound (`sim.knee.status`)
        return gain_text(t)
    g = t.get("gain", np.nan)
    if isinstance(g, (int, float, np.floating)) and math.isfinite(g) and all(
            r is not None and _status(r) == "ok" for r in ends.values()):
        return f"{g:.1f}x"
    why = [f"{_x_label(x, t[f'{tag}_tables'])} {_status(r) if r is not None else 'not run'}"
           for tag, r in ends.items() if r is None or _status(r) != "ok"]
    return f"n/a: {', '.join(why)}" if why else "n/a: no value at the knee"


def _status(r) -> str:
    return str(r.get("knee_status", r.get("status", "")))


def knee_table_html(knee: pd.DataFrame, keys: list[str], load: str) -> str:
    """The grid's knee table with every column (knee.csv): the knee, the offered rate at it with its CI, the load
    value, success and latencies at the knee, and the highest throughput regardless of success."""
    k = knee_commits(knee)
    rows = []
    for _, r in sorted_rows(k, keys).iterrows():
        ok = str(r["knee_status"]) == "ok"
        d = {axis_label(c): format_value(r[c]) for c in keys}
        d["knee (c/s) [95 % CI]"] = knee_cell(r)
        d["offered (arrivals/s) [95 % CI]"] = (f"{num(r['knee_offered_cps'])} [{num(r['knee_offered_cps_low'])}, "
                                               f"{num(r['knee_offered_cps_high'])}]" if ok else DASH)
        d[f"at {axis_label(load)}"] = val(r["knee_inter_arrival"]) if ok else DASH
        at = {"success": ("knee_success_rate", pct), "VO success": ("knee_vo_success_rate", pct),
              "FA mean": ("fa_latency_mean_ms", dur), "VO mean": ("vo_latency_mean_ms", dur),
              "FA P99": ("fa_p99_ms", dur), "VO P99": ("vo_p99_ms", dur)}
        for title, (col, f) in at.items():
            d[title] = f(r[col]) if ok else DASH
        d["max throughput (c/s)"] = num(r["max_throughput_cps"])
        d[f"max at {axis_label(load)}"] = val(r["max_throughput_inter_arrival"])
        command = r.get("knee_command", "")
        d["to bound or narrow it"] = (command if isinstance(command, str) and command else
                                      "bounded" if ok else "no command: the sweep's base config is not known")
        rows.append(d)
    note = (f"<p>{STATUS_NOTE} The offered rate is the fitted crossing in arrivals/s, with its Fieller 95 % CI; "
            "the knee in c/s is the throughput at it (least squares over the fit's runs), its band the offered "
            "CI scaled alike. Success and latencies are at the knee, over the same runs. "
            f"{DASH}: no knee, so no value at it (the status says why), or no VO transactions (FA only). The last "
            "two columns give the highest throughput seen, regardless of success.</p>")
    return note + table(pd.DataFrame(rows), left={axis_label(c) for c in keys} | {"to bound or narrow it"})


#: a knee search's columns beside its knee: title, (knees.parquet column, cell format)
_SEARCH_COLUMNS = {"CI half-width": ("ci95_halfwidth_rel", pct), "success": ("success_rate", pct),
                   "VO success": ("vo_success_rate", pct), "mean latency": ("commit_latency_mean_ms", dur),
                   "P99": ("commit_latency_p99_ms", dur)}


def knee_search_html(knees: pd.DataFrame, searches: str) -> str:
    """The long table of a knee sweep: one row per cell, its search's knee, CI and the metrics at the knee."""
    keys = varying_parameters(knees)     # a swept path that mirrors a standard column is no key of its own
    k = knee_commits(knees)
    rows = []
    for _, r in sorted_rows(k, keys).iterrows():
        d = {axis_label(c): format_value(r[c]) for c in keys}
        d["status"] = r["status"]
        d["knee (c/s) [95 % CI]"] = knee_cell(r)
        d["knee (arrivals/s) [95 % CI]"] = (f"{num(r['offered_cps'])} [{num(r['offered_cps_low'])}, "
                                            f"{num(r['offered_cps_high'])}]" if r["offered_cps"] == r["offered_cps"]
                                            else DASH)
        d.update({title: f(r[col]) for title, (col, f) in _SEARCH_COLUMNS.items()})
        rows.append({**d, "runs": int(r["runs"])})
    head = (f"<p>{e(searches)} (<a href=\"../knees.csv\">knees.csv</a>). The knee is the highest offered "
            "rate at which success (and VO success for a mix) is at least the threshold, estimated where the "
            "success curve crosses it by a binomial (logistic) regression of success on log rate over independent "
            "full-length runs around it, with a Fieller 95 % CI (over-dispersion estimated from the runs). "
            "Throughput and latencies are read off least-squares lines through the same runs, at the knee. "
            f"{DASH}: no value (no knee, or no VO transactions).</p>")
    return head + table(pd.DataFrame(rows), left={axis_label(c) for c in keys} | {"status"})
