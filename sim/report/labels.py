"""The report's words and numbers: metric titles and descriptions, axis labels, cell and tick formats, facet
labels and file-name slugs. Shared by the figures (plots/) and the HTML tables (html.py); no plotting here."""

from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np

from .aggregate import format_value
from .designs import PROVIDER_ORDER

try:        # the one wording of a knee and its status (issue 28), where the knee package has it
    from ..knee.status import knee_text
except ImportError:
    knee_text = None

_DESCRIPTIONS = {
    "success_rate": ("Success rate = committed / window transactions that began to commit (one still in its "
                     "runtime when the drain ended is left out, and counted in the unfinished share)"),
    "success_rate_finished": "Success rate of finished = committed / (committed + aborted) (unfinished left out)",
    "throughput_cps": "Throughput = commits per second over the measurement window",
    "offered_cps": "Offered rate = arrivals per second",
    "commit_latency_mean_ms": "Mean commit latency (runtime end to successful CAS; committed transactions only)",
    "commit_latency_p50_ms": "Median commit latency (runtime end to successful CAS; committed transactions only)",
    "commit_latency_p95_ms": "P95 commit latency (runtime end to successful CAS; committed transactions only)",
    "commit_latency_p99_ms": "P99 commit latency (runtime end to successful CAS; committed transactions only)",
    "catalog_conflict_share": "Share of conflicts that were catalog conflicts = catalog / (catalog + table)",
    "unfinished_share": "Share of window transactions still unfinished when the drain limit ended the run",
    "unfinished_in_runtime_share": ("Share of window transactions still in their runtime when the drain limit "
                                    "ended the run (left out of the success rate)"),
}

_TITLES = {
    "success_rate": "Success rate",
    "success_rate_finished": "Success rate of finished",
    "throughput_cps": "Throughput (commits/s)",
    "offered_cps": "Offered rate (arrivals/s)",
    "commit_latency_mean_ms": "Mean commit latency",
    "commit_latency_p50_ms": "P50 commit latency",
    "commit_latency_p95_ms": "P95 commit latency",
    "commit_latency_p99_ms": "P99 commit latency",
    "catalog_conflict_share": "Catalog share of conflicts",
    "unfinished_share": "Unfinished share",
    "unfinished_in_runtime_share": "Share still in its runtime",
}

_AXIS_LABELS = {
    "inter_arrival_ms": "inter-arrival (ms)",
    "num_tables": "tables",
    "table_rank": "table rank",
    "catalog_latency_ms": "catalog CAS latency (ms)",
    "service_latency_ms": "lock or log store latency (ms)",
    "fast_append_ratio": "FA ratio",
}


# --------------------------------------------------------------------------------------------
# metric names
# --------------------------------------------------------------------------------------------

def base_metric(metric: str) -> str:
    """The metric without its operation prefix: fa_success_rate -> success_rate."""
    for p in ("fa_", "vo_"):
        if metric.startswith(p):
            return metric[len(p):]
    return metric


def op_of(metric: str) -> str:
    """'FA' / 'VO' for a per-operation metric, '' for one over all transactions."""
    return {"fa_": "FA", "vo_": "VO"}.get(metric[:3], "")


def lower_first(t: str) -> str:
    """'Success rate' -> 'success rate' inside a sentence; acronyms ('P99 ...') stay."""
    return t[0].lower() + t[1:] if len(t) > 1 and t[1].islower() else t


def metric_title(metric: str) -> str:
    op = op_of(metric)
    t = _TITLES.get(base_metric(metric), base_metric(metric).replace("_", " "))
    return f"{op} {lower_first(t)}" if op else t


def metric_description(metric: str) -> str:
    op = op_of(metric)
    d = _DESCRIPTIONS.get(base_metric(metric), metric_title(metric))
    return f"{d}, {op} transactions only" if op else d


def axis_label(col: str) -> str:
    return _AXIS_LABELS.get(col, col)


def kind(metric: str) -> str:
    """How a metric is shown: 'rate' and 'share' in %, 'latency' in ms / s (log colours), else 'number'."""
    m = base_metric(metric)
    if m.endswith(("success_rate", "success_rate_finished")):
        return "rate"
    if "latency" in m and m.endswith("_ms"):
        return "latency"
    if m.endswith("_share"):
        return "share"
    return "number"


# --------------------------------------------------------------------------------------------
# number formats
# --------------------------------------------------------------------------------------------

def fmt_percent(v: float) -> str:
    if v >= 0.9995:
        return "100"
    return f"{100 * v:.1f}"


def fmt_duration(ms: float) -> str:
    if ms < 1000:
        return f"{ms:.0f}ms"
    s = ms / 1000
    if s < 10:
        return f"{s:.2f}s"
    if s < 100:
        return f"{s:.1f}s"
    return f"{s:.0f}s"


def fmt_tick(ms: float) -> str:
    """Axis tick label of a duration in ms: 200ms, 1.5s, 20s."""
    return f"{ms:g}ms" if ms < 1000 else f"{ms / 1000:g}s"


def fmt_number(v: float) -> str:
    a = abs(v)
    if a < 10:
        return f"{v:.2f}"
    if a < 100:
        return f"{v:.1f}"
    return f"{v:.0f}"


_DEFAULT_FMT = {"rate": fmt_percent, "share": fmt_percent, "latency": fmt_duration, "number": fmt_number}


def cell_formatter(metric: str, fmt: str | Callable[[float], str] | None) -> Callable[[float], str]:
    """Label of a heatmap cell: ``fmt`` (a format spec or a callable), else the metric kind's default."""
    if fmt is None:
        return _DEFAULT_FMT[kind(metric)]
    if callable(fmt):
        return fmt
    return lambda v: format(v, fmt)


def value_unit_note(metric: str) -> str:
    k = kind(metric)
    if k in ("rate", "share"):
        return "values in %"
    if k == "latency":
        return "values in ms below 1 s, else s"
    return ""


# --------------------------------------------------------------------------------------------
# facets
# --------------------------------------------------------------------------------------------

def slug(parts: dict) -> str:
    """File-name fragment for a facet combination."""
    if not parts:
        return ""
    s = "_".join(f"{k.split('.')[-1]}-{format_value(v)}" for k, v in parts.items())
    return "__" + re.sub(r"[^A-Za-z0-9.\-_]+", "-", s)


def facet_label(parts: dict) -> str:
    return ", ".join(f"{k} = {format_value(v)}" for k, v in parts.items())


def order_key(col: str, value) -> tuple:
    """Where a value of ``col`` sorts on the page: providers in the experiments' order (fastest first), mixes from
    FA only down, numbers ascending, anything else by its text."""
    if col == "provider" and value in PROVIDER_ORDER:
        return (0, PROVIDER_ORDER.index(value), "")
    if isinstance(value, (int, float, np.integer, np.floating)) and not math.isnan(value):
        return (0, -float(value) if col == "fast_append_ratio" else float(value), "")
    return (1, 0.0, str(value))


# --------------------------------------------------------------------------------------------
# the knee
# --------------------------------------------------------------------------------------------

def knee_cell(row) -> str:
    """A knee as the report's long tables write it (the first screen's cells are short: `knee_html.KneeNotes`):
    commits/s at the knee with its 95 % band, ``12.3 [11.0, 13.1] c/s``, or its status with its bound,
    ``below_range (< 0.40 c/s)``, ``above_range (> 52.1 c/s)``, ``undecided``. ``row``: a knee row with ``knee_cps``, ``knee_cps_low`` / ``_high``
    (`aggregate.knee_commits`), ``knee_status`` (a grid's) or ``status`` (a search's), and ``knee_bound_cps``
    where the status has a bound. The knee package's ``knee_text`` where it exists, else the same wording here."""
    if knee_text is not None:   # the command that bounds it has a column of its own (`knee_table_html`)
        return knee_text(row.drop(labels="knee_command", errors="ignore") if hasattr(row, "drop") else row)
    status = str(row.get("knee_status", row.get("status", "")))
    if status == "ok":
        v, lo, hi = (_float(row.get(c)) for c in ("knee_cps", "knee_cps_low", "knee_cps_high"))
        if not math.isfinite(v):
            return "ok, no throughput at the knee"
        low = fmt_number(lo) if math.isfinite(lo) and lo > 0 else "0"
        high = fmt_number(hi) if math.isfinite(hi) else "\u221e"
        return f"{fmt_number(v)} [{low}, {high}] c/s"
    bound = _float(row.get("knee_bound_cps"))
    side = {"below_range": "<", "above_range": ">"}.get(status)
    return f"{status} ({side} {fmt_number(bound)} c/s)" if side and math.isfinite(bound) else status


def _float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan
